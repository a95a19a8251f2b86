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

/// The constants of a sweep, each converted to a tensor only when a fold
/// reads it: most are read by none. Fills and reshapes need no tensor,
/// which matters for a 4096-token prefill's causal mask (2^24 values).
struct FoldedConstants {
  llvm::DenseMap<Value, ElementsAttr> values;

  /// The op's value when its operands are constants (shapes need only a
  /// static input), or null.
  ElementsAttr fold(Operation &op) {
    if (auto reshape = dyn_cast<tfm::ReshapeOp>(op))
      if (auto dense = dyn_cast_or_null<DenseElementsAttr>(
              values.lookup(reshape.getInput())))
        return dense.reshape(reshape.getType());
    // The verifier keeps a fill's value of the result's element type.
    if (auto fill = dyn_cast<tfm::ConstantOfShapeOp>(op))
      return DenseElementsAttr::get(fill.getType(), fill.getValue());
    SmallVector<const eval::Tensor *> operands;
    if (!isa<tfm::ShapeOp>(op)) {
      for (Value operand : op.getOperands()) {
        ElementsAttr value = values.lookup(operand);
        if (!value)
          return {};
        operands.push_back(&tensorOf(value));
      }
    } else {
      operands.push_back(nullptr);
    }
    FailureOr<eval::Tensor> value = eval::evaluateOp(&op, operands);
    if (failed(value))
      return {};
    ElementsAttr attr = eval::attrFromTensor(
        *value, cast<RankedTensorType>(op.getResult(0).getType()));
    tensors.try_emplace(attr,
                        std::make_unique<eval::Tensor>(std::move(*value)));
    return attr;
  }

private:
  const eval::Tensor &tensorOf(ElementsAttr value) {
    auto it = tensors.find(value);
    if (it == tensors.end())
      it = tensors
               .try_emplace(value, std::make_unique<eval::Tensor>(
                                       eval::tensorFromAttr(value)))
               .first;
    return *it->second;
  }

  /// The conversions done, by attribute (uniqued: layers repeat them).
  /// Held by pointer: a fold reads its operands' tensors by reference while
  /// converting the next operand grows the map.
  llvm::DenseMap<Attribute, std::unique_ptr<eval::Tensor>> tensors;
};

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
    FoldedConstants constants;
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
          constants.values[result] = constant.getValue();
        continue;
      }
      dropEmptyConcatOperands(op);
      if (dropIfIdentity(op) || !small)
        continue;
      ElementsAttr value = constants.fold(op);
      if (!value)
        continue;
      builder.setInsertionPoint(&op);
      auto constant = builder.create<tfm::ConstantOp>(op.getLoc(), value);
      result.replaceAllUsesWith(constant.getResult());
      constants.values[constant.getResult()] = value;
      op.erase();
    }
    // Shape computations whose only consumers were folded are now dead.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isa<tfm::TfmDialect>(op.getDialect()) && op.use_empty() &&
          isMemoryEffectFree(&op))
        op.erase();
  }

  /// A concat's empty operands, all but one (a past KV cache of length 0:
  /// a graph with a cache run as a prefill).
  static void dropEmptyConcatOperands(Operation &op) {
    auto concat = dyn_cast<tfm::ConcatOp>(op);
    if (!concat)
      return;
    for (unsigned i = concat.getInputs().size(); i-- > 0;)
      if (cast<RankedTensorType>(concat.getInputs()[i].getType())
                  .getNumElements() == 0 &&
          concat.getInputs().size() > 1)
        concat.getInputsMutable().erase(i);
  }

  /// Reshapes, expands, casts and concats of one operand to the type they
  /// already have.
  static bool dropIfIdentity(Operation &op) {
    if (!isa<tfm::ReshapeOp, tfm::ExpandOp, tfm::CastOp, tfm::ConcatOp>(op) ||
        (isa<tfm::ConcatOp>(op) && op.getNumOperands() != 1) ||
        op.getOperand(0).getType() != op.getResult(0).getType())
      return false;
    op.getResult(0).replaceAllUsesWith(op.getOperand(0));
    op.erase();
    return true;
  }
};

} // namespace
