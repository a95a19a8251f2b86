//===- Evaluator.cpp - Host evaluation of tfm modules ---------------------===//
#include "wafer/Eval/Evaluator.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::eval;

ElementKind eval::kindOf(Type elementType) {
  if (elementType.isInteger(1))
    return ElementKind::Bool;
  if (elementType.isInteger(64))
    return ElementKind::I64;
  return ElementKind::F32;
}

static ElementKind resultKind(Operation *op) {
  return kindOf(llvm::cast<RankedTensorType>(op->getResult(0).getType())
                    .getElementType());
}

Tensor eval::tensorFromAttr(ElementsAttr attr) {
  auto type = llvm::cast<RankedTensorType>(attr.getType());
  Tensor tensor(kindOf(type.getElementType()), std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
  // f32 values read as floats; only other float types go through APFloat,
  // which is ten times slower (2^24-element masks at a 4096-token context).
  if (tensor.kind == ElementKind::F32) {
    if (auto floats = attr.tryGetValues<float>()) {
      for (auto [i, v] : llvm::enumerate(*floats))
        tensor.data[i] = v;
    } else {
      for (auto [i, v] : llvm::enumerate(attr.getValues<APFloat>()))
        tensor.data[i] = v.convertToDouble();
    }
  } else {
    bool isBool = tensor.kind == ElementKind::Bool;
    for (auto [i, v] : llvm::enumerate(attr.getValues<APInt>()))
      tensor.data[i] = isBool ? double(v.getBoolValue())
                              : double(v.getSExtValue());
  }
  return tensor;
}

DenseElementsAttr eval::attrFromTensor(const Tensor &tensor,
                                       RankedTensorType type) {
  switch (tensor.kind) {
  case ElementKind::F32: {
    SmallVector<float> values(tensor.data.begin(), tensor.data.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  case ElementKind::I64: {
    SmallVector<int64_t> values;
    for (double v : tensor.data)
      values.push_back(toIndex(v));
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  case ElementKind::Bool: {
    SmallVector<bool> values;
    for (double v : tensor.data)
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  }
  llvm_unreachable("unknown element kind");
}

static std::optional<UnaryFn> unaryFn(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<UnaryFn>>(op)
      .Case([](tfm::NegOp) { return UnaryFn::Neg; })
      .Case([](tfm::SqrtOp) { return UnaryFn::Sqrt; })
      .Case([](tfm::ReciprocalOp) { return UnaryFn::Reciprocal; })
      .Case([](tfm::SigmoidOp) { return UnaryFn::Sigmoid; })
      .Case([](tfm::ExpOp) { return UnaryFn::Exp; })
      .Case([](tfm::CosOp) { return UnaryFn::Cos; })
      .Case([](tfm::SinOp) { return UnaryFn::Sin; })
      .Case([](tfm::TanhOp) { return UnaryFn::Tanh; })
      .Case([](tfm::ErfOp) { return UnaryFn::Erf; })
      .Case([](tfm::AbsOp) { return UnaryFn::Abs; })
      .Case([](tfm::ReluOp) { return UnaryFn::Relu; })
      .Case([](tfm::NotOp) { return UnaryFn::Not; })
      .Case([](tfm::SiluOp) { return UnaryFn::Silu; })
      .Default([](Operation *) { return std::nullopt; });
}

static std::optional<BinaryFn> binaryFn(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<BinaryFn>>(op)
      .Case([](tfm::AddOp) { return BinaryFn::Add; })
      .Case([](tfm::SubOp) { return BinaryFn::Sub; })
      .Case([](tfm::MulOp) { return BinaryFn::Mul; })
      .Case([](tfm::DivOp) { return BinaryFn::Div; })
      .Case([](tfm::PowOp) { return BinaryFn::Pow; })
      .Case([](tfm::MaxOp) { return BinaryFn::Max; })
      .Case([](tfm::MinOp) { return BinaryFn::Min; })
      .Case([](tfm::ModOp) { return BinaryFn::Mod; })
      .Case([](tfm::EqualOp) { return BinaryFn::Equal; })
      .Case([](tfm::LessOp) { return BinaryFn::Less; })
      .Case([](tfm::LessOrEqualOp) { return BinaryFn::LessOrEqual; })
      .Case([](tfm::GreaterOp) { return BinaryFn::Greater; })
      .Case([](tfm::GreaterOrEqualOp) { return BinaryFn::GreaterOrEqual; })
      .Case([](tfm::AndOp) { return BinaryFn::And; })
      .Case([](tfm::OrOp) { return BinaryFn::Or; })
      .Default([](Operation *) { return std::nullopt; });
}

static ArrayRef<int64_t> resultShape(Operation *op) {
  return llvm::cast<RankedTensorType>(op->getResult(0).getType()).getShape();
}

/// The token-id input a lookup in a weight table reads (an embedding), if
/// the op is one: its ids must be rows of the table, as on the mesh, where
/// ONNX's negative gather indices counting from the end do not apply.
static BlockArgument tokenIds(Operation *op) {
  if (!isa<tfm::GatherOp, tfm::EmbedOp>(op) ||
      !op->getOperand(0).getDefiningOp<tfm::WeightOp>())
    return nullptr;
  if (auto gather = dyn_cast<tfm::GatherOp>(op); gather && gather.getAxis())
    return nullptr;
  return dyn_cast<BlockArgument>(op->getOperand(1));
}

/// The first index of a gather or embed outside its dimension, with the
/// dimension's size: a token id beyond the vocabulary is bad input, never a
/// read out of bounds.
static std::optional<std::pair<int64_t, int64_t>>
outOfRangeIndex(Operation *op, ArrayRef<const Tensor *> operands) {
  int64_t axis = 0;
  if (auto gather = dyn_cast<tfm::GatherOp>(op))
    axis = gather.getAxis();
  else if (!isa<tfm::EmbedOp>(op))
    return std::nullopt;
  int64_t size = operands[0]->shape[axis];
  int64_t lowest = tokenIds(op) ? 0 : -size;
  for (double index : operands[1]->data)
    if (index < lowest || index >= size)
      return std::pair{toIndex(index), size};
  return std::nullopt;
}

/// Integer Div and Mod have no value for a zero divisor (ONNX leaves it
/// undefined) nor for INT64_MIN / -1: folding or evaluating them is an error.
static std::optional<StringRef>
undefinedIntegerDivision(Operation *op, ArrayRef<const Tensor *> operands) {
  if (!isa<tfm::DivOp, tfm::ModOp>(op) || resultKind(op) != ElementKind::I64)
    return std::nullopt;
  for (double divisor : operands[1]->data)
    if (divisor == 0.0)
      return StringRef("integer division by zero");
  if (llvm::any_of(operands[0]->data,
                   [](double v) { return v <= double(INT64_MIN); }) &&
      llvm::is_contained(operands[1]->data, -1.0))
    return StringRef("integer division overflows int64");
  return std::nullopt;
}

/// Results the host cannot hold (the evaluator computes in double).
static std::optional<int64_t> oversizedResult(Operation *op) {
  for (Value result : op->getResults()) {
    auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    std::optional<int64_t> count = checkedElementCount(type.getShape());
    if (!count || *count > kMaxHostElements)
      return count.value_or(-1);
  }
  return std::nullopt;
}

FailureOr<Tensor> eval::evaluateOp(Operation *op,
                                   ArrayRef<const Tensor *> operands) {
  if (oversizedResult(op) || outOfRangeIndex(op, operands) ||
      undefinedIntegerDivision(op, operands))
    return failure();
  if (std::optional<UnaryFn> fn = unaryFn(op))
    return unary(*fn, *operands[0]);
  if (std::optional<BinaryFn> fn = binaryFn(op))
    return binary(*fn, *operands[0], *operands[1]);
  using Result = FailureOr<Tensor>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([](tfm::ConstantOp c) -> Result {
        return tensorFromAttr(c.getValue());
      })
      .Case([&](tfm::CastOp c) -> Result {
        return eval::cast(*operands[0], resultKind(c));
      })
      .Case([&](tfm::WhereOp) -> Result {
        return where(*operands[0], *operands[1], *operands[2]);
      })
      .Case([&](tfm::MatMulOp) -> Result {
        return matmul(*operands[0], *operands[1]);
      })
      .Case([&](tfm::ReduceMeanOp r) -> Result {
        return reduce(ReduceFn::Mean, *operands[0], r.getAxes(),
                      r.getKeepdims());
      })
      .Case([&](tfm::ReduceSumOp r) -> Result {
        return reduce(ReduceFn::Sum, *operands[0], r.getAxes(),
                      r.getKeepdims());
      })
      .Case([&](tfm::ReduceMaxOp r) -> Result {
        return reduce(ReduceFn::Max, *operands[0], r.getAxes(),
                      r.getKeepdims());
      })
      .Case([&](tfm::SoftmaxOp s) -> Result {
        return softmax(*operands[0], s.getAxis());
      })
      .Case([&](tfm::TransposeOp t) -> Result {
        return transpose(*operands[0], t.getPermutation());
      })
      .Case([&](tfm::ReshapeOp r) -> Result {
        return reshape(*operands[0], resultShape(r));
      })
      .Case([&](tfm::ExpandOp e) -> Result {
        return broadcastTo(*operands[0], resultShape(e));
      })
      .Case([&](tfm::ConcatOp c) -> Result {
        SmallVector<Tensor> parts;
        for (const Tensor *t : operands)
          parts.push_back(*t);
        return concat(parts, c.getAxis());
      })
      .Case([&](tfm::SliceOp s) -> Result {
        return slice(*operands[0], s.getStarts(), s.getEnds(), s.getSteps());
      })
      .Case([&](tfm::GatherOp g) -> Result {
        return gather(*operands[0], *operands[1], g.getAxis());
      })
      .Case([&](tfm::ShapeOp s) -> Result {
        auto shape = llvm::cast<RankedTensorType>(s.getInput().getType()).getShape();
        Tensor t(ElementKind::I64, {int64_t(shape.size())});
        for (auto [i, d] : llvm::enumerate(shape))
          t.data[i] = double(d);
        return t;
      })
      .Case([&](tfm::ConstantOfShapeOp c) -> Result {
        double value = 0;
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          value = f.getValueAsDouble();
        else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          value = double(i.getValue().getSExtValue());
        ArrayRef<int64_t> shape = resultShape(c);
        Tensor t(resultKind(c), {shape.begin(), shape.end()}, value);
        if (t.kind == ElementKind::F32)
          t = eval::cast(t, ElementKind::F32);
        return t;
      })
      .Case([&](tfm::RangeOp r) -> Result {
        return range(resultKind(r), r.getStart().convertToDouble(),
                     r.getLimit().convertToDouble(),
                     r.getDelta().convertToDouble());
      })
      .Case([&](tfm::TriluOp t) -> Result {
        return trilu(*operands[0], t.getUpper(), t.getK());
      })
      .Case([&](tfm::LinearOp l) -> Result {
        Tensor weight = l.getTransposeWeight()
                            ? transpose(*operands[1], {1, 0})
                            : *operands[1];
        return matmul(*operands[0], weight);
      })
      .Case([&](tfm::EmbedOp) -> Result {
        return embed(*operands[0], *operands[1]);
      })
      .Case([&](tfm::RmsNormOp r) -> Result {
        return rmsNorm(*operands[0], *operands[1],
                       r.getEpsilon().convertToDouble());
      })
      .Case([&](tfm::RopeOp r) -> Result {
        return rope(*operands[0], *operands[1], *operands[2],
                    r.getInterleaved());
      })
      .Case([&](tfm::AttentionOp a) -> Result {
        return attention(*operands[0], *operands[1], *operands[2],
                         a.getScale().convertToDouble(), a.getCausal());
      })
      .Case([&](tfm::SwigluOp) -> Result {
        return swiglu(*operands[0], *operands[1]);
      })
      .Default([](Operation *) -> Result { return failure(); });
}

static llvm::Error evalError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The op's ONNX node name when the importer recorded one.
static std::string describe(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    text += " '" + loc.getName().str() + "'";
  return text;
}

llvm::Expected<std::map<std::string, Tensor>>
eval::evaluateFunction(Operation *function,
                       const std::map<std::string, Tensor> &inputs,
                       const WeightLoader &loadWeight) {
  auto func = dyn_cast<func::FuncOp>(function);
  if (!func || func.getBody().empty())
    return evalError("expected a func.func with a body");
  llvm::DenseMap<Value, Tensor> values;
  for (BlockArgument arg : func.getArguments()) {
    std::string name = tfm::inputName(func, arg.getArgNumber());
    auto it = inputs.find(name);
    if (it == inputs.end())
      return evalError("input '" + name + "' missing from the inputs");
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    if (ArrayRef<int64_t>(it->second.shape) != type.getShape())
      return evalError("input '" + name + "' has shape [" +
                       llvm::join(llvm::map_range(it->second.shape,
                                                  [](int64_t d) {
                                                    return std::to_string(d);
                                                  }),
                                  ", ") +
                       "], the model expects " +
                       llvm::Twine(type.getNumElements()) + " elements as " +
                       [&] {
                         std::string s;
                         llvm::raw_string_ostream os(s);
                         os << type;
                         return s;
                       }());
    values[arg] = eval::cast(it->second, kindOf(type.getElementType()));
  }
  std::map<std::string, Tensor> outputs;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        outputs[tfm::outputName(func, i)] = values.lookup(v);
      break;
    }
    if (isa<tfm::WeightOp>(op)) {
      llvm::Expected<Tensor> weight = loadWeight(&op);
      if (!weight)
        return weight.takeError();
      values[op.getResult(0)] = std::move(*weight);
      continue;
    }
    SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return evalError(describe(&op) + ": operand has no value");
      operands.push_back(&it->second);
    }
    if (std::optional<int64_t> count = oversizedResult(&op))
      return evalError(describe(&op) + ": its result of " +
                       (*count < 0 ? std::string("more than 2^63")
                                   : std::to_string(*count)) +
                       " elements is too large for the host evaluator "
                       "(at most " + llvm::Twine(kMaxHostElements) + ")");
    if (auto bad = outOfRangeIndex(&op, operands)) {
      if (BlockArgument ids = tokenIds(&op)) {
        return evalError("input '" + tfm::inputName(func, ids.getArgNumber()) +
                         "': token id " + llvm::Twine(bad->first) +
                         " is outside the embedding table of " +
                         llvm::Twine(bad->second) + " rows");
      }
      return evalError(describe(&op) + ": index " + llvm::Twine(bad->first) +
                       " is out of range for a dimension of size " +
                       llvm::Twine(bad->second));
    }
    if (std::optional<StringRef> undefined =
            undefinedIntegerDivision(&op, operands))
      return evalError(describe(&op) + ": " + *undefined);
    FailureOr<Tensor> result = evaluateOp(&op, operands);
    if (failed(result))
      return evalError(describe(&op) + ": the host evaluator does not "
                                        "implement this op");
    values[op.getResult(0)] = std::move(*result);
    // Free values no later op reads, so whole models fit in memory.
    for (Value operand : op.getOperands())
      if (llvm::all_of(operand.getUsers(), [&](Operation *user) {
            return user->getBlock() == op.getBlock() &&
                   (user == &op || user->isBeforeInBlock(&op));
          }))
        values.erase(operand);
  }
  return outputs;
}
