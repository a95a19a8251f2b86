//===- MeshAllocateRoutes.cpp - Routing colors for mesh ops ---------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/RouteAllocation.h"

namespace wafer {
#define GEN_PASS_DEF_MESHALLOCATEROUTES
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshAllocateRoutesPass
    : public wafer::impl::MeshAllocateRoutesBase<MeshAllocateRoutesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    if (!grid || !target) {
      module.emitError("mesh-allocate-routes: the module needs mesh.grid and "
                       "mesh.target (run convert-tfm-to-mesh first)");
      return signalPassFailure();
    }
    if (failed(requireChosenKtrees(module, grid, "mesh-allocate-routes")))
      return signalPassFailure();
    std::optional<RouteOverflow> overflow =
        allocateRoutes(module, grid, target.getValue().routesPerCore);
    if (!overflow)
      return;
    overflow->op->emitError("mesh-allocate-routes: ")
        << overflow->op->getName() << " needs " << overflow->needed
        << " routing colors at core (x=" << overflow->x
        << ", y=" << overflow->y << ") but target '" << target.getName()
        << "' has " << target.getValue().routesPerCore;
    signalPassFailure();
  }
};

} // namespace
