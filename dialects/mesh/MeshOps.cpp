//===- MeshOps.cpp - Mesh op verifiers ------------------------------------===//
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
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
  // Every core holds a tile of at most size + blocks elements per dimension
  // (padding included); bounding that product in bytes keeps the buffer
  // sizes and offsets derived from it free of overflow.
  std::optional<int64_t> bound = 8;
  for (auto [d, count] : llvm::zip(type.getShape(), layout.getBlocks())) {
    if (ShapedType::isDynamic(d))
      return op->emitOpError() << role << " has a dynamic dimension";
    if (d <= 0)
      return op->emitOpError() << role << " has a dimension of size " << d
                               << "; the grid holds no empty tensors";
    if (bound)
      bound = wafer::checkedMul(*bound, wafer::saturatingAdd(d, count));
  }
  if (!bound)
    return op->emitOpError() << role << " " << type
                             << " is too large: its size overflows 64 bits";
  for (auto [d, parts] : llvm::enumerate(layout.getParts()))
    if (type.getDimSize(d) % parts != 0)
      return op->emitOpError()
             << role << "'s dimension " << d << " of " << type.getDimSize(d)
             << " does not split into " << parts << " equal parts";
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

/// Operands sharing dimensions (`count` from `fromA` of a, from `fromB` of
/// b) must split them into the same blocks (sameBlocks).
static LogicalResult expectSameBlocks(Operation *op, StringRef what, Value a,
                                      size_t fromA, Value b, size_t fromB,
                                      size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!sameBlocks(a.getType(), fromA + i, b.getType(), fromB + i))
      return op->emitOpError()
             << what << " must agree on which blocks are balanced";
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
  if (std::optional<ArrayRef<int64_t>> view = getView()) {
    if (wafer::checkedElementCount(*view) !=
        wafer::checkedElementCount(target))
      return emitOpError("view must have the result's number of elements");
    target = *view;
  }
  if (viewed.size() > target.size())
    return emitOpError("cannot broadcast a rank-")
           << viewed.size() << " source to rank " << target.size();
  size_t offset = target.size() - viewed.size();
  if (std::optional<uint64_t> at = getSramOffset();
      at && (int64_t(*at) < 0 || *at % 4 != 0))
    return emitOpError("sram_offset ")
           << int64_t(*at) << " is not a non-negative multiple of 4 bytes";
  if (bool(getIndexDim()) != bool(getIndexMap()))
    return emitOpError("index_dim and index_map go together");
  int64_t mapped = getIndexDim() ? int64_t(*getIndexDim()) : -1;
  if (getIndexDim()) {
    if (offset != 0 || mapped < 0 || mapped >= int64_t(target.size()))
      return emitOpError("index_dim must be a dimension of a source of the "
                         "result's rank");
    if (int64_t(getIndexMap()->size()) != target[mapped])
      return emitOpError("index_map needs one entry per result coordinate");
    for (int64_t index : ArrayRef<int64_t>(*getIndexMap()))
      if (index < -1 || index >= viewed[mapped])
        return emitOpError("index_map entry ")
               << index << " is outside the source's " << viewed[mapped];
  }
  for (auto [i, d] : llvm::enumerate(viewed))
    if (int64_t(i) != mapped && d != 1 && d != target[offset + i])
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
  // The host may read the tensor back under another shape of the same
  // elements (dropping or adding unit dimensions, merging heads).
  SmallVector<int64_t> viewed(shapeOf(getSource()));
  if (std::optional<ArrayRef<int64_t>> view = getView()) {
    if (wafer::checkedElementCount(*view) !=
        wafer::checkedElementCount(viewed))
      return emitOpError("view must have the source's number of elements");
    viewed.assign(view->begin(), view->end());
  }
  SmallVector<int64_t> read(viewed);
  if (getIndexDim() && getIndexMap() && int64_t(*getIndexDim()) >= 0 &&
      int64_t(*getIndexDim()) < int64_t(read.size()))
    read[*getIndexDim()] = getIndexMap()->size();
  std::optional<int64_t> resultCount =
      wafer::checkedElementCount(result.getShape());
  if (!resultCount)
    return emitOpError("result's number of elements overflows 64 bits");
  if (resultCount != wafer::checkedElementCount(read))
    return emitOpError("result must have the source's number of elements");
  if (bool(getIndexDim()) != bool(getIndexMap()))
    return emitOpError("index_dim and index_map go together");
  if (getIndexDim()) {
    int64_t d = *getIndexDim();
    if (d < 0 || d >= int64_t(viewed.size()))
      return emitOpError("index_dim is not a dimension of the source");
    for (int64_t index : ArrayRef<int64_t>(*getIndexMap()))
      if (index < 0 || index >= viewed[d])
        return emitOpError("index_map entry ")
               << index << " is outside the source's " << viewed[d];
  }
  if (auto perm = getPermutation()) {
    SmallVector<bool> seen(perm->size(), false);
    if (int64_t(perm->size()) != int64_t(viewed.size()))
      return emitOpError("permutation needs one entry per source dimension");
    for (int64_t p : *perm) {
      if (p < 0 || p >= int64_t(perm->size()) || seen[p])
        return emitOpError("permutation is not a permutation");
      seen[p] = true;
    }
  }
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
    if (target && color >= target.getValue().routesPerCore)
      return op->emitOpError()
             << "routing color " << color << " exceeds the target's budget of "
             << target.getValue().routesPerCore << " colors";
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
  // [M, K...] x [K..., N...] -> [M, N...]: K and N may be split into heads
  // (the first dimension split, the others whole).
  if (a.size() < 2 || c.size() < 2 || b.size() != a.size() + c.size() - 2)
    return emitOpError("expects [M, K...] x [K..., N...] -> [M, N...]");
  if (b.take_front(a.size() - 1) != a.drop_front() ||
      b.take_back(c.size() - 1) != c.drop_front() || c[0] != a[0])
    return emitOpError("shapes do not form [M, K...] x [K..., N...] -> "
                       "[M, N...]");
  GridAttr grid = lookupGrid(*this);
  if (!grid)
    return emitOpError("needs an enclosing 'mesh.grid' attribute");
  int64_t h = grid.getHeight(), w = grid.getWidth(),
          n = GemmOp::kBlocks(h, w);
  constexpr int64_t N = LayoutAttr::kNone, X = LayoutAttr::kX,
                    Y = LayoutAttr::kY;
  size_t kDims = a.size() - 1, nDims = c.size() - 1;
  auto axes = [](std::initializer_list<std::pair<int64_t, size_t>> parts) {
    SmallVector<int64_t> out;
    for (auto [first, count] : parts) {
      out.push_back(first);
      out.append(count - 1, N);
    }
    return out;
  };
  auto blocks = [](std::initializer_list<std::pair<int64_t, size_t>> parts) {
    SmallVector<int64_t> out;
    for (auto [first, count] : parts) {
      out.push_back(first);
      out.append(count - 1, 1);
    }
    return out;
  };
  if (failed(expectLayout(*this, getLhs(), "lhs", axes({{Y, 1}, {X, kDims}}),
                          blocks({{h, 1}, {n, kDims}}))) ||
      failed(expectLayout(*this, getRhs(), "rhs",
                          axes({{Y, kDims}, {X, nDims}}),
                          blocks({{n, kDims}, {w, nDims}}))) ||
      failed(expectLayout(*this, getResult(), "result",
                          axes({{Y, 1}, {X, nDims}}),
                          blocks({{h, 1}, {w, nDims}}))) ||
      failed(expectSameInterleave(*this)))
    return failure();
  if (failed(expectSameBlocks(*this, "lhs and rhs K", getLhs(), 1, getRhs(), 0,
                              kDims)) ||
      failed(expectSameBlocks(*this, "rhs and result N", getRhs(), kDims,
                              getResult(), 1, nDims)) ||
      failed(expectSameBlocks(*this, "lhs and result M", getLhs(), 0,
                              getResult(), 0, 1)))
    return failure();
  size_t families = getAlgorithm() == GemmAlgorithm::summa ? 4 : 2;
  if (getColors() && getColors()->size() != families)
    return emitOpError("needs ")
           << families << " routing colors ("
           << (families == 4 ? "east, west, south, north" : "x ring, y ring")
           << "), got " << getColors()->size();
  return verifyColors(*this, getColors());
}

