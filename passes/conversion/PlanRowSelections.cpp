//===- PlanRowSelections.cpp - Rows a graph keeps of a computed tensor ----===//
//
// Hugging Face's logits_to_keep=1 slices the last position's hidden state
// before lm_head, and a decode step's graph keeps the same slice of its
// one position. The grid does not slice: a slice that keeps every element
// is dropped, and a range of positions moves past the row-wise ops after
// it (projections and norms, which treat each position alike) to where the
// graph returns it. The grid then computes every position and the host
// reads back the kept ones (planReturn's index map): the same values, for
// the cycles of the rows it drops.
//
//===----------------------------------------------------------------------===//
#include "TfmToMeshPlanner.h"

using namespace mlir;
using namespace wafer;

namespace {

bool keepsEverything(tfm::SliceOp slice) {
  ArrayRef<int64_t> shape = slice.getInput().getType().getShape();
  for (auto [d, size] : llvm::enumerate(shape))
    if (slice.getStarts()[d] != 0 || slice.getEnds()[d] != size ||
        slice.getSteps()[d] != 1)
      return false;
  return true;
}

/// `user` (a row-wise op reading `slice`) computed on every row of the
/// slice's input, then sliced; null when `user` is no such op.
Value onEveryRow(Operation *user, tfm::SliceOp slice, tfm::AxisRange range) {
  auto linear = dyn_cast<tfm::LinearOp>(user);
  auto norm = dyn_cast<tfm::RmsNormOp>(user);
  if (!(linear && linear.getInput() == slice.getResult()) &&
      !(norm && norm.getInput() == slice.getResult()))
    return nullptr;
  Value whole = slice.getInput();
  auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
  SmallVector<int64_t> shape(resultType.getShape());
  shape[range.axis] =
      cast<RankedTensorType>(whole.getType()).getShape()[range.axis];
  auto wholeType = resultType.clone(shape);
  OpBuilder builder(user);
  Location loc = user->getLoc();
  Value computed;
  if (linear) {
    auto op = builder.create<tfm::LinearOp>(loc, wholeType, whole,
                                            linear.getWeight());
    op.setTransposeWeight(linear.getTransposeWeight());
    computed = op;
  } else {
    computed = builder.create<tfm::RmsNormOp>(
        loc, wholeType, whole, norm.getWeight(), norm.getEpsilonAttr());
  }
  return tfm::createAxisSlice(builder, loc, computed, range.axis, range.start,
                              range.end);
}

} // namespace

void planning::moveRowSelections(func::FuncOp func) {
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<tfm::SliceOp> slices;
    func.walk([&](tfm::SliceOp op) { slices.push_back(op); });
    for (tfm::SliceOp slice : slices) {
      if (keepsEverything(slice)) {
        slice.replaceAllUsesWith(slice.getInput());
        slice.erase();
        changed = true;
        continue;
      }
      std::optional<tfm::AxisRange> range = tfm::axisRangeOf(slice);
      if (!range || range->axis + 1 == slice.getType().getRank() ||
          isParameterOrPart(slice.getInput()) ||
          isa<BlockArgument>(slice.getInput()))
        continue;
      for (Operation *user : llvm::make_early_inc_range(slice->getUsers()))
        if (Value kept = onEveryRow(user, slice, *range)) {
          user->replaceAllUsesWith(ValueRange{kept});
          user->erase();
          changed = true;
        }
      if (slice->use_empty())
        slice.erase();
    }
  }
}
