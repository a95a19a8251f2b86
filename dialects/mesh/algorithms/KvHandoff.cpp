//===- KvHandoff.cpp - A prefill's keys and values into a decode cache ----===//
//
// mesh.kv_handoff passes every prefill tile once around its column's ring,
// each core keeping the positions its row holds in the decode cache (where
// they go is lib/Support/KvCache.cpp's: balanced over the rows, so the
// fullest holds ceil(S / H)). Lowered by
// passes/conversion/LowerKvHandoff.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

std::vector<ChannelFamily> KvHandoffOp::getChannelFamilies(GridAttr grid,
                                                           bool interleave) {
  return {ringFamily(ChannelRole::Ring, rt::Axis::Y, grid, interleave)};
}

std::vector<ScratchBuffer> KvHandoffOp::getScratchBuffers(GridAttr grid) {
  // The tile passing around the ring, and the one arriving.
  if (grid.getHeight() == 1)
    return {};
  int64_t tile = localElements(getSource(), grid);
  return {{BufferRole::Passing, 0, tile}, {BufferRole::Arriving, 0, tile}};
}

int64_t KvHandoffOp::estimateCycles(GridAttr grid,
                                    const rt::TimingModel &timing,
                                    bool interleave) {
  // The busiest row copies its positions, one head's D values at a time,
  // after zeroing its cache; the copies are charged after the shifts (a
  // row's positions arrive in one or two of them).
  rt::DType dtype = dtypeOf(getResult());
  int64_t rows = grid.getHeight(), dim = shapeOf(getSource())[2];
  int64_t tile = localElements(getSource(), grid);
  int64_t slots = shapeOf(getResult())[2] / rows;
  int64_t heads = localElements(getResult(), grid) / (slots * dim);
  int64_t kept = ceilDiv(shapeOf(getSource())[0], rows);
  int64_t cycles =
      timing.kernelCycles(localElements(getResult(), grid), dtype) +
      kept * heads * timing.kernelCycles(dim, dtype);
  if (rows > 1)
    cycles += timing.kernelCycles(tile, dtype) +
              cost::ringShiftCycles(timing, rows - 1, tile, dtype, rows,
                                    interleave, 0, 0, 0);
  return cycles;
}