/// The grid axis (kX or kY) splitting some dimension of `value` from
/// dimension `from` on, with every such split using the whole extent once;
/// kNone when none does, -1 when the split is not of that form.
static int64_t singleSplitAxis(Value value, size_t from, GridAttr grid) {
  LayoutAttr layout = getLayout(value.getType());
  int64_t found = LayoutAttr::kNone;
  for (size_t d = from; d < layout.getAxes().size(); ++d) {
    int64_t axis = layout.getAxes()[d];
    if (axis == LayoutAttr::kNone)
      continue;
    int64_t extent =
        axis == LayoutAttr::kX ? grid.getWidth() : grid.getHeight();
    if (found != LayoutAttr::kNone || layout.getBlocks()[d] != extent)
      return -1;
    found = axis;
  }
  return found;
}

LogicalResult GemvOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  ArrayRef<int64_t> x = shapeOf(getLhs()), m = shapeOf(getRhs()),
                    y = shapeOf(getResult());
  // [1, K...] x [K..., N...] -> [1, N...]: the K and N dimensions may be
  // split into heads.
  if (x.size() < 2 || y.size() < 2 || x[0] != 1 || y[0] != 1 ||
      m.size() != x.size() + y.size() - 2)
    return emitOpError("expects [1, K...] x [K..., N...] -> [1, N...]");
  if (m.take_front(x.size() - 1) != x.drop_front() ||
      m.take_back(y.size() - 1) != y.drop_front())
    return emitOpError("shapes do not form [1, K...] x [K..., N...] -> "
                       "[1, N...]");
  GridAttr grid = lookupGrid(*this);
  if (!grid)
    return emitOpError("needs an enclosing 'mesh.grid' attribute");
  for (auto [value, role] : {std::pair(getLhs(), "lhs"),
                             std::pair(getRhs(), "rhs"),
                             std::pair(getResult(), "result")})
    if (failed(verifyDistributed(*this, value, role)))
      return failure();
  LayoutAttr lhs = getLayout(getLhs().getType()),
             rhs = getLayout(getRhs().getType()),
             result = getLayout(getResult().getType());
  int64_t in = singleSplitAxis(getLhs(), 1, grid),
          out = singleSplitAxis(getResult(), 1, grid);
  if (lhs.getAxes()[0] != LayoutAttr::kNone ||
      result.getAxes()[0] != LayoutAttr::kNone || in <= 0 || out <= 0 ||
      in == out)
    return emitOpError("lhs must split K along one grid axis and the result "
                       "N along the other (each replicated on the other)");
  SmallVector<int64_t> axes(lhs.getAxes().drop_front()),
      blocks(lhs.getBlocks().drop_front());
  axes.append(result.getAxes().begin() + 1, result.getAxes().end());
  blocks.append(result.getBlocks().begin() + 1, result.getBlocks().end());
  size_t kDims = x.size() - 1, nDims = y.size() - 1;
  auto sameBlocksAs = [&](Value v, size_t from, size_t rhsFrom, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (!sameBlocks(v.getType(), from + i, getRhs().getType(), rhsFrom + i))
        return false;
    return true;
  };
  if (rhs.getAxes() != ArrayRef(axes) || rhs.getBlocks() != ArrayRef(blocks) ||
      !sameBlocksAs(getLhs(), 1, 0, kDims) ||
      !sameBlocksAs(getResult(), 1, kDims, nDims))
    return emitOpError("rhs layout must be the lhs's K layout followed by "
                       "the result's N layout");
  if (failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
}

