//===- Gemm.cpp - MeshGEMM, Cannon, SUMMA and allgather plans -------------===//
//
// The tiling, channels and working buffers of mesh.gemm's algorithms
// (paper section 5 and its baselines). Lowered by
// passes/conversion/LowerGemm.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

#include "wafer/Support/CheckedMath.h"

#include <numeric>

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

int64_t GemmOp::kBlocks(int64_t h, int64_t w) { return std::lcm(h, w); }

cost::GemmTiling GemmOp::getTiling(GridAttr grid) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  cost::GemmTiling tiling;
  tiling.blocks = kBlocks(h, w);
  tiling.aSlots = tiling.blocks / w;
  tiling.bSlots = tiling.blocks / h;
  // The K and N tiles may span whole heads (the head-form operands).
  tiling.mt = ceilDiv(shapeOf(getLhs())[0], h);
  tiling.kt = localElements(getLhs(), grid) / (tiling.mt * tiling.aSlots);
  tiling.nt = localElements(getResult(), grid) / tiling.mt;
  return tiling;
}

std::vector<ChannelFamily> GemmOp::getChannelFamilies(GridAttr grid,
                                                      bool interleave) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  if (getAlgorithm() == GemmAlgorithm::summa)
    return {makeFamily(ChannelRole::ForwardA, "east_x", rt::Axis::X,
                       rt::neighborPaths(w, true)),
            makeFamily(ChannelRole::BackwardA, "west_x", rt::Axis::X,
                       rt::neighborPaths(w, false)),
            makeFamily(ChannelRole::ForwardB, "south_y", rt::Axis::Y,
                       rt::neighborPaths(h, true)),
            makeFamily(ChannelRole::BackwardB, "north_y", rt::Axis::Y,
                       rt::neighborPaths(h, false))};
  return {ringFamily(ChannelRole::ShiftA, rt::Axis::X, grid, interleave),
          ringFamily(ChannelRole::ShiftB, rt::Axis::Y, grid, interleave)};
}

std::vector<ScratchBuffer> GemmOp::getScratchBuffers(GridAttr grid) {
  cost::GemmTiling t = getTiling(grid);
  int64_t aBlock = saturatingMul(t.mt, t.kt),
          bBlock = saturatingMul(t.kt, t.nt);
  std::vector<ScratchBuffer> scratch;
  if (getAlgorithm() == GemmAlgorithm::summa) {
    scratch.push_back({BufferRole::PanelA, 0, aBlock});
    scratch.push_back({BufferRole::PanelB, 0, bBlock});
    return scratch;
  }
  // Operands other ops read too are shifted as copies.
  if (!getLhs().hasOneUse())
    scratch.push_back({BufferRole::OwnA, 0, localElements(getLhs(), grid)});
  if (!getRhs().hasOneUse())
    scratch.push_back({BufferRole::OwnB, 0, localElements(getRhs(), grid)});
  if (getAlgorithm() == GemmAlgorithm::allgather) {
    // Whole panels of every block, and one block of each to multiply.
    scratch.push_back({BufferRole::PanelA, 0, saturatingMul(t.blocks, aBlock)});
    scratch.push_back({BufferRole::PanelB, 0, saturatingMul(t.blocks, bBlock)});
    scratch.push_back({BufferRole::BlockA, 0, aBlock});
    scratch.push_back({BufferRole::BlockB, 0, bBlock});
  }
  // Ring shifts receive into a second buffer; a ring of one core rotates
  // its slots in place.
  if (grid.getWidth() > 1)
    scratch.push_back({BufferRole::NextA, 0, saturatingMul(t.aSlots, aBlock)});
  if (grid.getHeight() > 1)
    scratch.push_back({BufferRole::NextB, 0, saturatingMul(t.bSlots, bBlock)});
  return scratch;
}

int64_t GemmOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                               bool interleave) {
  if (getAlgorithm() == GemmAlgorithm::allgather) {
    // W - 1 (H - 1) shifts of whole chunks, each copied into the panel,
    // then every block pair multiplied.
    cost::GemmTiling t = getTiling(grid);
    rt::DType dtype = dtypeOf(getResult());
    auto kernel = [&](int64_t work) {
      return timing.kernelCycles(work, dtype);
    };
    int64_t aBlock = t.mt * t.kt, bBlock = t.kt * t.nt;
    int64_t aChunk = t.aSlots * aBlock, bChunk = t.bSlots * bBlock;
    auto gather = [&](int64_t chunk, int64_t n) {
      return cost::ringShiftCycles(timing, n - 1, chunk, dtype, n, interleave,
                                   0, 0, kernel(chunk));
    };
    return kernel(t.mt * t.nt) + kernel(aChunk) + kernel(bChunk) +
           gather(aChunk, grid.getWidth()) + gather(bChunk, grid.getHeight()) +
           t.blocks *
               (kernel(aBlock) + kernel(bBlock) + kernel(t.mt * t.kt * t.nt));
  }
  return fromCommonStart(*this, grid, timing, interleave);
}

void GemmOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                          const rt::TimingModel &timing, bool interleave) {
  if (getAlgorithm() == GemmAlgorithm::allgather) {
    clock.barrier(estimateCycles(grid, timing, interleave));
    return;
  }
  cost::GemmTiling t = getTiling(grid);
  rt::DType dtype = dtypeOf(getResult());
  auto kernel = [&](int64_t work) { return timing.kernelCycles(work, dtype); };
  int64_t multiply = kernel(t.mt * t.kt * t.nt);
  // Each core zeroes its C tile first.
  int64_t own = kernel(t.mt * t.nt);
  if (getAlgorithm() == GemmAlgorithm::summa) {
    clock.local(own);
    cost::advanceSumma(timing, t, dtype, multiply, clock);
    return;
  }
  // MeshGEMM and Cannon shift operands other ops read too as copies.
  if (!getLhs().hasOneUse())
    own += kernel(localElements(getLhs(), grid));
  if (!getRhs().hasOneUse())
    own += kernel(localElements(getRhs(), grid));
  cost::advanceMeshGemm(timing, {t, interleave, dtype, own, multiply}, clock);
}
