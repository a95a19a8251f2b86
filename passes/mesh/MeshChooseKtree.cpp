//===- MeshChooseKtree.cpp - K of each open K-tree from the cost model ----===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/PlanPrice.h"

namespace wafer {
#define GEN_PASS_DEF_MESHCHOOSEKTREE
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshChooseKtreePass
    : public wafer::impl::MeshChooseKtreeBase<MeshChooseKtreePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    if (grid && target)
      chooseOpenKtreeK(module, grid, target.getValue());
  }
};

} // namespace
