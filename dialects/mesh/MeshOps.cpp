//===- MeshOps.cpp - Mesh op verifiers ------------------------------------===//
#include "wafer/Dialect/Mesh/MeshOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <numeric>

using namespace mlir;
using namespace wafer::mesh;

/// Checks that `value` is a distributed tensor whose layout fits the grid:
/// one entry per dimension, block counts multiples of the axis extent.
static LogicalResult verifyDistributed(Operation *op, Value value,
                                       StringRef role) {
  auto type = cast<RankedTensorType>(value.getType());
  LayoutAttr layout = getLayout(type);
  if (!layout)
    return op->emitOpError() << role << " must have a #mesh.layout encoding";
  if (int64_t(layout.getAxes().size()) != type.getRank())
    return op->emitOpError()
           << role << " layout has " << layout.getAxes().size()
           << " entries for a rank-" << type.getRank() << " tensor";
  GridAttr grid = lookupGrid(op);
  if (!grid)
    return op->emitOpError("needs an enclosing 'mesh.grid' attribute");
  for (auto [axis, count] : llvm::zip(layout.getAxes(), layout.getBlocks())) {
    int64_t extent = axis == LayoutAttr::kX   ? grid.getWidth()
                     : axis == LayoutAttr::kY ? grid.getHeight()
                                              : 1;
    if (count % extent != 0)
      return op->emitOpError()
             << role << " splits into " << count
             << " blocks, not a multiple of the grid's "
             << (axis == LayoutAttr::kX ? "width " : "height ") << extent;
  }
  return success();
}

/// Checks that `value`'s layout is exactly `[axes...]` with `blocks...`.
static LogicalResult expectLayout(Operation *op, Value value, StringRef role,
                                  ArrayRef<int64_t> axes,
                                  ArrayRef<int64_t> blocks) {
  if (failed(verifyDistributed(op, value, role)))
    return failure();
  LayoutAttr layout = getLayout(value.getType());
  if (layout.getAxes() != axes || layout.getBlocks() != blocks) {
    LayoutAttr expected =
        LayoutAttr::get(op->getContext(), axes, blocks, layout.getInterleave());
    return op->emitOpError() << role << " layout must be " << expected
                             << ", got " << layout;
  }
  return success();
}

static LogicalResult expectSameInterleave(Operation *op) {
  bool interleave = getLayout(op->getResult(0).getType()).getInterleave();
  for (Value v : op->getOperands())
    if (getLayout(v.getType()).getInterleave() != interleave)
      return op->emitOpError("operands and results must agree on interleave");
  return success();
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

LogicalResult DistributeOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType());
  if (source.getEncoding())
    return emitOpError("source must be a host tensor without a layout");
  if (failed(verifyDistributed(*this, getResult(), "result")))
    return failure();
  SmallVector<int64_t> viewed(source.getShape());
  if (auto perm = getPermutation()) {
    if (int64_t(perm->size()) != source.getRank())
      return emitOpError("permutation needs ")
             << source.getRank() << " entries";
    SmallVector<bool> seen(perm->size(), false);
    for (auto [i, p] : llvm::enumerate(*perm)) {
      if (p < 0 || p >= source.getRank() || seen[p])
        return emitOpError("permutation is not a permutation");
      seen[p] = true;
      viewed[i] = source.getDimSize(p);
    }
  }
  ArrayRef<int64_t> target = shapeOf(getResult());
  if (viewed.size() > target.size())
    return emitOpError("cannot broadcast a rank-")
           << viewed.size() << " source to rank " << target.size();
  size_t offset = target.size() - viewed.size();
  for (auto [i, d] : llvm::enumerate(viewed))
    if (d != 1 && d != target[offset + i])
      return emitOpError("source dimension ")
             << i << " of size " << d << " does not broadcast to "
             << target[offset + i];
  return success();
}

LogicalResult CollectOp::verify() {
  if (failed(verifyDistributed(*this, getSource(), "source")))
    return failure();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getEncoding())
    return emitOpError("result must be a host tensor without a layout");
  if (result.getShape() != shapeOf(getSource()))
    return emitOpError("result shape must equal the source shape");
  return success();
}

