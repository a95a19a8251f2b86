//===- ConvertMeshToCore.cpp - Role programs from distributed algorithms --===//
#include "ProgramLowering.h"

namespace wafer {
#define GEN_PASS_DEF_CONVERTMESHTOCORE
#include "conversion/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;
using wafer::lowering::ProgramLowering;

namespace {

struct ConvertMeshToCorePass
    : public wafer::impl::ConvertMeshToCoreBase<ConvertMeshToCorePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!grid || !target || !main) {
      module.emitError("convert-mesh-to-core: needs @main, mesh.grid and "
                       "mesh.target (run convert-tfm-to-mesh first)");
      return signalPassFailure();
    }
    if (failed(requireChosenKtrees(module, grid, "convert-mesh-to-core")))
      return signalPassFailure();
    if (failed(ProgramLowering(module, main, grid, target).run()))
      return signalPassFailure();
    // The program replaces the graph.
    main.erase();
    module->removeAttr(mesh::MeshDialect::kGridAttrName);
    module->removeAttr(mesh::MeshDialect::kTargetAttrName);
  }
};

} // namespace
