//===- TfmRopeTablesToInputs.cpp - Rotary tables as graph inputs ----------===//
//
// One decode program serves every step of a generation only if nothing in
// it depends on the position; in an exported decode graph the rotary
// tables do, once folded. They become the graph's inputs here.
//
//===----------------------------------------------------------------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/LocationName.h"

#include "mlir/IR/Builders.h"

namespace wafer {
#define GEN_PASS_DEF_TFMROPETABLESTOINPUTS
#include "tfm/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct TfmRopeTablesToInputs
    : wafer::impl::TfmRopeTablesToInputsBase<TfmRopeTablesToInputs> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("tfm-rope-tables-to-inputs: needs a function @main");
      return signalPassFailure();
    }
    SmallVector<tfm::RopeOp> ropes(main.getOps<tfm::RopeOp>());
    if (ropes.empty())
      return;
    // tables[0] is cos, tables[1] sin: the constants every rope must share.
    DenseElementsAttr tables[2];
    for (tfm::RopeOp rope : ropes)
      for (int which = 0; which < 2; ++which) {
        Value table = which ? rope.getSin() : rope.getCos();
        auto constant = table.getDefiningOp<tfm::ConstantOp>();
        auto type = cast<RankedTensorType>(table.getType());
        auto fail = [&](StringRef what) {
          std::string name = locationName(rope.getLoc());
          rope.emitError() << "tfm-rope-tables-to-inputs: the "
                           << (which ? "sine" : "cosine") << " table of "
                           << (name.empty() ? "a tfm.rope" : "'" + name + "'")
                           << " " << what;
          signalPassFailure();
        };
        if (!constant)
          return fail("is computed at run time, not a constant of the "
                      "compiled position");
        if (type.getRank() < 1 ||
            type.getNumElements() != type.getShape().back())
          return fail("has more than one row (the graph handles more than "
                      "one token)");
        auto value = cast<DenseElementsAttr>(constant.getValue());
        if (!tables[which])
          tables[which] = value;
        else if (tables[which] != value)
          return fail("differs from the first rope's");
      }
    OpBuilder b(main.getContext());
    Block &entry = main.getBody().front();
    Value inputs[2];
    for (int which = 0; which < 2; ++which) {
      unsigned index = main.getNumArguments();
      main.insertArgument(index, tables[which].getType(),
                          b.getDictionaryAttr(b.getNamedAttr(
                              "tfm.name",
                              b.getStringAttr(which ? "rope.sin" : "rope.cos"))),
                          main.getLoc());
      inputs[which] = entry.getArgument(index);
    }
    for (tfm::RopeOp rope : ropes) {
      Operation *cos = rope.getCos().getDefiningOp();
      Operation *sin = rope.getSin().getDefiningOp();
      rope.getCosMutable().assign(inputs[0]);
      rope.getSinMutable().assign(inputs[1]);
      for (Operation *table : {cos, sin})
        if (table->use_empty())
          table->erase();
    }
  }
};

} // namespace