static LogicalResult verifyColors(Operation *op,
                                  std::optional<ArrayRef<int32_t>> colors) {
  if (!colors)
    return success();
  TargetAttr target = lookupTarget(op);
  for (int32_t color : *colors) {
    if (color < 0)
      return op->emitOpError("routing colors must not be negative");
    if (target && color >= target.getRoutesPerCore())
      return op->emitOpError()
             << "routing color " << color << " exceeds the target's budget of "
             << target.getRoutesPerCore() << " colors";
  }
  return success();
}

static LogicalResult verifySameElementType(Operation *op) {
  Type element = cast<RankedTensorType>(op->getResult(0).getType())
                     .getElementType();
  for (Value operand : op->getOperands())
    if (cast<RankedTensorType>(operand.getType()).getElementType() != element)
      return op->emitOpError("operands and result must have one element type");
  return success();
}

LogicalResult GemmOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs()),
                    c = shapeOf(getResult());
  if (a.size() != 2 || b.size() != 2 || c.size() != 2)
    return emitOpError("operands and result must be matrices");
  if (a[1] != b[0] || c[0] != a[0] || c[1] != b[1])
    return emitOpError("shapes do not form [M, K] x [K, N] -> [M, N]");
  GridAttr grid = lookupGrid(*this);
  if (!grid)
    return emitOpError("needs an enclosing 'mesh.grid' attribute");
  int64_t h = grid.getHeight(), w = grid.getWidth(), n = std::lcm(h, w);
  constexpr int64_t X = LayoutAttr::kX, Y = LayoutAttr::kY;
  if (failed(expectLayout(*this, getLhs(), "lhs", {Y, X}, {h, n})) ||
      failed(expectLayout(*this, getRhs(), "rhs", {Y, X}, {n, w})) ||
      failed(expectLayout(*this, getResult(), "result", {Y, X}, {h, w})) ||
      failed(expectSameInterleave(*this)))
    return failure();
  if (getAlgorithm() == GemmAlgorithm::summa && h != w)
    return emitOpError("summa needs a square grid, got ") << h << "x" << w;
  size_t families = getAlgorithm() == GemmAlgorithm::summa ? 4 : 2;
  if (getColors() && getColors()->size() != families)
    return emitOpError("needs ")
           << families << " routing colors ("
           << (families == 4 ? "east, west, south, north" : "x ring, y ring")
           << "), got " << getColors()->size();
  return verifyColors(*this, getColors());
}

LogicalResult GemvOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  ArrayRef<int64_t> x = shapeOf(getLhs()), m = shapeOf(getRhs()),
                    y = shapeOf(getResult());
  if (x.size() != 2 || m.size() != 2 || y.size() != 2 || x[0] != 1 ||
      y[0] != 1)
    return emitOpError("expects [1, K] x [K, N] -> [1, N]");
  if (x[1] != m[0] || y[1] != m[1])
    return emitOpError("shapes do not form [1, K] x [K, N] -> [1, N]");
  GridAttr grid = lookupGrid(*this);
  if (!grid)
    return emitOpError("needs an enclosing 'mesh.grid' attribute");
  int64_t h = grid.getHeight(), w = grid.getWidth();
  constexpr int64_t N = LayoutAttr::kNone, X = LayoutAttr::kX,
                    Y = LayoutAttr::kY;
  bool alongX = reducesAlongX();
  if (failed(expectLayout(*this, getLhs(), "lhs", {N, alongX ? X : Y},
                          {1, alongX ? w : h})) ||
      failed(expectLayout(*this, getRhs(), "rhs",
                          alongX ? ArrayRef<int64_t>{X, Y}
                                 : ArrayRef<int64_t>{Y, X},
                          alongX ? ArrayRef<int64_t>{w, h}
                                 : ArrayRef<int64_t>{h, w})) ||
      failed(expectLayout(*this, getResult(), "result", {N, alongX ? Y : X},
                          {1, alongX ? h : w})) ||
      failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
}

bool GemvOp::reducesAlongX() {
  LayoutAttr lhs = getLayout(getLhs().getType());
  return lhs && lhs.getAxes().size() == 2 &&
         lhs.getAxes()[1] == LayoutAttr::kX;
}

LogicalResult MapOp::verify() {
  return verifyDistributed(*this, getResult(), "result");
}

#define GET_OP_CLASSES
#include "mesh/MeshOps.cpp.inc"
