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
  using MeshPlaceInterleaveBase::MeshPlaceInterleaveBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // MeshGEMM needs interleaved rings; the baselines are defined on the
    // identity placement, so the two cannot share a module.
    mesh::GemmOp meshGemm, baseline;
    module.walk([&](mesh::GemmOp gemm) {
      (gemm.getAlgorithm() == mesh::GemmAlgorithm::meshgemm ? meshGemm
                                                            : baseline) = gemm;
    });
    if (meshGemm && baseline) {
      baseline.emitError("mesh-place-interleave: '")
          << mesh::stringifyGemmAlgorithm(baseline.getAlgorithm())
          << "' needs the identity placement but a meshgemm in the same "
             "module needs INTERLEAVE";
      return signalPassFailure();
    }
    if (!meshGemm && !always)
      return;
    if (baseline) {
      baseline.emitError("mesh-place-interleave: '")
          << mesh::stringifyGemmAlgorithm(baseline.getAlgorithm())
          << "' needs the identity placement but the module is placed on "
             "INTERLEAVE (always)";
      return signalPassFailure();
    }
    mesh::placeInterleaved(module);
  }
};

} // namespace