bool GemvOp::reducesAlongX() {
  GridAttr grid = lookupGrid(*this);
  return grid && singleSplitAxis(getLhs(), 1, grid) == LayoutAttr::kX;
}

LogicalResult RelayoutOp::verify() {
  if (failed(verifySameElementType(*this)) ||
      failed(verifyDistributed(*this, getSource(), "source")) ||
      failed(verifyDistributed(*this, getResult(), "result")) ||
      failed(expectSameInterleave(*this)))
    return failure();
  if (shapeOf(getSource()) != shapeOf(getResult()))
    return emitOpError("source and result must have one shape");
  LayoutAttr from = getLayout(getSource().getType()),
             to = getLayout(getResult().getType());
  GridAttr grid = lookupGrid(*this);
  if (from.getAxes() != to.getAxes())
    return emitOpError("source and result must split the same dimensions "
                       "along the same axes");
  if (failed(expectSameBlocks(*this, "source and result", getSource(), 0,
                              getResult(), 0, from.getAxes().size())))
    return failure();
  int64_t changed = -1;
  for (auto [d, axis] : llvm::enumerate(from.getAxes())) {
    int64_t extent = axis == LayoutAttr::kX   ? grid.getWidth()
                     : axis == LayoutAttr::kY ? grid.getHeight()
                                              : 1;
    if (from.getBlocks()[d] != to.getBlocks()[d]) {
      if (changed >= 0 || axis == LayoutAttr::kNone)
        return emitOpError("only one split dimension may change its blocks");
      changed = d;
    } else if (from.getBlocks()[d] != extent) {
      return emitOpError("dimension ")
             << d << " must keep one block per core";
    }
  }
  if (changed < 0)
    return emitOpError("source and result layouts are the same");
  for (int64_t d = changed + 1; d < int64_t(from.getAxes().size()); ++d)
    if (from.getAxes()[d] != LayoutAttr::kNone)
      return emitOpError("the dimensions after the re-blocked one must be "
                         "whole");
  return verifyColors(*this, getColors());
}

