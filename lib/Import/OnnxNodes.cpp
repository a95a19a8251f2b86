//===- OnnxNodes.cpp - One import function per ONNX op --------------------===//
//
// Each ONNX node becomes tfm ops with static result types. Inputs that decide
// a result's shape (Reshape's shape, Slice's starts, axes, ...) must have
// values known at import: constants, or computations on constants and static
// shapes, which GraphImporter::record evaluates as it builds them. Those
// computations stay in the IR until tfm-fold-shapes removes them.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::onnx_import;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importOp(const onnx::NodeProto &n, ArrayRef<Value> inputs) {
  const std::string &op = n.op_type();
  auto single = [](llvm::Expected<Value> v) -> llvm::Expected<SmallVector<Value>> {
    if (!v)
      return v.takeError();
    return SmallVector<Value>{*v};
  };
  auto expectInputs = [&](size_t lo, size_t hi) -> llvm::Error {
    bool ok = inputs.size() >= lo && inputs.size() <= hi;
    for (size_t i = 0; ok && i < lo; ++i)
      ok = bool(inputs[i]);
    if (ok)
      return llvm::Error::success();
    return nodeError("expects " + llvm::Twine(lo) +
                     (lo == hi ? "" : " to " + llvm::Twine(hi)) + " inputs");
  };
  auto arity = [&]() -> std::pair<size_t, size_t> {
    static const llvm::StringMap<std::pair<size_t, size_t>> table = {
        {"Neg", {1, 1}}, {"Sqrt", {1, 1}}, {"Reciprocal", {1, 1}},
        {"Sigmoid", {1, 1}}, {"Exp", {1, 1}}, {"Cos", {1, 1}},
        {"Sin", {1, 1}}, {"Tanh", {1, 1}}, {"Erf", {1, 1}}, {"Abs", {1, 1}},
        {"Relu", {1, 1}}, {"Not", {1, 1}}, {"Identity", {1, 1}},
        {"Dropout", {1, 3}}, {"Cast", {1, 1}}, {"Add", {2, 2}},
        {"Sub", {2, 2}}, {"Mul", {2, 2}}, {"Div", {2, 2}}, {"Pow", {2, 2}},
        {"Max", {2, 2}}, {"Min", {2, 2}}, {"Equal", {2, 2}},
        {"Less", {2, 2}}, {"LessOrEqual", {2, 2}}, {"Greater", {2, 2}},
        {"GreaterOrEqual", {2, 2}}, {"And", {2, 2}}, {"Or", {2, 2}},
        {"Where", {3, 3}}, {"MatMul", {2, 2}}, {"Gemm", {2, 3}},
        {"ReduceMean", {1, 2}}, {"ReduceSum", {1, 2}}, {"ReduceMax", {1, 2}},
        {"Softmax", {1, 1}}, {"Transpose", {1, 1}}, {"Reshape", {2, 2}},
        {"Squeeze", {1, 2}}, {"Unsqueeze", {1, 2}}, {"Flatten", {1, 1}},
        {"Expand", {2, 2}}, {"Tile", {2, 2}}, {"Concat", {1, 1 << 20}}, {"Slice", {1, 5}},
        {"Split", {1, 2}}, {"Gather", {2, 2}}, {"Shape", {1, 1}},
        {"ConstantOfShape", {1, 1}}, {"Range", {3, 3}}, {"Trilu", {1, 2}},
        {"Constant", {0, 0}}};
    auto it = table.find(op);
    return it == table.end() ? std::pair<size_t, size_t>{0, 0} : it->second;
  };
  if (op != "Constant" && arity().second == 0)
    return nodeError("unsupported op");
  auto [lo, hi] = arity();
  if (llvm::Error e = expectInputs(lo, hi))
    return std::move(e);

  Value x = inputs.empty() ? Value() : inputs[0];
  auto unary = [&](auto tag) -> Value {
    using OpTy = decltype(tag);
    return create<OpTy>(x.getType(), x);
  };
  if (op == "Neg")
    return SmallVector<Value>{unary(tfm::NegOp())};
  if (op == "Sqrt")
    return SmallVector<Value>{unary(tfm::SqrtOp())};
  if (op == "Reciprocal")
    return SmallVector<Value>{unary(tfm::ReciprocalOp())};
  if (op == "Sigmoid")
    return SmallVector<Value>{unary(tfm::SigmoidOp())};
  if (op == "Exp")
    return SmallVector<Value>{unary(tfm::ExpOp())};
  if (op == "Cos")
    return SmallVector<Value>{unary(tfm::CosOp())};
  if (op == "Sin")
    return SmallVector<Value>{unary(tfm::SinOp())};
  if (op == "Tanh")
    return SmallVector<Value>{unary(tfm::TanhOp())};
  if (op == "Erf")
    return SmallVector<Value>{unary(tfm::ErfOp())};
  if (op == "Abs")
    return SmallVector<Value>{unary(tfm::AbsOp())};
  if (op == "Relu")
    return SmallVector<Value>{unary(tfm::ReluOp())};
  if (op == "Not")
    return SmallVector<Value>{unary(tfm::NotOp())};
  if (op == "Identity" || op == "Dropout")
    return SmallVector<Value>{x};
  if (op == "Cast")
    return single(importCast(x));
  if (op == "Where") {
    auto both = tfm::broadcastShapes(shapeOf(inputs[1]), shapeOf(inputs[2]));
    auto all = succeeded(both) ? tfm::broadcastShapes(shapeOf(x), *both)
                               : both;
    if (failed(all))
      return nodeError("operand shapes do not broadcast");
    if (!elementOf(x).isInteger(1))
      return nodeError("condition must be bool");
    return SmallVector<Value>{
        create<tfm::WhereOp>(tensorType(*all, elementOf(inputs[1])), x,
                             inputs[1], inputs[2])};
  }
  if (op == "MatMul")
    return single(importMatMul(inputs[0], inputs[1]));
  if (op == "Gemm")
    return single(importGemm(inputs));
  if (op.rfind("Reduce", 0) == 0)
    return single(importReduce(inputs));
  if (op == "Softmax") {
    int64_t rank = shapeOf(x).size();
    auto axis = normalizeAxis(intAttr("axis", opset >= 13 ? -1 : 1), rank);
    if (!axis)
      return axis.takeError();
    if (opset < 13 && *axis != rank - 1)
      return nodeError("Softmax before opset 13 over axis " +
                       llvm::Twine(*axis) +
                       " of a rank-" + llvm::Twine(rank) +
                       " input (flattening semantics) is not supported");
    if (!elementOf(x).isF32())
      return nodeError("input must be float");
    return SmallVector<Value>{create<tfm::SoftmaxOp>(
        x.getType(), x, builder.getI64IntegerAttr(*axis))};
  }
  if (op == "Transpose") {
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
    return SmallVector<Value>{create<tfm::TransposeOp>(
        tensorType(result, elementOf(x)), x, perm)};
  }
  if (op == "Reshape")
    return single(importReshape(inputs));
  if (op == "Squeeze" || op == "Unsqueeze")
    return single(importSqueeze(inputs, op == "Unsqueeze"));
  if (op == "Flatten") {
    ArrayRef<int64_t> shape = shapeOf(x);
    int64_t axis = intAttr("axis", 1);
    if (axis < 0)
      axis += shape.size();
    if (axis < 0 || axis > int64_t(shape.size()))
      return nodeError("axis is out of range");
    int64_t outer = eval::elementCount(shape.take_front(axis));
    int64_t inner = eval::elementCount(shape.drop_front(axis));
    return SmallVector<Value>{create<tfm::ReshapeOp>(
        tensorType({outer, inner}, elementOf(x)), x)};
  }
  if (op == "Expand") {
    auto target = knownInts(inputs[1], "the shape");
    if (!target)
      return target.takeError();
    auto shape = tfm::broadcastShapes(shapeOf(x), *target);
    if (failed(shape))
      return nodeError("input does not broadcast to the shape");
    return SmallVector<Value>{
        create<tfm::ExpandOp>(tensorType(*shape, elementOf(x)), x)};
  }
  if (op == "Tile") {
    // Tile is data movement: [s0, s1, ...] -> reshape [1, s0, 1, s1, ...]
    // -> expand [r0, s0, r1, s1, ...] -> reshape [r0*s0, r1*s1, ...].
    auto repeats = knownInts(inputs[1], "the repeats");
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
  if (op == "Concat") {
    for (Value v : inputs)
      if (!v || shapeOf(v).size() != shapeOf(x).size())
        return nodeError("inputs have different ranks");
    auto axis = normalizeAxis(intAttr("axis", 0), shapeOf(x).size());
    if (!axis)
      return axis.takeError();
    SmallVector<int64_t> shape(shapeOf(x));
    shape[*axis] = 0;
    for (Value v : inputs) {
      for (size_t d = 0; d < shape.size(); ++d)
        if (int64_t(d) != *axis && shapeOf(v)[d] != shape[d])
          return nodeError("inputs differ outside the concatenation axis");
      shape[*axis] += shapeOf(v)[*axis];
    }
    return SmallVector<Value>{create<tfm::ConcatOp>(
        tensorType(shape, elementOf(x)), inputs,
        builder.getI64IntegerAttr(*axis))};
  }
  if (op == "Slice")
    return single(importSlice(inputs));
  if (op == "Split")
    return importSplit(inputs, n.output_size());
  if (op == "Gather") {
    auto axis = normalizeAxis(intAttr("axis", 0), shapeOf(x).size());
    if (!axis)
      return axis.takeError();
    if (!elementOf(inputs[1]).isInteger(64))
      return nodeError("indices must be integers");
    return SmallVector<Value>{create<tfm::GatherOp>(
        tensorType(tfm::gatherShape(shapeOf(x), shapeOf(inputs[1]), *axis),
                   elementOf(x)),
        x, inputs[1], builder.getI64IntegerAttr(*axis))};
  }
  if (op == "Shape") {
    int64_t rank = shapeOf(x).size();
    Value shape = create<tfm::ShapeOp>(
        tensorType({rank}, builder.getI64Type()), x);
    int64_t start = intAttr("start", 0), end = intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    if (start == 0 && end == rank)
      return SmallVector<Value>{shape};
    return single(sliceAxis(shape, 0, start, end, 1));
  }
  if (op == "ConstantOfShape") {
    auto shape = knownInts(x, "the shape");
    if (!shape)
      return shape.takeError();
    eval::Tensor fill(eval::ElementKind::F32, {1}, 0.0);
    Type element = builder.getF32Type();
    if (const onnx::AttributeProto *a = attribute("value")) {
      auto type = elementType(builder, a->t().data_type(),
                              "node '" + nodeName + "' value");
      if (!type)
        return type.takeError();
      auto value = readTensorProto(a->t(), modelDir, "node '" + nodeName + "'");
      if (!value)
        return value.takeError();
      if (value->size() != 1)
        return nodeError("value must hold one element");
      fill = *value;
      element = *type;
    }
    TypedAttr value =
        element.isF32()
            ? TypedAttr(builder.getF32FloatAttr(float(fill.data[0])))
            : TypedAttr(builder.getIntegerAttr(element,
                                               eval::toIndex(fill.data[0])));
    return SmallVector<Value>{create<tfm::ConstantOfShapeOp>(
        tensorType(*shape, element), value)};
  }
  if (op == "Range") {
    auto start = knownScalar(inputs[0], "start");
    auto limit = knownScalar(inputs[1], "limit");
    auto delta = knownScalar(inputs[2], "delta");
    if (!start || !limit || !delta) {
      llvm::consumeError(limit.takeError());
      llvm::consumeError(delta.takeError());
      return start ? nodeError("limit and delta must be scalars computable "
                               "from constants and shapes")
                   : start.takeError();
    }
    if (*delta == 0)
      return nodeError("delta is zero");
    int64_t count = std::max<int64_t>(
        int64_t(std::ceil((*limit - *start) / *delta)), 0);
    return SmallVector<Value>{create<tfm::RangeOp>(
        tensorType({count}, elementOf(x)), builder.getF64FloatAttr(*start),
        builder.getF64FloatAttr(*limit), builder.getF64FloatAttr(*delta))};
  }
  if (op == "Trilu") {
    int64_t k = 0;
    if (inputs.size() > 1 && inputs[1]) {
      auto value = knownScalar(inputs[1], "k");
      if (!value)
        return value.takeError();
      k = eval::toIndex(*value);
    }
    if (shapeOf(x).size() < 2)
      return nodeError("input must have rank 2 or more");
    return SmallVector<Value>{create<tfm::TriluOp>(
        x.getType(), x, builder.getBoolAttr(intAttr("upper", 1) != 0),
        builder.getI64IntegerAttr(k))};
  }
  if (op == "Constant")
    return single(importConstant());
  return single(importBinary(inputs));
}

