//===- Relayout.cpp - Re-blocking a dimension by a ring shift -------------===//
//
// mesh.relayout passes every tile once around the ring of its axis, each
// core keeping the rows of its new block. Lowered by
// passes/conversion/LowerRelayout.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

std::vector<ChannelFamily> RelayoutOp::getChannelFamilies(GridAttr grid,
                                                          bool interleave) {
  return {ringFamily(ChannelRole::Ring, alongX() ? rt::Axis::X : rt::Axis::Y,
                     grid, interleave)};
}

std::vector<ScratchBuffer> RelayoutOp::getScratchBuffers(GridAttr grid) {
  // The tile passing around the ring, and the one arriving.
  if ((alongX() ? grid.getWidth() : grid.getHeight()) == 1)
    return {};
  int64_t tile = localElements(getSource(), grid);
  return {{BufferRole::Passing, 0, tile}, {BufferRole::Arriving, 0, tile}};
}

int64_t RelayoutOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                                   bool interleave) {
  // Each core keeps its columns of the tile of every ring position: its
  // own, then one per shift. Priced at ring position 0.
  rt::DType dtype = dtypeOf(getResult());
  auto type = cast<RankedTensorType>(getSource().getType());
  int64_t d = getDimension();
  LayoutAttr from = getLayout(type), to = getLayout(getResult().getType());
  int64_t rowCount = 1, after = 1;
  for (int64_t i = 0; i < d; ++i)
    rowCount *= ceilDiv(type.getDimSize(i), from.getBlocks()[i]);
  for (int64_t i = d + 1; i < type.getRank(); ++i)
    after *= type.getDimSize(i);
  int64_t extent = alongX() ? grid.getWidth() : grid.getHeight();
  int64_t tile = localElements(getSource(), grid),
          result = localElements(getResult(), grid);
  rt::kernels::RowArgs args;
  args.m = rowCount;
  args.n = ceilDiv(type.getDimSize(d), to.getBlocks()[d]) * after;
  args.k = ceilDiv(type.getDimSize(d), from.getBlocks()[d]) * after;
  args.groups = extent;
  args.outElements = result;
  args.aElements = tile;
  int64_t cycles = timing.kernelCycles(result, dtype);
  for (int64_t source = 0; source < extent; ++source) {
    args.expr = source;
    cycles += timing.kernelCycles(
        rt::kernels::rowKernelCounts(rt::Opcode::Regrid, args).work, dtype);
  }
  if (extent > 1)
    cycles += timing.kernelCycles(tile, dtype) +
              cost::ringShiftCycles(timing, extent - 1, tile, dtype, extent,
                                    interleave, 0, 0, 0);
  return cycles;
}

void RelayoutOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                              const rt::TimingModel &timing, bool interleave) {
  clock.lines(alongX(), estimateCycles(grid, timing, interleave));
}
