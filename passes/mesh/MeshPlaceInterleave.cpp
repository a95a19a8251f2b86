//===- MeshPlaceInterleave.cpp - INTERLEAVE placement ---------------------===//
#include "wafer/Passes/Passes.h"

namespace wafer {
#define GEN_PASS_DEF_MESHPLACEINTERLEAVE
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshPlaceInterleavePass
    : public wafer::impl::MeshPlaceInterleaveBase<MeshPlaceInterleavePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool needsRings = false;
    module.walk([&](mesh::GemmOp gemm) {
      needsRings |= gemm.getAlgorithm() == mesh::GemmAlgorithm::meshgemm;
    });
    if (!needsRings)
      return;
    // One placement for the whole module: every distributed value switches,
    // so producers and consumers keep agreeing on their layouts.
    module.walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        mesh::LayoutAttr layout = mesh::getLayout(type);
        if (!layout || layout.getInterleave())
          continue;
        result.setType(RankedTensorType::get(type.getShape(),
                                             type.getElementType(),
                                             layout.withInterleave(true)));
      }
    });
  }
};

} // namespace
