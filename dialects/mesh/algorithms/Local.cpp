//===- Local.cpp - Ops that need no communication -------------------------===//
//
// Element-wise maps and RoPE run on every core's own tile (lowered in
// passes/conversion/ProgramLowering.cpp and LowerRowKernels.cpp).
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

int64_t MapOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                              bool) {
  return timing.kernelCycles(localElements(getResult(), grid),
                             dtypeOf(getResult()));
}

void MapOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                         const rt::TimingModel &timing, bool interleave) {
  clock.local(estimateCycles(grid, timing, interleave));
}

int64_t RopeOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                               bool) {
  // Adjacent pairs: every pair is a row of two with its own factors.
  int64_t dim = getInterleaved() ? 2 : getHeadDim();
  int64_t rowCount = localElements(getCos(), grid) / dim;
  int64_t heads = localElements(getInput(), grid) / (rowCount * dim);
  return cost::rowCycles(timing, rt::Opcode::Rope, rowCount, dim, heads, 1,
                         dtypeOf(getResult()));
}

void RopeOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                          const rt::TimingModel &timing, bool interleave) {
  clock.local(estimateCycles(grid, timing, interleave));
}