int64_t RelayoutOp::getDimension() {
  LayoutAttr from = getLayout(getSource().getType()),
             to = getLayout(getResult().getType());
  for (auto [d, blocks] : llvm::enumerate(from.getBlocks()))
    if (blocks != to.getBlocks()[d])
      return d;
  return 0;
}

bool RelayoutOp::alongX() {
  return getLayout(getSource().getType()).getAxes()[getDimension()] ==
         LayoutAttr::kX;
}

LogicalResult RmsNormOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (getInput().getType() != getResult().getType())
    return emitOpError("result must have the input's type");
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (x.empty() || w.size() != 1 || w[0] != x.back())
    return emitOpError("weight must be [E] for an input [..., E]");
  double epsilon = getEpsilon().convertToDouble();
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return emitOpError("epsilon must be finite and not negative");
  if (failed(verifyDistributed(*this, getInput(), "input")) ||
      failed(verifyDistributed(*this, getWeight(), "weight")))
    return failure();
  LayoutAttr in = getLayout(getInput().getType()),
             weight = getLayout(getWeight().getType());
  GridAttr grid = lookupGrid(*this);
  int64_t axis = in.getAxes().back();
  if (axis == LayoutAttr::kNone ||
      in.getBlocks().back() !=
          (axis == LayoutAttr::kX ? grid.getWidth() : grid.getHeight()))
    return emitOpError("the normalised axis must be split along x or y");
  if (weight.getAxes()[0] != axis ||
      weight.getBlocks()[0] != in.getBlocks().back() ||
      !sameBlocks(getWeight().getType(), 0, getInput().getType(),
                  in.getAxes().size() - 1))
    return emitOpError("weight must be split like the normalised axis");
  if (failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
}

bool RmsNormOp::reducesAlongX() {
  return getLayout(getInput().getType()).getAxes().back() == LayoutAttr::kX;
}

