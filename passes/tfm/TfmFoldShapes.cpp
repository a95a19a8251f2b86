//===- TfmFoldShapes.cpp - Fold shape computations to constants -----------===//
#include "wafer/Eval/Evaluator.h"
#include "wafer/Passes/Passes.h"
#include "wafer/Support/CheckedMath.h"

namespace wafer {
#define GEN_PASS_DEF_TFMFOLDSHAPES
#include "tfm/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct TfmFoldShapesPass
    : public wafer::impl::TfmFoldShapesBase<TfmFoldShapesPass> {
  using TfmFoldShapesBase::TfmFoldShapesBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (maxElements < 0) {
      func.emitError("tfm-fold-shapes: max-elements must be at least 0, got ")
          << int64_t(maxElements);
      return signalPassFailure();
    }
    if (func.getBody().empty())
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Value, eval::Tensor> constants;
    OpBuilder builder(func.getContext());
    // Ops are in dependence order, so one forward sweep folds whole chains.
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (op.getNumResults() != 1 || !isa<tfm::TfmDialect>(op.getDialect()))
        continue;
      Value result = op.getResult(0);
      // Sizes are checked before anything is materialised: a splat
      // constant of 10^10 elements is cheap as an attribute only.
      auto type = cast<RankedTensorType>(result.getType());
      std::optional<int64_t> count = checkedElementCount(type.getShape());
      bool small = count && *count <= maxElements;
      if (auto constant = dyn_cast<tfm::ConstantOp>(op)) {
        if (small)
          constants[result] = eval::tensorFromAttr(constant.getValue());
        continue;
      }
      if (dropIfIdentity(op) || !small)
        continue;
      std::optional<eval::Tensor> value = fold(op, constants);
      if (!value)
        continue;
      builder.setInsertionPoint(&op);
      auto constant = builder.create<tfm::ConstantOp>(
          op.getLoc(), eval::attrFromTensor(*value, type));
      result.replaceAllUsesWith(constant.getResult());
      constants[constant.getResult()] = std::move(*value);
      op.erase();
    }
    // Shape computations whose only consumers were folded are now dead.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isa<tfm::TfmDialect>(op.getDialect()) && op.use_empty() &&
          isMemoryEffectFree(&op))
        op.erase();
  }

  /// Reshapes, expands and casts to the type they already have.
  static bool dropIfIdentity(Operation &op) {
    if (!isa<tfm::ReshapeOp, tfm::ExpandOp, tfm::CastOp>(op) ||
        op.getOperand(0).getType() != op.getResult(0).getType())
      return false;
    op.getResult(0).replaceAllUsesWith(op.getOperand(0));
    op.erase();
    return true;
  }

  /// The op's value when its operands are constants (shapes need only a
  /// static input).
  static std::optional<eval::Tensor>
  fold(Operation &op, const llvm::DenseMap<Value, eval::Tensor> &constants) {
    SmallVector<const eval::Tensor *> operands;
    if (!isa<tfm::ShapeOp>(op)) {
      for (Value operand : op.getOperands()) {
        auto it = constants.find(operand);
        if (it == constants.end())
          return std::nullopt;
        operands.push_back(&it->second);
      }
    } else {
      operands.push_back(nullptr);
    }
    FailureOr<eval::Tensor> value = eval::evaluateOp(&op, operands);
    if (failed(value))
      return std::nullopt;
    return std::move(*value);
  }
};

} // namespace
