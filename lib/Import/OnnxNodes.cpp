//===- OnnxNodes.cpp - The ONNX op dispatch table and compute ops ---------===//
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

/// How one ONNX op type imports from opset `since` on, up to the next entry
/// of the same type: the inputs it takes and the function that builds it.
struct GraphImporter::OpImporter {
  int64_t since;
  size_t minInputs, maxInputs;
  ImportFunction import;
};

/// The import of each supported default-domain op type, by opset (as
/// onnx-mlir's importer dispatches); versions whose semantics differ have
/// their own entries, and every type has one from opset 1.
const llvm::StringMap<SmallVector<GraphImporter::OpImporter, 1>> &
GraphImporter::opImporters() {
  using G = GraphImporter;
  constexpr size_t kAny = size_t(1) << 20;
  static const llvm::StringMap<SmallVector<OpImporter, 1>> table = {
      {"Neg", {{1, 1, 1, &G::importUnary<tfm::NegOp>}}},
      {"Sqrt", {{1, 1, 1, &G::importUnary<tfm::SqrtOp>}}},
      {"Reciprocal", {{1, 1, 1, &G::importUnary<tfm::ReciprocalOp>}}},
      {"Sigmoid", {{1, 1, 1, &G::importUnary<tfm::SigmoidOp>}}},
      {"Exp", {{1, 1, 1, &G::importUnary<tfm::ExpOp>}}},
      {"Cos", {{1, 1, 1, &G::importUnary<tfm::CosOp>}}},
      {"Sin", {{1, 1, 1, &G::importUnary<tfm::SinOp>}}},
      {"Tanh", {{1, 1, 1, &G::importUnary<tfm::TanhOp>}}},
      {"Erf", {{1, 1, 1, &G::importUnary<tfm::ErfOp>}}},
      {"Abs", {{1, 1, 1, &G::importUnary<tfm::AbsOp>}}},
      {"Relu", {{1, 1, 1, &G::importUnary<tfm::ReluOp>}}},
      {"Not", {{1, 1, 1, &G::importUnary<tfm::NotOp>}}},
      {"Identity", {{1, 1, 1, &G::importIdentity}}},
      {"Dropout", {{1, 1, 3, &G::importIdentity}}},
      {"Cast", {{1, 1, 1, &G::single<&G::importCast>}}},
      {"Add", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Sub", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Mul", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Div", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Pow", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Max", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Min", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Equal", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Less", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"LessOrEqual", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Greater", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"GreaterOrEqual", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"And", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Or", {{1, 2, 2, &G::single<&G::importBinary>}}},
      {"Where", {{1, 3, 3, &G::importWhere}}},
      {"MatMul", {{1, 2, 2, &G::single<&G::importMatMulNode>}}},
      {"Gemm", {{1, 2, 3, &G::single<&G::importGemm>}}},
      {"ReduceMean", {{1, 1, 2, &G::single<&G::importReduce>}}},
      {"ReduceSum", {{1, 1, 2, &G::single<&G::importReduce>}}},
      {"ReduceMax", {{1, 1, 2, &G::single<&G::importReduce>}}},
      // Opset 13 changed the default axis and dropped the flattening.
      {"Softmax",
       {{1, 1, 1, &G::importSoftmaxFlattening}, {13, 1, 1, &G::importSoftmax}}},
      {"Transpose", {{1, 1, 1, &G::importTranspose}}},
      {"Reshape", {{1, 2, 2, &G::single<&G::importReshape>}}},
      {"Squeeze", {{1, 1, 2, &G::single<&G::importSqueeze>}}},
      {"Unsqueeze", {{1, 1, 2, &G::single<&G::importSqueeze>}}},
      {"Flatten", {{1, 1, 1, &G::importFlatten}}},
      {"Expand", {{1, 2, 2, &G::importExpand}}},
      {"Tile", {{1, 2, 2, &G::importTile}}},
      {"Concat", {{1, 1, kAny, &G::importConcat}}},
      // Opset 10 moved starts, ends and axes from attributes to inputs.
      {"Slice",
       {{1, 1, 1, &G::single<&G::importSliceAttributes>},
        {10, 3, 5, &G::single<&G::importSlice>}}},
      {"Split", {{1, 1, 2, &G::importSplit}}},
      {"Gather", {{1, 2, 2, &G::importGather}}},
      {"Shape", {{1, 1, 1, &G::importShape}}},
      {"ConstantOfShape", {{1, 1, 1, &G::importConstantOfShape}}},
      {"Range", {{1, 3, 3, &G::importRange}}},
      {"Trilu", {{1, 1, 2, &G::importTrilu}}},
      {"Constant", {{1, 0, 0, &G::single<&G::importConstant>}}},
  };
  return table;
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importOp(const onnx::NodeProto &n, ArrayRef<Value> inputs) {
  auto found = opImporters().find(n.op_type());
  if (found == opImporters().end())
    return nodeError("unsupported op");
  // The newest entry that covers the model's opset.
  const OpImporter *entry = nullptr;
  for (const OpImporter &candidate : found->second)
    if (candidate.since <= opset)
      entry = &candidate;
  assert(entry && "every op type has an importer from opset 1");
  bool ok = inputs.size() >= entry->minInputs &&
            inputs.size() <= entry->maxInputs;
  for (size_t i = 0; ok && i < entry->minInputs; ++i)
    ok = bool(inputs[i]);
  if (!ok)
    return nodeError("expects " + llvm::Twine(entry->minInputs) +
                     (entry->minInputs == entry->maxInputs
                          ? ""
                          : " to " + llvm::Twine(entry->maxInputs)) +
                     " inputs");
  return (this->*entry->import)(inputs);
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importIdentity(ArrayRef<Value> in) {
  return SmallVector<Value>{in[0]};
}

llvm::Expected<Value> GraphImporter::importMatMulNode(ArrayRef<Value> in) {
  return importMatMul(in[0], in[1]);
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importWhere(ArrayRef<Value> in) {
  Value x = in[0];
  auto both = tfm::broadcastShapes(shapeOf(in[1]), shapeOf(in[2]));
  auto all = succeeded(both) ? tfm::broadcastShapes(shapeOf(x), *both) : both;
  if (failed(all))
    return nodeError("operand shapes do not broadcast");
  if (!elementOf(x).isInteger(1))
    return nodeError("condition must be bool");
  return SmallVector<Value>{create<tfm::WhereOp>(
      tensorType(*all, elementOf(in[1])), x, in[1], in[2])};
}

/// Softmax before opset 13 flattens the input at `axis` (default 1); only
/// the case where that is the last axis means the same as a softmax along
/// it.
llvm::Expected<SmallVector<Value>>
GraphImporter::importSoftmaxFlattening(ArrayRef<Value> in) {
  int64_t rank = shapeOf(in[0]).size();
  auto axis = normalizeAxis(intAttr("axis", 1), rank);
  if (!axis)
    return axis.takeError();
  if (*axis != rank - 1)
    return nodeError("Softmax before opset 13 over axis " + llvm::Twine(*axis) +
                     " of a rank-" + llvm::Twine(rank) +
                     " input (flattening semantics) is not supported");
  return softmax(in[0], *axis);
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importSoftmax(ArrayRef<Value> in) {
  auto axis = normalizeAxis(intAttr("axis", -1), shapeOf(in[0]).size());
  if (!axis)
    return axis.takeError();
  return softmax(in[0], *axis);
}

llvm::Expected<SmallVector<Value>> GraphImporter::softmax(Value x,
                                                          int64_t axis) {
  if (!elementOf(x).isF32())
    return nodeError("input must be float");
  return SmallVector<Value>{create<tfm::SoftmaxOp>(
      x.getType(), x, builder.getI64IntegerAttr(axis))};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importConstantOfShape(ArrayRef<Value> in) {
  auto shape = knownInts(in[0], "the shape");
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
          : TypedAttr(
                builder.getIntegerAttr(element, eval::toIndex(fill.data[0])));
  return SmallVector<Value>{
      create<tfm::ConstantOfShapeOp>(tensorType(*shape, element), value)};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importRange(ArrayRef<Value> in) {
  auto start = knownScalar(in[0], "start");
  auto limit = knownScalar(in[1], "limit");
  auto delta = knownScalar(in[2], "delta");
  if (!start || !limit || !delta) {
    llvm::consumeError(limit.takeError());
    llvm::consumeError(delta.takeError());
    return start ? nodeError("limit and delta must be scalars computable "
                             "from constants and shapes")
                 : start.takeError();
  }
  if (*delta == 0)
    return nodeError("delta is zero");
  std::optional<int64_t> count = tfm::rangeLength(*start, *limit, *delta);
  if (!count)
    return nodeError("the range has no finite length below 2^40");
  return SmallVector<Value>{create<tfm::RangeOp>(
      tensorType({*count}, elementOf(in[0])), builder.getF64FloatAttr(*start),
      builder.getF64FloatAttr(*limit), builder.getF64FloatAttr(*delta))};
}

llvm::Expected<SmallVector<Value>>
GraphImporter::importTrilu(ArrayRef<Value> in) {
  Value x = in[0];
  int64_t k = 0;
  if (in.size() > 1 && in[1]) {
    auto value = knownScalar(in[1], "k");
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

llvm::Expected<Value> GraphImporter::importConstant(ArrayRef<Value>) {
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

llvm::Expected<Value> GraphImporter::importCast(ArrayRef<Value> in) {
  Value x = in[0];
  auto element = elementType(builder, intAttr("to", 0),
                             path + ": node '" + nodeName + "' (Cast) target");
  if (!element)
    return element.takeError();
  if (*element == elementOf(x))
    return x;
  return create<tfm::CastOp>(tensorType(shapeOf(x), *element), x);
}