LogicalResult RopeOp::verify() {
  if (failed(verifySameElementType(*this)) ||
      failed(verifyDistributed(*this, getInput(), "input")) ||
      failed(verifyDistributed(*this, getCos(), "cos/sin")) ||
      failed(verifyDistributed(*this, getSin(), "cos/sin")) ||
      failed(expectSameInterleave(*this)))
    return failure();
  if (getInput().getType() != getResult().getType())
    return emitOpError("result must have the input's type");
  int64_t d = getHeadDim();
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (d < 2 || d % 2 != 0 || x.empty() || x.back() % d != 0)
    return emitOpError("head_dim must be even and divide the last dimension");
  for (Value table : {getCos(), getSin()}) {
    if (getInterleaved()) {
      if (table.getType() != getInput().getType())
        return emitOpError("interleaved cos and sin must have the input's "
                           "type");
      continue;
    }
    ArrayRef<int64_t> t = shapeOf(table);
    if (t.size() != 2 || t[1] != d || t[0] != x[0])
      return emitOpError("cos and sin must be [rows, head_dim]");
    if (failed(verifyDistributed(*this, table, "cos/sin")))
      return failure();
    LayoutAttr layout = getLayout(table.getType());
    if (layout.getAxes()[1] != LayoutAttr::kNone ||
        layout.getAxes()[0] != getLayout(getInput().getType()).getAxes()[0] ||
        layout.getBlocks()[0] !=
            getLayout(getInput().getType()).getBlocks()[0])
      return emitOpError("cos and sin must be laid out like the rows of the "
                         "input, the head dimension whole");
  }
  LayoutAttr in = getLayout(getInput().getType());
  if (failed(verifyDistributed(*this, getInput(), "input")))
    return failure();
  if (in.getAxes().back() != LayoutAttr::kNone)
    return emitOpError("the last dimension must be whole on every core");
  return success();
}

/// KV caches and decode queries: [1, KVH, L, D] as [*, x:W, y:H, *] and
/// [1, KVH, X] as [*, x:W, *].
static LogicalResult expectHeadLayout(Operation *op, Value v, StringRef role,
                                      bool withPositions) {
  GridAttr grid = lookupGrid(op);
  if (!grid)
    return op->emitOpError("needs an enclosing 'mesh.grid' attribute");
  constexpr int64_t N = LayoutAttr::kNone, X = LayoutAttr::kX,
                    Y = LayoutAttr::kY;
  int64_t h = grid.getHeight(), w = grid.getWidth();
  ArrayRef<int64_t> shape = shapeOf(v);
  if (shape.size() != (withPositions ? 4u : 3u) || shape[0] != 1)
    return op->emitOpError()
           << role << " must be "
           << (withPositions ? "[1, KVH, L, D]" : "[1, KVH, X]");
  if (withPositions)
    return expectLayout(op, v, role, {N, X, Y, N}, {1, w, h, 1});
  return expectLayout(op, v, role, {N, X, N}, {1, w, 1});
}

LogicalResult KvAppendOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (getCache().getType() != getResult().getType())
    return emitOpError("result must have the cache's type");
  // The lowering updates the cache's buffer in place.
  if (!getCache().hasOneUse())
    return emitOpError("updates its cache in place: the cache must have no "
                       "other users");
  if (failed(expectHeadLayout(*this, getCache(), "cache", true)) ||
      failed(expectHeadLayout(*this, getNewEntry(), "new_entry", false)))
    return failure();
  ArrayRef<int64_t> cache = shapeOf(getCache()), entry = shapeOf(getNewEntry());
  if (entry[1] != cache[1] || entry[2] != cache[3])
    return emitOpError("new_entry must be [1, KVH, D] for a cache [1, KVH, L, D]");
  GridAttr grid = lookupGrid(*this);
  int64_t rows = grid.getHeight();
  if (cache[2] % rows != 0)
    return emitOpError("the cache's ")
           << cache[2] << " slots do not split into " << rows << " rows";
  // After the step the fullest row holds ceil((position + 1) / H) tokens,
  // the bottom row ceil(position / H) + 1 under concat.
  int64_t perRow = cache[2] / rows, past = getPosition();
  int64_t need = getPolicy() == KvPolicy::concat
                     ? (past + rows - 1) / rows + 1
                     : (past + rows) / rows;
  if (past < 0 || need > perRow)
    return emitOpError("a cache of ")
           << perRow << " slots per row cannot take token " << past
           << " (needs " << need << ")";
  if (failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
}

