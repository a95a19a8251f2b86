//===- TfmDialect.cpp - Transformer graph dialect -------------------------===//
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace wafer::tfm;

#include "tfm/TfmDialect.cpp.inc"

void TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfm/TfmOps.cpp.inc"
      >();
}

FailureOr<SmallVector<int64_t>>
wafer::tfm::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    result[i] = l == 1 ? r : l;
  }
  return result;
}

static bool hasStaticShape(Value v) {
  return cast<RankedTensorType>(v.getType()).hasStaticShape();
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  if (!hasStaticShape(getResult()))
    return emitOpError("result must have a static shape");
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult MatMulOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!lhs.hasStaticShape() || !rhs.hasStaticShape())
    return emitOpError("operands must have static shapes");
  if (lhs.getRank() < 1 || lhs.getRank() > 2 || rhs.getRank() != 2)
    return emitOpError("supports [M, K] or [K] times [K, N]; got ranks ")
           << lhs.getRank() << " and " << rhs.getRank();
  int64_t k = lhs.getShape().back();
  if (k != rhs.getDimSize(0))
    return emitOpError("contraction sizes differ: ")
           << k << " vs " << rhs.getDimSize(0);
  SmallVector<int64_t> expected;
  if (lhs.getRank() == 2)
    expected.push_back(lhs.getDimSize(0));
  expected.push_back(rhs.getDimSize(1));
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be [")
           << llvm::make_range(expected.begin(), expected.end()) << "]";
  return success();
}

LogicalResult TransposeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> perm = getPermutation();
  if (int64_t(perm.size()) != input.getRank())
    return emitOpError("permutation has ")
           << perm.size() << " entries for a rank-" << input.getRank()
           << " input";
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return emitOpError("permutation is not a permutation of 0..")
             << perm.size() - 1;
    seen[p] = true;
    if (result.getDimSize(i) != input.getDimSize(p))
      return emitOpError("result dimension ")
             << i << " must be " << input.getDimSize(p);
  }
  return success();
}

template <typename BinaryOp>
static LogicalResult verifyBroadcastBinary(BinaryOp op) {
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  auto result = cast<RankedTensorType>(op.getResult().getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op.emitOpError("operand shapes ")
           << lhs << " and " << rhs << " do not broadcast";
  if (result.getShape() != ArrayRef<int64_t>(*shape))
    return op.emitOpError("result shape must be the broadcast shape");
  return success();
}

LogicalResult AddOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult MulOp::verify() { return verifyBroadcastBinary(*this); }

#define GET_OP_CLASSES
#include "tfm/TfmOps.cpp.inc"
