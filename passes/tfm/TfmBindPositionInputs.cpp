//===- TfmBindPositionInputs.cpp - position_ids, attention_mask as constants =//
//
// The plans run one unpadded sequence, so the positions and the mask a
// Hugging Face export takes as inputs have known values once the shapes
// are known; bound here, they fold like an exporter's computed ones.
//
//===----------------------------------------------------------------------===//
#include "wafer/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace wafer {
#define GEN_PASS_DEF_TFMBINDPOSITIONINPUTS
#include "tfm/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

constexpr StringLiteral kPositions = "position_ids", kMask = "attention_mask";

struct TfmBindPositionInputs
    : wafer::impl::TfmBindPositionInputsBase<TfmBindPositionInputs> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    // The argument index of each input to bind.
    std::optional<unsigned> positions, mask;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      auto name = main.getArgAttrOfType<StringAttr>(i, "tfm.name");
      if (name && name.getValue() == kPositions)
        positions = i;
      else if (name && name.getValue() == kMask)
        mask = i;
    }
    if (!positions && !mask)
      return;
    for (std::optional<unsigned> index : {positions, mask})
      if (index && failed(checkBindable(main, *index)))
        return signalPassFailure();
    int64_t past = 0;
    if (positions) {
      std::optional<int64_t> found = pastLength(main, *positions, mask);
      if (!found)
        return signalPassFailure();
      past = *found;
    }

    Builder b(&getContext());
    NamedAttrList bound;
    if (mask) {
      auto type = argType(main, *mask);
      bindArgument(main, *mask,
                   DenseElementsAttr::get(
                       type, b.getIntegerAttr(type.getElementType(), 1)));
      bound.append(kMask, b.getStringAttr("ones"));
    }
    if (positions) {
      auto type = argType(main, *positions);
      SmallVector<APInt> values;
      unsigned width = type.getElementType().getIntOrFloatBitWidth();
      for (int64_t p = 0; p < type.getNumElements(); ++p)
        values.push_back(APInt(width, uint64_t(past + p), /*isSigned=*/true));
      bindArgument(main, *positions, DenseElementsAttr::get(type, values));
      bound.append(kPositions, b.getStringAttr("positions"));
    }
    BitVector erased(main.getNumArguments());
    for (std::optional<unsigned> index : {positions, mask})
      if (index)
        erased.set(*index);
    main.eraseArguments(erased);
    module->setAttr("tfm.bound_inputs", bound.getDictionary(&getContext()));
  }

  static RankedTensorType argType(func::FuncOp main, unsigned index) {
    return cast<RankedTensorType>(main.getArgument(index).getType());
  }

  /// One integer row of one sequence: [S] or [1, S].
  LogicalResult checkBindable(func::FuncOp main, unsigned index) {
    auto type = dyn_cast<RankedTensorType>(main.getArgument(index).getType());
    StringRef name =
        main.getArgAttrOfType<StringAttr>(index, "tfm.name").getValue();
    auto fail = [&](const Twine &what) {
      return main.emitError("tfm-bind-position-inputs: graph input '")
             << name << "' " << what;
    };
    if (!type || !type.hasStaticShape())
      return fail("needs a static shape");
    // The element types tfm.constant holds: i64, and i1 for a mask.
    Type element = type.getElementType();
    if (!element.isSignlessInteger(64) &&
        !(name == kMask && element.isSignlessInteger(1)))
      return fail("has element type ")
             << element << "; expected i64" << (name == kMask ? " or i1" : "");
    if (type.getRank() == 0 || type.getRank() > 2 ||
        (type.getRank() == 2 && type.getDimSize(0) != 1))
      return fail("has shape [")
             << type.getShape()
             << "]; expected [N] or [1, N] (one sequence, batch 1)";
    return success();
  }

  /// Tokens before the first of this graph's.
  std::optional<int64_t> pastLength(func::FuncOp main, unsigned positions,
                                    std::optional<unsigned> mask) {
    if (mask) {
      int64_t total = argType(main, *mask).getNumElements(),
              tokens = argType(main, positions).getNumElements();
      if (total < tokens) {
        main.emitError("tfm-bind-position-inputs: 'attention_mask' covers ")
            << total << " tokens, fewer than the " << tokens
            << " of 'position_ids'";
        return std::nullopt;
      }
      return total - tokens;
    }
    std::optional<int64_t> past;
    for (BlockArgument arg : main.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() != 4 || !type.hasStaticShape() ||
          !isa<FloatType>(type.getElementType()))
        continue;
      if (past && *past != type.getDimSize(2)) {
        main.emitError("tfm-bind-position-inputs: the past KV caches hold ")
            << *past << " and " << type.getDimSize(2)
            << " positions; 'position_ids' follows one past";
        return std::nullopt;
      }
      past = type.getDimSize(2);
    }
    return past.value_or(0);
  }

  static void bindArgument(func::FuncOp main, unsigned index,
                           DenseElementsAttr value) {
    BlockArgument arg = main.getArgument(index);
    OpBuilder b = OpBuilder::atBlockBegin(&main.getBody().front());
    auto constant = b.create<tfm::ConstantOp>(arg.getLoc(), value);
    arg.replaceAllUsesWith(constant);
  }
};

} // namespace