LogicalResult KvHandoffOp::verify() {
  if (failed(verifySameElementType(*this)) ||
      failed(expectHeadLayout(*this, getResult(), "result", true)))
    return failure();
  GridAttr grid = lookupGrid(*this);
  constexpr int64_t N = LayoutAttr::kNone, X = LayoutAttr::kX,
                    Y = LayoutAttr::kY;
  ArrayRef<int64_t> source = shapeOf(getSource()), cache = shapeOf(getResult());
  if (source.size() != 3)
    return emitOpError("source must be [S, KVH, D]");
  if (failed(expectLayout(*this, getSource(), "source", {Y, X, N},
                          {grid.getHeight(), grid.getWidth(), 1})))
    return failure();
  if (source[1] != cache[1] || source[2] != cache[3])
    return emitOpError(
        "result must be [1, KVH, L, D] for a source [S, KVH, D]");
  if (!sameBlocks(getSource().getType(), 1, getResult().getType(), 1))
    return emitOpError("source and result must split their heads alike");
  int64_t rows = grid.getHeight();
  if (cache[2] % rows != 0)
    return emitOpError("the cache's ")
           << cache[2] << " slots do not split into " << rows << " rows";
  // The fullest row holds ceil(S / H) of the past.
  int64_t perRow = cache[2] / rows, need = (source[0] + rows - 1) / rows;
  if (need > perRow)
    return emitOpError("a cache of ")
           << perRow << " slots per row cannot hold " << source[0]
           << " positions (needs " << need << ")";
  if (failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
}

bool AttentionOp::isDecode() { return shapeOf(getKey()).size() == 4; }

static int64_t laneTile(AttentionOp op, GridAttr grid) {
  int64_t lanes = shapeOf(op.getQuery())[1];
  return wafer::ceilDiv(lanes, grid.getWidth());
}

/// The lanes of a segment: with ceil-sized blocks of `laneTile`, the fewest
/// whole heads that fill whole blocks (all lanes, if fewer); balanced, one
/// part of the blocks' (`#mesh.layout`).
static int64_t lanesPerSegment(AttentionOp op, GridAttr grid) {
  int64_t lanes = shapeOf(op.getQuery())[1];
  LayoutAttr layout = getLayout(op.getQuery().getType());
  if (layout.isBalanced(1))
    return lanes / layout.getPartCount(1);
  return std::min(lanes,
                  std::lcm(laneTile(op, grid), int64_t(*op.getLanesPerHead())));
}

int64_t AttentionOp::scoresPerKey(GridAttr grid) {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey());
  std::optional<uint64_t> lanesPerHead = getLanesPerHead();
  if (!lanesPerHead)
    return localElements(getQuery(), grid) / k[3];
  int64_t group = q[2] / k.back(), lanes = q[1],
          perHead = int64_t(*lanesPerHead);
  if (getLaneSegments(grid))
    lanes = lanesPerSegment(*this, grid);
  return lanes / perHead * group;
}

std::optional<wafer::AxisSegments> AttentionOp::getLaneSegments(GridAttr grid) {
  std::optional<uint64_t> lanesPerHead = getLanesPerHead();
  if (!lanesPerHead || !getAllreduce() || getRelayed() ||
      getAllreduce()->getAlgorithm() == AllreduceAlgorithm::ring)
    return std::nullopt;
  // Whole segments, then the rest of the heads (as many columns as their
  // lanes fill).
  int64_t lanes = shapeOf(getQuery())[1], tile = laneTile(*this, grid);
  int64_t perSegment = lanesPerSegment(*this, grid);
  int64_t count = wafer::ceilDiv(lanes, perSegment);
  int64_t last = lanes - (count - 1) * perSegment;
  wafer::AxisSegments segments{wafer::ceilDiv(perSegment, tile), count,
                               wafer::ceilDiv(last, tile)};
  // Balanced parts: each spans its share of the columns.
  if (getLayout(getQuery().getType()).isBalanced(1))
    segments = {grid.getWidth() / count, count, grid.getWidth() / count};
  // One segment over the whole row is the whole-row sum, whose tree runs
  // over physical columns and shares the GEMVs' channels.
  if (segments.used() == grid.getWidth() && count == 1)
    return std::nullopt;
  return segments;
}