llvm::Expected<Value> GraphImporter::importBinary(ArrayRef<Value> in) {
  const std::string &op = node->op_type();
  auto shape = tfm::broadcastShapes(shapeOf(in[0]), shapeOf(in[1]));
  if (failed(shape))
    return nodeError("operand shapes " + shapeText(shapeOf(in[0])) + " and " +
                     shapeText(shapeOf(in[1])) + " do not broadcast");
  Type lhs = elementOf(in[0]), rhs = elementOf(in[1]);
  if (op != "Pow" && lhs != rhs)
    return nodeError("operands have different element types");
  bool isPredicate = op == "Equal" || op == "Less" || op == "LessOrEqual" ||
                     op == "Greater" || op == "GreaterOrEqual" || op == "And" ||
                     op == "Or";
  Type type = tensorType(*shape, isPredicate ? builder.getI1Type() : lhs);
  if ((op == "And" || op == "Or") && !lhs.isInteger(1))
    return nodeError("operands must be bool");
  if (op == "Add")
    return create<tfm::AddOp>(type, in[0], in[1]);
  if (op == "Sub")
    return create<tfm::SubOp>(type, in[0], in[1]);
  if (op == "Mul")
    return create<tfm::MulOp>(type, in[0], in[1]);
  if (op == "Div")
    return create<tfm::DivOp>(type, in[0], in[1]);
  if (op == "Pow")
    return create<tfm::PowOp>(type, in[0], in[1]);
  if (op == "Max")
    return create<tfm::MaxOp>(type, in[0], in[1]);
  if (op == "Min")
    return create<tfm::MinOp>(type, in[0], in[1]);
  if (op == "Equal")
    return create<tfm::EqualOp>(type, in[0], in[1]);
  if (op == "Less")
    return create<tfm::LessOp>(type, in[0], in[1]);
  if (op == "LessOrEqual")
    return create<tfm::LessOrEqualOp>(type, in[0], in[1]);
  if (op == "Greater")
    return create<tfm::GreaterOp>(type, in[0], in[1]);
  if (op == "GreaterOrEqual")
    return create<tfm::GreaterOrEqualOp>(type, in[0], in[1]);
  if (op == "And")
    return create<tfm::AndOp>(type, in[0], in[1]);
  return create<tfm::OrOp>(type, in[0], in[1]);
}

