//===- MeshCheckMemory.cpp - Per-core SRAM high-water against the target --===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/MemoryPlan.h"
#include "wafer/Support/LocationName.h"


namespace wafer {
#define GEN_PASS_DEF_MESHCHECKMEMORY
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

/// The ONNX node an op came from, or the op's name.
static std::string opLabel(Operation *op) {
  std::string name = locationName(op->getLoc());
  return name.empty() ? op->getName().getStringRef().str() : name;
}

struct MeshCheckMemoryPass
    : public wafer::impl::MeshCheckMemoryBase<MeshCheckMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!grid || !target || !main)
      return;
    if (failed(requireChosenKtrees(module, grid, "mesh-check-memory")))
      return signalPassFailure();
    // The plan convert-mesh-to-core allocates by (host inputs for the
    // whole run, activations until their last use, working buffers during
    // their op); the first buffer past the budget is the one to name.
    MemoryPlan plan = planMemory(main, grid, target.getValue().sramBytes);
    if (plan.conflict) {
      plan.conflict.emitError("mesh-check-memory: the host input at "
                              "sram_offset ")
          << *plan.conflict.getSramOffset()
          << " overlaps another input's fixed place";
      return signalPassFailure();
    }
    if (!plan.overflow)
      return;
    const MemoryPlan::Overflow &over = *plan.overflow;
    over.op->emitError("mesh-check-memory: '")
        << opLabel(over.op) << "' needs " << over.what << " (" << over.bytes
        << " bytes per core): core (0, 0) would hold " << over.end
        << " bytes, target '" << target.getName() << "' has "
        << target.getValue().sramBytes << "; the whole plan needs "
        << plan.peakBytes << " bytes per core";
    signalPassFailure();
  }
};

} // namespace
