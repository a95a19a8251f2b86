//===- TfmKeepLayers.cpp - Keep the first N decoder layers ----------------===//
//
// The paper measured its larger models on a few layers and scaled the time
// to the whole depth; this pass makes that subset from any raised LLaMA by
// cutting the residual chain, not by matching node names.
//
//===----------------------------------------------------------------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/LocationName.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace wafer {
#define GEN_PASS_DEF_TFMKEEPLAYERS
#include "tfm/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

/// The norm a layer's attention reads its input through: follow the query's
/// first operands back (linear, reshape, transpose, rope, scaling; past a
/// projection's bias, the computed operand) to the first rms_norm. Null if
/// there is none within a few ops.
tfm::RmsNormOp layerNorm(tfm::AttentionOp attention) {
  Value v = attention.getQuery();
  for (int step = 0; step < 16; ++step) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumOperands() == 0)
      return nullptr;
    if (auto norm = dyn_cast<tfm::RmsNormOp>(def))
      return norm;
    v = def->getOperand(0);
    if (auto add = dyn_cast<tfm::AddOp>(def);
        add && isa_and_nonnull<tfm::WeightOp, tfm::ConstantOp>(
                   add.getLhs().getDefiningOp()))
      v = add.getRhs();
  }
  return nullptr;
}

struct TfmKeepLayers : wafer::impl::TfmKeepLayersBase<TfmKeepLayers> {
  using TfmKeepLayersBase::TfmKeepLayersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("tfm-keep-layers: the module has no function @main");
      return signalPassFailure();
    }
    SmallVector<tfm::AttentionOp> attentions;
    SmallVector<tfm::RmsNormOp> norms;
    main.walk([&](tfm::AttentionOp op) { attentions.push_back(op); });
    main.walk([&](tfm::RmsNormOp op) { norms.push_back(op); });
    int64_t modelLayers = attentions.size();
    if (modelLayers == 0) {
      main.emitError("tfm-keep-layers: the module has no tfm.attention, so "
                     "no decoder layers to keep (raise it first: "
                     "tfm-raise-transformer)");
      return signalPassFailure();
    }
    if (layers < 1 || layers > modelLayers) {
      main.emitError() << "--layers " << layers.getValue() << ": the model has "
                       << modelLayers << " decoder layer"
                       << (modelLayers == 1 ? "" : "s")
                       << " (give 1 to " << modelLayers << ")";
      return signalPassFailure();
    }
    // Layer k's input norm, in order; the final norm after the last layer.
    SmallVector<tfm::RmsNormOp> inputNorms;
    for (tfm::AttentionOp attention : attentions) {
      tfm::RmsNormOp norm = layerNorm(attention);
      if (!norm || (!inputNorms.empty() &&
                    !inputNorms.back()->isBeforeInBlock(norm))) {
        attention.emitError("tfm-keep-layers: cannot find the decoder layer "
                            "of this attention (no rms_norm before its "
                            "query, or layers out of order)");
        return signalPassFailure();
      }
      inputNorms.push_back(norm);
    }
    tfm::RmsNormOp finalNorm = norms.back();
    if (finalNorm->getBlock() != attentions.back()->getBlock() ||
        !attentions.back()->isBeforeInBlock(finalNorm) ||
        llvm::is_contained(inputNorms, finalNorm)) {
      main.emitError("tfm-keep-layers: no final rms_norm after the last "
                     "decoder layer");
      return signalPassFailure();
    }

    if (layers < modelLayers) {
      Value residual = inputNorms[layers].getInput();
      finalNorm.getInputMutable().assign(residual);
      // What only the dropped layers compute: the forward slice of their
      // first norm, now that the final norm no longer reads it.
      SetVector<Operation *> dropped;
      getForwardSlice(inputNorms[layers].getOperation(), &dropped);
      dropped.insert(inputNorms[layers]);
      auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
      auto names = main->getAttrOfType<ArrayAttr>("tfm.output_names");
      SmallVector<Value> results;
      SmallVector<Attribute> kept;
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        Operation *def = value.getDefiningOp();
        if (def && dropped.contains(def))
          continue;
        results.push_back(value);
        if (names)
          kept.push_back(names[i]);
      }
      OpBuilder builder(ret);
      builder.create<func::ReturnOp>(ret.getLoc(), results);
      ret.erase();
      if (names)
        main->setAttr("tfm.output_names", builder.getArrayAttr(kept));
      // Erase the dead ops, last first, then the arguments nothing reads.
      SmallVector<Operation *> ops;
      for (Operation &op : main.getBody().front().without_terminator())
        ops.push_back(&op);
      for (Operation *op : llvm::reverse(ops))
        if (op->use_empty() && isPure(op))
          op->erase();
      llvm::BitVector unused(main.getNumArguments());
      for (BlockArgument arg : main.getArguments())
        unused[arg.getArgNumber()] = arg.use_empty();
      main.eraseArguments(unused);
      main.setType(builder.getFunctionType(
          main.getArgumentTypes(), TypeRange(ValueRange(results))));
    }

    // The ops outside the layers: before layer 0's norm and not in its
    // forward slice (embedding), or from the final norm on.
    SetVector<Operation *> inLayers, afterLayers;
    getForwardSlice(inputNorms.front().getOperation(), &inLayers);
    inLayers.insert(inputNorms.front());
    getForwardSlice(finalNorm.getOperation(), &afterLayers);
    afterLayers.insert(finalNorm);
    SmallVector<Attribute> outside;
    llvm::StringSet<> seen;
    Builder builder(module.getContext());
    main.walk([&](Operation *op) {
      if (op == main || isa<func::ReturnOp, tfm::ConstantOp, tfm::WeightOp>(op))
        return;
      if (inLayers.contains(op) && !afterLayers.contains(op))
        return;
      std::string name = locationName(op->getLoc());
      if (!name.empty() && seen.insert(name).second)
        outside.push_back(builder.getStringAttr(name));
    });
    module->setAttr("tfm.layers", builder.getI64IntegerAttr(layers.getValue()));
    module->setAttr("tfm.model_layers", builder.getI64IntegerAttr(modelLayers));
    module->setAttr("tfm.non_layer_ops", builder.getArrayAttr(outside));
  }
};

} // namespace