LogicalResult AttentionOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  if (getQuery().getType() != getResult().getType())
    return emitOpError("result must have the query's type");
  if (getKey().getType() != getValue().getType())
    return emitOpError("key and value must have one type");
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  // Lanes are split alike in q, k and v; balanced in parts, each part
  // holds whole KV heads (a lane segment).
  // (The layouts' ranks are checked below; this needs dimension 1.)
  LayoutAttr layout = getLayout(getQuery().getType()),
             keyLayout = getLayout(getKey().getType());
  if (std::optional<uint64_t> lanes = getLanesPerHead();
      lanes && layout && keyLayout && layout.getAxes().size() >= 2 &&
      keyLayout.getAxes().size() >= 2 && shapeOf(getQuery()).size() >= 2 &&
      shapeOf(getKey()).size() >= 2) {
    if (!sameBlocks(getQuery().getType(), 1, getKey().getType(), 1))
      return emitOpError("query and key must split their lanes alike");
    int64_t parts = layout.getPartCount(1);
    if (layout.isBalanced(1) && *lanes > 0 &&
        (shapeOf(getQuery())[1] / parts) % int64_t(*lanes) != 0)
      return emitOpError("balanced lanes in ")
             << parts << " parts must hold whole KV heads of " << *lanes
             << " lanes each";
  }
  if (!isDecode()) {
    std::optional<uint64_t> lanes = getLanesPerHead();
    if (bool(getAllreduce()) != bool(lanes))
      return emitOpError(lanes ? "prefill attention over lanes needs an "
                                 "allreduce"
                               : "prefill attention takes no allreduce");
    GridAttr grid = lookupGrid(*this);
    if (!grid)
      return emitOpError("needs an enclosing 'mesh.grid' attribute");
    constexpr int64_t N = LayoutAttr::kNone, X = LayoutAttr::kX,
                      Y = LayoutAttr::kY;
    int64_t h = grid.getHeight(), w = grid.getWidth();
    ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey());
    if (q.size() != 3 || k.size() != 3 || q[0] != k[0] || q[1] != k[1] ||
        k[2] < 1 || q[2] % k[2] != 0)
      return emitOpError("prefill attention needs q [L, KVH, G * D] and "
                         "k, v [L, KVH, D]");
    if (lanes && (k[2] != 2 || *lanes < 1 || q[1] % int64_t(*lanes) != 0))
      return emitOpError("lanes need k, v [L, KVH * lanes_per_head, 2]");
    if (failed(expectLayout(*this, getQuery(), "query", {Y, X, N},
                            {h, w, 1})) ||
        failed(expectLayout(*this, getKey(), "key", {Y, X, N}, {h, w, 1})))
      return failure();
    if (int64_t(getLength()) != q[0])
      return emitOpError("length must be the number of queries");
    if (failed(expectSameInterleave(*this)))
    return failure();
  return verifyColors(*this, getColors());
  }
  if (!getAllreduce())
    return emitOpError("decode attention needs an allreduce");
  if (failed(expectHeadLayout(*this, getQuery(), "query", false)) ||
      failed(expectHeadLayout(*this, getKey(), "key", true)))
    return failure();
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey());
  if (q[1] != k[1] || k[3] < 1 || q[2] % k[3] != 0)
    return emitOpError("query must be [1, KVH, G * D] for caches "
                       "[1, KVH, L, D]");
  if (std::optional<uint64_t> lanes = getLanesPerHead();
      lanes && (k[3] != 2 || *lanes < 1 || q[1] % int64_t(*lanes) != 0))
    return emitOpError("lanes need caches [1, KVH * lanes_per_head, L, 2]");
  if (int64_t(getLength()) < 1 || int64_t(getLength()) > k[2])
    return emitOpError("length ")
           << int64_t(getLength()) << " is outside the cache of " << k[2]
           << " positions";
  if (failed(expectSameInterleave(*this)) ||
      failed(verifyColors(*this, getColors())))
    return failure();
  // The keys a decode step sees are those its KV appends leave.
  auto keys = getKey().getDefiningOp<KvAppendOp>();
  auto values = getValue().getDefiningOp<KvAppendOp>();
  if (!keys || !values)
    return emitOpError("decode attention reads the caches of mesh.kv_append");
  if (int64_t(getLength()) != int64_t(keys.getPosition()) + 1 ||
      keys.getPosition() != values.getPosition())
    return emitOpError("length ")
           << int64_t(getLength())
           << " must count the past and the new token of both caches";
  return success();
}

LogicalResult MapOp::verify() {
  return verifyDistributed(*this, getResult(), "result");
}

#define GET_OP_CLASSES
#include "mesh/MeshOps.cpp.inc"