llvm::Expected<Value> GraphImporter::importMatMul(Value a, Value b) {
  if (!elementOf(a).isF32() || !elementOf(b).isF32())
    return nodeError("operands must be float");
  auto shape = tfm::matmulShape(shapeOf(a), shapeOf(b));
  if (failed(shape))
    return nodeError("operand shapes do not agree for a matrix product");
  return create<tfm::MatMulOp>(tensorType(*shape, elementOf(a)), a, b);
}

llvm::Expected<Value> GraphImporter::importGemm(ArrayRef<Value> in) {
  auto floatAttr = [&](StringRef name, float fallback) {
    const onnx::AttributeProto *a = attribute(name);
    return a ? a->f() : fallback;
  };
  Value a = in[0], b = in[1];
  if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
    return nodeError("Gemm needs matrix operands");
  auto transposed = [&](Value v) {
    ArrayRef<int64_t> s = shapeOf(v);
    return create<tfm::TransposeOp>(tensorType({s[1], s[0]}, elementOf(v)), v,
                                    ArrayRef<int64_t>{1, 0});
  };
  if (intAttr("transA", 0))
    a = transposed(a);
  if (intAttr("transB", 0))
    b = transposed(b);
  auto product = importMatMul(a, b);
  if (!product)
    return product.takeError();
  Value y = *product;
  float alpha = floatAttr("alpha", 1.0f), beta = floatAttr("beta", 1.0f);
  bool hasBias = in.size() > 2 && in[2] && beta != 0.0f;
  // alpha*AB + beta*C = beta * ((alpha/beta)*AB + C): every op then has the
  // product as an operand, so the bias is only ever broadcast on the host.
  auto scale = [&](Value v, float factor) -> Value {
    if (factor == 1.0f)
      return v;
    Value c = constant(eval::Tensor(eval::ElementKind::F32, {}, factor),
                       builder.getF32Type());
    return create<tfm::MulOp>(v.getType(), v, c);
  };
  y = scale(y, hasBias ? alpha / beta : alpha);
  if (hasBias) {
    auto shape = tfm::broadcastShapes(shapeOf(y), shapeOf(in[2]));
    if (failed(shape) || ArrayRef<int64_t>(*shape) != shapeOf(y))
      return nodeError("bias C does not broadcast to the product");
    y = scale(create<tfm::AddOp>(y.getType(), y, in[2]), beta);
  }
  return y;
}

