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

rt::kernels::RowArgs RelayoutOp::getRegridArgs(GridAttr grid) {
  // Rows: the local extent of the dimensions before the re-blocked one;
  // columns: that dimension's block with the (whole) dimensions after it.
  auto type = cast<RankedTensorType>(getSource().getType());
  int64_t d = getDimension();
  LayoutAttr from = getLayout(type), to = getLayout(getResult().getType());
  int64_t rowCount = 1, after = 1;
  for (int64_t i = 0; i < d; ++i)
    rowCount *= ceilDiv(type.getDimSize(i), from.getBlocks()[i]);
  for (int64_t i = d + 1; i < type.getRank(); ++i)
    after *= type.getDimSize(i);
  rt::kernels::RowArgs args;
  args.m = rowCount;
  args.n = ceilDiv(type.getDimSize(d), to.getBlocks()[d]) * after;
  args.k = ceilDiv(type.getDimSize(d), from.getBlocks()[d]) * after;
  args.groups = alongX() ? grid.getWidth() : grid.getHeight();
  // Balanced blocks (on both sides, one of them perhaps evenly divided:
  // the verifier checks) need the length.
  args.length = from.isBalanced(d) || to.isBalanced(d) ? type.getDimSize(d) : 0;
  args.parts = std::max(from.getPartCount(d), to.getPartCount(d));
  args.outElements = localElements(getResult(), grid);
  args.aElements = localElements(getSource(), grid);
  return args;
}

/// The relayout as the clock simulates it.
static cost::RingRelayout ringRelayout(RelayoutOp op, GridAttr grid,
                                       const rt::TimingModel &timing,
                                       bool interleave) {
  rt::DType dtype = dtypeOf(op.getResult());
  rt::kernels::RowArgs args = op.getRegridArgs(grid);
  cost::RingRelayout relayout;
  relayout.alongX = op.alongX();
  relayout.interleave = interleave;
  relayout.dtype = dtype;
  relayout.tileElements = args.aElements;
  // Zero the result; copy the tile to pass.
  relayout.before = timing.kernelCycles(args.outElements, dtype);
  if (args.groups > 1)
    relayout.before += timing.kernelCycles(args.aElements, dtype);
  relayout.keep = [args, timing, dtype](int64_t position,
                                        int64_t source) mutable {
    args.expr = source;
    args.expr2 = position;
    return timing.kernelCycles(
        rt::kernels::rowKernelCounts(rt::Opcode::Regrid, args).work, dtype);
  };
  return relayout;
}

/// The relayout's closed form: each core keeps its columns of the tile of
/// every ring position, its own, then one per shift. Priced at ring
/// position 0.
static int64_t closedForm(const cost::RingRelayout &relayout, int64_t extent,
                          const rt::TimingModel &timing) {
  int64_t cycles = relayout.before;
  for (int64_t source = 0; source < extent; ++source)
    cycles += relayout.keep(0, source);
  if (extent > 1)
    cycles += cost::ringShiftCycles(timing, extent - 1, relayout.tileElements,
                                    relayout.dtype, extent, relayout.interleave,
                                    0, 0, 0);
  return cycles;
}

int64_t RelayoutOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                                   bool interleave) {
  return closedForm(ringRelayout(*this, grid, timing, interleave),
                    alongX() ? grid.getWidth() : grid.getHeight(), timing);
}

void RelayoutOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                              const rt::TimingModel &timing, bool interleave) {
  cost::RingRelayout relayout = ringRelayout(*this, grid, timing, interleave);
  int64_t extent = alongX() ? grid.getWidth() : grid.getHeight();
  cost::advanceRelayout(timing, relayout, closedForm(relayout, extent, timing),
                        clock);
}
