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

#include <cmath>
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


FailureOr<SmallVector<int64_t>>
wafer::tfm::matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return failure();
  SmallVector<int64_t> a(lhs), b(rhs);
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return failure();
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(b).drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> result = *batch;
  if (lhs.size() > 1)
    result.push_back(a[a.size() - 2]);
  if (rhs.size() > 1)
    result.push_back(b.back());
  return result;
}

SmallVector<int64_t> wafer::tfm::reduceShape(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> axes,
                                             bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(axes, int64_t(d)))
      result.push_back(size);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

std::optional<int64_t> wafer::tfm::rangeLength(double start, double limit,
                                               double delta) {
  double length = std::ceil((limit - start) / delta);
  // Rejects NaN and +inf before the conversion to an integer.
  if (delta == 0 || !(length <= double(int64_t(1) << 40)))
    return std::nullopt;
  return int64_t(std::max(length, 0.0));
}

int64_t wafer::tfm::sliceLength(int64_t start, int64_t end, int64_t step) {
  if (step > 0)
    return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

std::optional<wafer::tfm::AxisRange> wafer::tfm::axisRangeOf(SliceOp slice) {
  ArrayRef<int64_t> shape = slice.getInput().getType().getShape();
  std::optional<AxisRange> range;
  for (auto [d, size] : llvm::enumerate(shape)) {
    int64_t start = slice.getStarts()[d], end = slice.getEnds()[d];
    if (slice.getSteps()[d] != 1)
      return std::nullopt;
    if (start == 0 && end == size)
      continue;
    if (range || start >= end)
      return std::nullopt;
    range = AxisRange{int64_t(d), start, end};
  }
  return range;
}

wafer::tfm::SliceOp wafer::tfm::createAxisSlice(OpBuilder &builder,
                                                Location loc, Value input,
                                                int64_t axis, int64_t start,
                                                int64_t end, int64_t step) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
      steps(type.getRank(), 1), shape(type.getShape());
  starts[axis] = start;
  ends[axis] = end;
  steps[axis] = step;
  shape[axis] = sliceLength(start, end, step);
  return builder.create<SliceOp>(loc, type.clone(shape), input, starts, ends,
                                 steps);
}

SmallVector<int64_t> wafer::tfm::gatherShape(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> indices,
                                             int64_t axis) {
  SmallVector<int64_t> result(shape.take_front(axis));
  result.append(indices.begin(), indices.end());
  result.append(shape.begin() + axis + 1, shape.end());
  return result;
}
