//===- RaiseProjections.cpp - tfm-raise-transformer's projections ---------===//
//
// The embedding, the linear projections, and the parts of a fused
// projection (each the linear of a range of the fused weight).
//
//===----------------------------------------------------------------------===//
#include "RaiseMatchers.h"
#include "RaisePatterns.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "tfm-raise-transformer"

using namespace mlir;
using namespace wafer;
using namespace wafer::raise;

namespace {

/// The range of the last axis a slice keeps, if it keeps every other whole.
std::optional<tfm::AxisRange> lastAxisRange(Operation *op) {
  auto slice = dyn_cast<tfm::SliceOp>(op);
  std::optional<tfm::AxisRange> range =
      slice ? tfm::axisRangeOf(slice) : std::nullopt;
  if (!range || range->axis + 1 != int64_t(shapeOf(slice.getInput()).size()))
    return std::nullopt;
  return range;
}

} // namespace

LogicalResult raise::raised(PatternRewriter &rewriter, Operation *anchor,
                            Operation *op) {
  LLVM_DEBUG(llvm::dbgs() << "raised " << op->getName() << " at "
                          << anchor->getLoc() << "\n");
  rewriter.replaceOp(anchor, op->getResults());
  return success();
}

LogicalResult raise::raiseEmbed(tfm::GatherOp gather, PatternRewriter &b) {
  if (!isWeight(gather.getInput()) || gather.getAxis() != 0 ||
      shapeOf(gather.getInput()).size() != 2)
    return failure();
  return raised(b, gather,
                b.create<tfm::EmbedOp>(gather.getLoc(), gather.getType(),
                                       gather.getInput(), gather.getIndices()));
}

LogicalResult raise::raiseLinear(tfm::MatMulOp matmul, PatternRewriter &b) {
  Value weight = matmul.getRhs();
  bool transposed = false;
  if (auto t = weight.getDefiningOp<tfm::TransposeOp>();
      t && isWeight(t.getInput()) &&
      t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    weight = t.getInput();
    transposed = true;
  }
  if (!isWeight(weight) || shapeOf(weight).size() != 2 ||
      shapeOf(matmul.getLhs()).size() < 2 || isParameter(matmul.getLhs()))
    return failure();
  auto linear = b.create<tfm::LinearOp>(matmul.getLoc(), matmul.getType(),
                                        matmul.getLhs(), weight);
  if (transposed)
    linear.setTransposeWeight(true);
  return raised(b, matmul, linear);
}

/// A part of a fused projection (Phi-3's qkv_proj split into q, k and v,
/// its gate_up_proj chunked in two): a range of the last axis of a
/// linear's result, bias added or not, is the linear of that range of the
/// weight's output dimension (plus that range of the bias). Only where
/// every use is such a part, so that the fused projection dies.
LogicalResult raise::raiseProjectionPart(tfm::SliceOp slice,
                                         PatternRewriter &b) {
  std::optional<tfm::AxisRange> range = lastAxisRange(slice);
  Value fused = slice.getInput();
  auto partsOnly = [](Value v) {
    return llvm::all_of(v.getUsers(), [](Operation *user) {
      return lastAxisRange(user).has_value();
    });
  };
  if (!range || !partsOnly(fused))
    return failure();
  // QWen2-style biases: a parameter vector as long as the last axis.
  Value bias;
  auto linear = fused.getDefiningOp<tfm::LinearOp>();
  if (fused.getDefiningOp<tfm::AddOp>()) {
    for (auto [value, parameter] : operandOrders<tfm::AddOp>(fused))
      if (value.getDefiningOp<tfm::LinearOp>() && isParameter(parameter) &&
          shapeOf(parameter) == shapeOf(fused).take_back()) {
        linear = value.getDefiningOp<tfm::LinearOp>();
        bias = parameter;
      }
    if (!linear || !linear->hasOneUse())
      return failure();
  }
  if (!linear || !isWeight(linear.getWeight()))
    return failure();
  // Named after the node that cut the part and the part's range, so that
  // the parts of one Split differ in the stats and the traces.
  Location loc = slice.getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    loc = NameLoc::get(
        b.getStringAttr(llvm::formatv("{0}[{1}:{2}]", name.getName().str(),
                                      range->start, range->end)
                            .str()),
        name.getChildLoc());
  // The same range of dimension `axis` of a parameter.
  auto part = [&](Value parameter, int64_t axis) -> Value {
    return tfm::createAxisSlice(b, loc, parameter, axis, range->start,
                                range->end);
  };
  Value weight = part(linear.getWeight(), linear.getTransposeWeight() ? 0 : 1);
  auto partType = cast<RankedTensorType>(slice.getType());
  auto projected =
      b.create<tfm::LinearOp>(loc, partType, linear.getInput(), weight);
  projected.setTransposeWeight(linear.getTransposeWeight());
  if (!bias)
    return raised(b, slice, projected);
  return raised(b, slice,
                b.create<tfm::AddOp>(loc, partType, projected, part(bias, 0)));
}