llvm::Expected<Value> GraphImporter::importReduce(ArrayRef<Value> in) {
  const std::string &op = node->op_type();
  Value x = in[0];
  int64_t rank = shapeOf(x).size();
  bool present = false;
  auto axes = intsFromAttrOrInput("axes", in, 1, present);
  if (!axes)
    return axes.takeError();
  if (axes->empty()) {
    if (intAttr("noop_with_empty_axes", 0))
      return x;
    for (int64_t d = 0; d < rank; ++d)
      axes->push_back(d);
  }
  for (int64_t &axis : *axes) {
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return normalized.takeError();
    axis = *normalized;
  }
  llvm::sort(*axes);
  axes->erase(std::unique(axes->begin(), axes->end()), axes->end());
  bool keepdims = intAttr("keepdims", 1) != 0;
  Type type = tensorType(tfm::reduceShape(shapeOf(x), *axes, keepdims),
                         elementOf(x));
  auto axesAttr = builder.getDenseI64ArrayAttr(*axes);
  auto keepAttr = builder.getBoolAttr(keepdims);
  if (op == "ReduceMean")
    return create<tfm::ReduceMeanOp>(type, x, axesAttr, keepAttr);
  if (op == "ReduceSum")
    return create<tfm::ReduceSumOp>(type, x, axesAttr, keepAttr);
  return create<tfm::ReduceMaxOp>(type, x, axesAttr, keepAttr);
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
    product *= d;
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

llvm::Expected<Value> GraphImporter::importSqueeze(ArrayRef<Value> in,
                                                   bool unsqueeze) {
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
  ArrayRef<int64_t> input = shapeOf(x);
  SmallVector<int64_t> starts(input.size(), 0), ends(input), steps(
                                                               input.size(), 1);
  starts[axis] = start;
  ends[axis] = end;
  steps[axis] = step;
  SmallVector<int64_t> shape(input);
  shape[axis] = tfm::sliceLength(start, end, step);
  return create<tfm::SliceOp>(tensorType(shape, elementOf(x)), x, starts, ends,
                              steps);
}

llvm::Expected<Value> GraphImporter::importSlice(ArrayRef<Value> in) {
  Value x = in[0];
  ArrayRef<int64_t> input = shapeOf(x);
  int64_t rank = input.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset < 10) {
    auto ints = [&](StringRef name) {
      const onnx::AttributeProto *a = attribute(name);
      return a ? SmallVector<int64_t>(a->ints().begin(), a->ints().end())
               : SmallVector<int64_t>();
    };
    starts = ints("starts");
    ends = ints("ends");
    axes = ints("axes");
  } else {
    if (in.size() < 3 || !in[1] || !in[2])
      return nodeError("expects starts and ends inputs");
    auto s = knownInts(in[1], "starts");
    auto e = knownInts(in[2], "ends");
    if (!s || !e) {
      llvm::consumeError(e.takeError());
      return s ? nodeError("ends must be computable from constants and shapes")
               : s.takeError();
    }
    starts = *s;
    ends = *e;
    for (auto [index, target] : {std::pair{size_t(3), &axes},
                                 std::pair{size_t(4), &steps}}) {
      if (in.size() <= index || !in[index])
        continue;
      auto values = knownInts(in[index], index == 3 ? "axes" : "steps");
      if (!values)
        return values.takeError();
      *target = *values;
    }
  }
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
GraphImporter::importSplit(ArrayRef<Value> in, size_t outputs) {
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
    int64_t parts = intAttr("num_outputs", outputs);
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

llvm::Expected<Value> GraphImporter::importConstant() {
  std::string where = path + ": node '" + nodeName + "' (Constant)";
  if (const onnx::AttributeProto *a = attribute("value")) {
    auto element = elementType(builder, a->t().data_type(), where);
    if (!element)
      return element.takeError();
    auto value = readTensorProto(a->t(), modelDir, where);
    if (!value)
      return value.takeError();
    return constant(*value, *element);
  }
  if (const onnx::AttributeProto *a = attribute("value_float"))
    return constant(eval::Tensor(eval::ElementKind::F32, {}, a->f()),
                    builder.getF32Type());
  if (const onnx::AttributeProto *a = attribute("value_int"))
    return constant(eval::Tensor(eval::ElementKind::I64, {}, double(a->i())),
                    builder.getI64Type());
  if (const onnx::AttributeProto *a = attribute("value_floats")) {
    eval::Tensor t(eval::ElementKind::F32, {a->floats_size()});
    for (int i = 0; i < a->floats_size(); ++i)
      t.data[i] = a->floats(i);
    return constant(t, builder.getF32Type());
  }
  if (const onnx::AttributeProto *a = attribute("value_ints")) {
    eval::Tensor t(eval::ElementKind::I64, {a->ints_size()});
    for (int i = 0; i < a->ints_size(); ++i)
      t.data[i] = double(a->ints(i));
    return constant(t, builder.getI64Type());
  }
  return nodeError("has no supported value attribute");
}

llvm::Expected<Value> GraphImporter::importCast(Value x) {
  auto element = elementType(builder, intAttr("to", 0),
                             path + ": node '" + nodeName + "' (Cast) target");
  if (!element)
    return element.takeError();
  if (*element == elementOf(x))
    return x;
  return create<tfm::CastOp>(tensorType(shapeOf(x), *element), x);
}
