//===- RaiseMatchers.cpp - Helpers of tfm-raise-transformer ---------------===//
#include "RaiseMatchers.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Eval/Evaluator.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace wafer;

std::optional<eval::Tensor> raise::constantValue(Value v) {
  if (auto constant = v.getDefiningOp<tfm::ConstantOp>())
    return eval::tensorFromAttr(constant.getValue());
  return std::nullopt;
}

std::optional<double> raise::scalarConstant(Value v) {
  auto constant = v.getDefiningOp<tfm::ConstantOp>();
  if (!constant || constant.getValue().getNumElements() != 1)
    return std::nullopt;
  return eval::tensorFromAttr(constant.getValue()).data[0];
}

ArrayRef<int64_t> raise::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static bool isDataMovement(Operation *op) {
  return isa<tfm::ReshapeOp, tfm::ExpandOp, tfm::TransposeOp, tfm::SliceOp,
             tfm::ConcatOp, tfm::GatherOp, tfm::NegOp>(op);
}

std::optional<eval::Tensor> raise::probe(Value root, Value leaf,
                                         const eval::Tensor &input,
                                         int maxOps) {
  llvm::DenseMap<Value, eval::Tensor> memo;
  int budget = maxOps;
  std::function<const eval::Tensor *(Value)> evaluate =
      [&](Value v) -> const eval::Tensor * {
    if (v == leaf)
      return &input;
    if (auto it = memo.find(v); it != memo.end())
      return &it->second;
    if (std::optional<eval::Tensor> c = constantValue(v))
      return &(memo[v] = std::move(*c));
    Operation *op = v.getDefiningOp();
    if (!op || !isDataMovement(op) || --budget < 0)
      return nullptr;
    SmallVector<const eval::Tensor *> operands;
    for (Value operand : op->getOperands()) {
      const eval::Tensor *value = evaluate(operand);
      if (!value)
        return nullptr;
      operands.push_back(value);
    }
    FailureOr<eval::Tensor> result = eval::evaluateOp(op, operands);
    if (failed(result))
      return nullptr;
    return &(memo[v] = std::move(*result));
  };
  const eval::Tensor *result = evaluate(root);
  if (!result)
    return std::nullopt;
  return *result;
}

std::optional<eval::Tensor> raise::indexProbe(ArrayRef<int64_t> shape) {
  eval::Tensor t(eval::ElementKind::F32, {shape.begin(), shape.end()});
  if (t.size() >= (int64_t(1) << 24))
    return std::nullopt;
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[i] = double(i + 1);
  return t;
}

SmallVector<Value> raise::dataMovementChain(Value v) {
  SmallVector<Value> chain{v};
  while (Operation *op = chain.back().getDefiningOp()) {
    if (!isDataMovement(op) || isa<tfm::NegOp>(op))
      break;
    Value next;
    int dynamic = 0;
    for (Value operand : op->getOperands())
      if (!operand.getDefiningOp<tfm::ConstantOp>()) {
        next = operand;
        ++dynamic;
      }
    if (dynamic != 1)
      break;
    chain.push_back(next);
  }
  return chain;
}
