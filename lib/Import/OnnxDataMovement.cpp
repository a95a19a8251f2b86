//===- OnnxDataMovement.cpp - Imports of ONNX's data-movement ops ---------===//
//
// Transpose, Reshape, Squeeze/Unsqueeze, Flatten, Expand, Tile, Concat,
// Slice, Split, Gather and Shape: ops that move or select elements without
// computing on them (the dispatch table is in OnnxNodes.cpp).
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Support/CheckedMath.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::onnx_import;

llvm::Expected<SmallVector<Value>>
GraphImporter::importTranspose(ArrayRef<Value> in) {
  Value x = in[0];
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> perm;
  if (const onnx::AttributeProto *a = attribute("perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = shape.size() - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<int64_t> result;
  SmallVector<bool> seen(shape.size(), false);
  if (perm.size() != shape.size())
    return nodeError("perm has the wrong length");
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(shape.size()) || seen[p])
      return nodeError("perm is not a permutation");
    seen[p] = true;
    result.push_back(shape[p]);
  }
  return SmallVector<Value>{
      create<tfm::TransposeOp>(tensorType(result, elementOf(x)), x, perm)};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importFlatten(ArrayRef<Value> in) {
  Value x = in[0];
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t axis = intAttr("axis", 1);
  if (axis < 0)
    axis += shape.size();
  if (axis < 0 || axis > int64_t(shape.size()))
    return nodeError("axis is out of range");
  int64_t outer = eval::elementCount(shape.take_front(axis));
  int64_t inner = eval::elementCount(shape.drop_front(axis));
  return SmallVector<Value>{
      create<tfm::ReshapeOp>(tensorType({outer, inner}, elementOf(x)), x)};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importExpand(ArrayRef<Value> in) {
  Value x = in[0];
  auto target = knownInts(in[1], "the shape");
  if (!target)
    return target.takeError();
  auto shape = tfm::broadcastShapes(shapeOf(x), *target);
  if (failed(shape))
    return nodeError("input does not broadcast to the shape");
  return SmallVector<Value>{
      create<tfm::ExpandOp>(tensorType(*shape, elementOf(x)), x)};
}

/// Tile is data movement: [s0, s1, ...] -> reshape [1, s0, 1, s1, ...] ->
/// expand [r0, s0, r1, s1, ...] -> reshape [r0*s0, r1*s1, ...].
llvm::Expected<SmallVector<Value>>
GraphImporter::importTile(ArrayRef<Value> in) {
  Value x = in[0];
  auto repeats = knownInts(in[1], "the repeats");
  if (!repeats)
    return repeats.takeError();
  ArrayRef<int64_t> shape = shapeOf(x);
  if (repeats->size() != shape.size())
    return nodeError("repeats has " + llvm::Twine(repeats->size()) +
                     " entries for a rank-" + llvm::Twine(shape.size()) +
                     " input");
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; }))
    return SmallVector<Value>{x};
  SmallVector<int64_t> spread, expanded, tiled;
  for (auto [size, repeat] : llvm::zip(shape, *repeats)) {
    if (repeat < 0)
      return nodeError("repeats must not be negative");
    if (size > 0 && repeat > (int64_t(1) << 40) / size)
      return nodeError("repeats make a dimension larger than 2^40");
    spread.append({1, size});
    expanded.append({repeat, size});
    tiled.push_back(repeat * size);
  }
  Type element = elementOf(x);
  Value v = create<tfm::ReshapeOp>(tensorType(spread, element), x);
  v = create<tfm::ExpandOp>(tensorType(expanded, element), v);
  return SmallVector<Value>{
      create<tfm::ReshapeOp>(tensorType(tiled, element), v)};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importConcat(ArrayRef<Value> in) {
  Value x = in[0];
  for (Value v : in)
    if (!v || shapeOf(v).size() != shapeOf(x).size())
      return nodeError("inputs have different ranks");
  auto axis = normalizeAxis(intAttr("axis", 0), shapeOf(x).size());
  if (!axis)
    return axis.takeError();
  SmallVector<int64_t> shape(shapeOf(x));
  shape[*axis] = 0;
  for (Value v : in) {
    for (size_t d = 0; d < shape.size(); ++d)
      if (int64_t(d) != *axis && shapeOf(v)[d] != shape[d])
        return nodeError("inputs differ outside the concatenation axis");
    shape[*axis] += shapeOf(v)[*axis];
  }
  return SmallVector<Value>{create<tfm::ConcatOp>(
      tensorType(shape, elementOf(x)), in, builder.getI64IntegerAttr(*axis))};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importGather(ArrayRef<Value> in) {
  Value x = in[0];
  auto axis = normalizeAxis(intAttr("axis", 0), shapeOf(x).size());
  if (!axis)
    return axis.takeError();
  if (!elementOf(in[1]).isInteger(64))
    return nodeError("indices must be integers");
  return SmallVector<Value>{create<tfm::GatherOp>(
      tensorType(tfm::gatherShape(shapeOf(x), shapeOf(in[1]), *axis),
                 elementOf(x)),
      x, in[1], builder.getI64IntegerAttr(*axis))};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importShape(ArrayRef<Value> in) {
  int64_t rank = shapeOf(in[0]).size();
  Value shape =
      create<tfm::ShapeOp>(tensorType({rank}, builder.getI64Type()), in[0]);
  int64_t start = intAttr("start", 0), end = intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  if (start == 0 && end == rank)
    return SmallVector<Value>{shape};
  auto sliced = sliceAxis(shape, 0, start, end, 1);
  if (!sliced)
    return sliced.takeError();
  return SmallVector<Value>{*sliced};
}

llvm::Expected<Value> GraphImporter::importReshape(ArrayRef<Value> in) {
  Value x = in[0];
  auto target = knownInts(in[1], "the shape");
  if (!target)
    return target.takeError();
  ArrayRef<int64_t> input = shapeOf(x);
  bool allowZero = intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferred = -1, product = 1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero) {
      if (i >= input.size())
        return nodeError("shape copies dimension " + llvm::Twine(i) +
                         " that the input does not have");
      d = input[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return nodeError("shape has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return nodeError("shape has a negative dimension");
    shape.push_back(d);
    product = saturatingMul(product, d);
  }
  int64_t count = eval::elementCount(input);
  if (inferred >= 0) {
    if (product == 0 || count % product != 0)
      return nodeError("cannot infer the -1 dimension");
    shape[inferred] = count / product;
    product *= shape[inferred];
  }
  if (product != count)
    return nodeError("shape holds " + llvm::Twine(product) +
                     " elements, the input " + llvm::Twine(count));
  return create<tfm::ReshapeOp>(tensorType(shape, elementOf(x)), x);
}

llvm::Expected<Value> GraphImporter::importSqueeze(ArrayRef<Value> in) {
  bool unsqueeze = node->op_type() == "Unsqueeze";
  Value x = in[0];
  ArrayRef<int64_t> input = shapeOf(x);
  bool present = false;
  auto axes = intsFromAttrOrInput("axes", in, 1, present);
  if (!axes)
    return axes.takeError();
  int64_t rank = input.size() + (unsqueeze ? axes->size() : 0);
  SmallVector<bool> selected(rank, false);
  for (int64_t axis : *axes) {
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return normalized.takeError();
    if (selected[*normalized])
      return nodeError("axes repeat " + llvm::Twine(*normalized));
    selected[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  if (unsqueeze) {
    if (!present)
      return nodeError("needs axes");
    for (int64_t d = 0, next = 0; d < rank; ++d)
      shape.push_back(selected[d] ? 1 : input[next++]);
  } else {
    for (auto [d, size] : llvm::enumerate(input)) {
      bool drop = present ? bool(selected[d]) : size == 1;
      if (drop && size != 1)
        return nodeError("cannot squeeze dimension " + llvm::Twine(d) +
                         " of size " + llvm::Twine(size));
      if (!drop)
        shape.push_back(size);
    }
  }
  return create<tfm::ReshapeOp>(tensorType(shape, elementOf(x)), x);
}

llvm::Expected<Value> GraphImporter::sliceAxis(Value x, int64_t axis,
                                               int64_t start, int64_t end,
                                               int64_t step) {
  return record(tfm::createAxisSlice(builder, loc, x, axis, start, end, step));
}

/// Slice before opset 10: starts, ends and axes are attributes.
llvm::Expected<Value>
GraphImporter::importSliceAttributes(ArrayRef<Value> in) {
  auto ints = [&](StringRef name) {
    const onnx::AttributeProto *a = attribute(name);
    return a ? SmallVector<int64_t>(a->ints().begin(), a->ints().end())
             : SmallVector<int64_t>();
  };
  return slice(in[0], ints("starts"), ints("ends"), ints("axes"), {});
}

llvm::Expected<Value> GraphImporter::importSlice(ArrayRef<Value> in) {
  SmallVector<int64_t> axes, steps;
  auto starts = knownInts(in[1], "starts");
  auto ends = knownInts(in[2], "ends");
  if (!starts || !ends) {
    llvm::consumeError(ends.takeError());
    return starts ? nodeError("ends must be computable from constants and "
                              "shapes")
                  : starts.takeError();
  }
  for (auto [index, target] :
       {std::pair{size_t(3), &axes}, std::pair{size_t(4), &steps}}) {
    if (in.size() <= index || !in[index])
      continue;
    auto values = knownInts(in[index], index == 3 ? "axes" : "steps");
    if (!values)
      return values.takeError();
    *target = *values;
  }
  return slice(in[0], *starts, *ends, axes, steps);
}

llvm::Expected<Value> GraphImporter::slice(Value x, ArrayRef<int64_t> starts,
                                           ArrayRef<int64_t> ends,
                                           SmallVector<int64_t> axes,
                                           SmallVector<int64_t> steps) {
  ArrayRef<int64_t> input = shapeOf(x);
  int64_t rank = input.size();
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return nodeError("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> fullStarts(rank, 0), fullEnds(input),
      fullSteps(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = normalizeAxis(axes[i], rank);
    if (!axis)
      return axis.takeError();
    if (seen[*axis])
      return nodeError("axes repeat " + llvm::Twine(*axis));
    seen[*axis] = true;
    int64_t dim = input[*axis], step = steps[i];
    if (step == 0)
      return nodeError("a step is zero");
    // ONNX's clamping: [0, dim] for positive steps, [-1, dim - 1] for
    // negative ones (where -1 means "before the first element").
    auto clampIndex = [&](int64_t v, bool isEnd) {
      if (v < 0)
        v = v < -dim ? -1 : v + dim; // saturating: INT64_MIN stays negative
      if (step > 0)
        return std::clamp<int64_t>(v, 0, dim);
      // (an empty dimension leaves only -1, "before the first element")
      return std::clamp<int64_t>(v, std::min<int64_t>(isEnd ? -1 : 0, dim - 1),
                                 dim - 1);
    };
    fullStarts[*axis] = clampIndex(starts[i], false);
    fullEnds[*axis] = clampIndex(ends[i], true);
    fullSteps[*axis] = step;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(tfm::sliceLength(fullStarts[d], fullEnds[d], fullSteps[d]));
  return create<tfm::SliceOp>(tensorType(shape, elementOf(x)), x, fullStarts,
                              fullEnds, fullSteps);
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importSplit(ArrayRef<Value> in) {
  Value x = in[0];
  auto axis = normalizeAxis(intAttr("axis", 0), shapeOf(x).size());
  if (!axis)
    return axis.takeError();
  int64_t dim = shapeOf(x)[*axis];
  bool present = false;
  auto sizes = intsFromAttrOrInput("split", in, 1, present);
  if (!sizes)
    return sizes.takeError();
  if (!present) {
    int64_t parts = intAttr("num_outputs", node->output_size());
    if (parts <= 0)
      return nodeError("has no outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes->push_back(std::max<int64_t>(
          std::min(chunk, dim - i * chunk), 0));
  }
  int64_t total = 0;
  for (int64_t s : *sizes)
    total += s;
  if (total != dim || llvm::any_of(*sizes, [](int64_t s) { return s < 0; }))
    return nodeError("split sizes do not add up to " + llvm::Twine(dim));
  SmallVector<Value> results;
  int64_t start = 0;
  for (int64_t size : *sizes) {
    auto part = sliceAxis(x, *axis, start, start + size, 1);
    if (!part)
      return part.takeError();
    results.push_back(*part);
    start += size;
  }
  return results;
}
