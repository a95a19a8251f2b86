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
#include <optional>

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

int64_t GemmOp::kBlocks(int64_t h, int64_t w) { return std::lcm(h, w); }

GemmTiling GemmOp::getTiling(GridAttr grid) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  GemmTiling tiling;
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
  GemmTiling t = getTiling(grid);
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

/// The cycles of `steps` steps of MeshGEMM's ring shifts (A along x, B
/// along y, or one of them) with `overlapped` cycles of work between the
/// sends and the receives (see ringSteps): the critical core's own
/// sequence, or a message's way round the x ring of the last row (where
/// every core also rotates B) or the y ring, each receiver doing what
/// follows its receive. The core at a ring's last position rotates the
/// slots it receives; the two messages share a core's ramps, so B leaves
/// after A's words.
static double shiftSteps(const rt::TimingModel &timing, const GemmTiling &t,
                         GridAttr grid, bool interleave, rt::DType dtype,
                         int64_t steps, bool shiftA, bool shiftB,
                         int64_t overlapped) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  int64_t aTile = t.aSlots * t.mt * t.kt, bTile = t.bSlots * t.kt * t.nt;
  bool sendA = shiftA && w > 1, sendB = shiftB && h > 1;
  double rotateA =
             shiftA && t.aSlots > 1 ? timing.kernelCycles(aTile, dtype) : 0,
         rotateB =
             shiftB && t.bSlots > 1 ? timing.kernelCycles(bTile, dtype) : 0;
  double receive = double(timing.receiveCycles());
  double receives = double(sendA + sendB) * receive;
  double own = double((sendA + sendB) * timing.sendIssueCycles() + overlapped) +
               receives + rotateA + rotateB;
  double cycles = double(steps) * own;
  if (sendA) {
    RingHops hops = ringHops(w, interleave);
    double round = double(messageCycles(timing, aTile, dtype, hops.step)) +
                   receives + rotateA / double(w) + rotateB;
    cycles = std::max(cycles, ringSteps(steps, own, round,
                                        double(hops.longest - hops.step) *
                                            double(timing.hopCycles()),
                                        w));
  }
  if (sendB) {
    RingHops hops = ringHops(h, interleave);
    double departure =
        sendA ? double(std::max(
                    timing.sendIssueCycles(),
                    timing.occupancy(rt::TimingModel::words(aTile, dtype))))
              : 0;
    double round = departure +
                   double(messageCycles(timing, bTile, dtype, hops.step)) +
                   receive + rotateB / double(h);
    cycles = std::max(cycles, ringSteps(steps, own, round,
                                        double(hops.longest - hops.step) *
                                            double(timing.hopCycles()),
                                        h));
  }
  return cycles;
}

/// SUMMA's steps, evaluated core by core: the owners of step i + 1 sit
/// next to those of step i, so the steps pipeline, each core receiving and
/// forwarding one block per hop of the row and of the column broadcast as
/// soon as it has finished the step before. The recurrence mirrors
/// LowerGemm.cpp's program (an owner's two sends share its ramp; a panel
/// is written again only once its last send has left). Beyond a budget of
/// core-steps it gives the pipeline's steady state instead.
static int64_t summaCycles(const rt::TimingModel &timing, const GemmTiling &t,
                           GridAttr grid, rt::DType dtype, int64_t multiply) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  int64_t aBlock = t.mt * t.kt, bBlock = t.kt * t.nt;
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  int64_t copyA = t.aSlots > 1 ? timing.kernelCycles(aBlock, dtype) : 0,
          copyB = t.bSlots > 1 ? timing.kernelCycles(bBlock, dtype) : 0;
  int64_t occupancyA = timing.occupancy(rt::TimingModel::words(aBlock, dtype)),
          occupancyB = timing.occupancy(rt::TimingModel::words(bBlock, dtype));
  int64_t latencyA = messageCycles(timing, aBlock, dtype, 1),
          latencyB = messageCycles(timing, bBlock, dtype, 1);
  constexpr int64_t kCoreStepBudget = 200'000'000;
  if (t.blocks > kCoreStepBudget / (h * w))
    return t.blocks * (multiply + 2 * (receive + issue) + copyA + copyB) +
           std::max((w - 1) * (latencyA + receive),
                    (h - 1) * (latencyB + receive));
  // Per core: its time, and when the last send of each panel leaves.
  std::vector<int64_t> time(h * w, 0), freeA(h * w, 0), freeB(h * w, 0);
  // One broadcast along a line of n cores (stride apart in `time`) from
  // the owner at position o.
  auto broadcast = [&](int64_t base, int64_t stride, int64_t n, int64_t o,
                       std::vector<int64_t> &panelFree, int64_t copy,
                       int64_t occupancy, int64_t latency) {
    auto at = [&](int64_t p) -> int64_t & { return time[base + p * stride]; };
    auto panel = [&](int64_t p) -> int64_t & {
      return panelFree[base + p * stride];
    };
    int64_t &owner = at(o);
    owner = std::max(owner, panel(o)) + copy;
    // Forward, then backward: the second send leaves after the first's
    // words.
    int64_t forward = owner, backward = owner, ramp = owner;
    if (o + 1 < n) {
      ramp = owner + occupancy;
      owner += issue;
    }
    if (o > 0) {
      backward = std::max(owner, ramp);
      ramp = backward + occupancy;
      owner = backward + issue;
    }
    panel(o) = ramp;
    for (int direction : {1, -1}) {
      int64_t departure = direction > 0 ? forward : backward;
      for (int64_t p = o + direction; p >= 0 && p < n; p += direction) {
        int64_t &core = at(p);
        core = std::max({core, departure + latency, panel(p)}) + receive;
        departure = core;
        bool forwards = p + direction >= 0 && p + direction < n;
        panel(p) = forwards ? core + occupancy : core;
        if (forwards)
          core += issue;
      }
    }
  };
  for (int64_t i = 0; i < t.blocks; ++i) {
    for (int64_t y = 0; y < h; ++y)
      broadcast(y * w, 1, w, i % w, freeA, copyA, occupancyA, latencyA);
    for (int64_t x = 0; x < w; ++x)
      broadcast(x, w, h, i % h, freeB, copyB, occupancyB, latencyB);
    for (int64_t &core : time)
      core += multiply;
  }
  return *std::max_element(time.begin(), time.end());
}

/// MeshGEMM's (or Cannon's) alignment and compute-shift steps evaluated
/// core by core, or nullopt beyond a budget of core-steps. In round j of
/// the alignment row ly still shifts A (j < ly) and column lx still shifts
/// B (j < lx), so every core's k-th message on a ring belongs to round k;
/// each core sends, works, then receives from the next ring position (B
/// after A on its ramps) and rotates the slots of a wrap-around.
static std::optional<int64_t> meshgemmCycles(const rt::TimingModel &timing,
                                             const GemmTiling &t, GridAttr grid,
                                             bool interleave, rt::DType dtype,
                                             int64_t multiply) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  int64_t alignment = std::max(h, w) - 1, rounds = alignment + t.blocks - 1;
  constexpr int64_t kCoreStepBudget = 200'000'000;
  if (rounds > kCoreStepBudget / (h * w))
    return std::nullopt;
  int64_t aTile = t.aSlots * t.mt * t.kt, bTile = t.bSlots * t.kt * t.nt;
  int64_t occupancyA = timing.occupancy(rt::TimingModel::words(aTile, dtype)),
          occupancyB = timing.occupancy(rt::TimingModel::words(bTile, dtype));
  int64_t rotateA = t.aSlots > 1 ? timing.kernelCycles(aTile, dtype) : 0,
          rotateB = t.bSlots > 1 ? timing.kernelCycles(bTile, dtype) : 0;
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  std::vector<int64_t> px = rt::ringOrder(w, interleave),
                       py = rt::ringOrder(h, interleave);
  // Latency from core (x, y) to the previous ring position along each axis.
  auto latencyA = [&](int64_t x) {
    return messageCycles(timing, aTile, dtype,
                         std::abs(px[x] - px[(x + w - 1) % w]));
  };
  auto latencyB = [&](int64_t y) {
    return messageCycles(timing, bTile, dtype,
                         std::abs(py[y] - py[(y + h - 1) % h]));
  };
  std::vector<int64_t> time(h * w, 0), departA(h * w), departB(h * w);
  for (int64_t round = 0; round < rounds; ++round) {
    bool computing = round >= alignment;
    auto shifts = [&](int64_t x, int64_t y) {
      return std::pair<bool, bool>{
          (w > 1 || t.aSlots > 1) && (computing || round < y),
          (h > 1 || t.bSlots > 1) && (computing || round < x)};
    };
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        auto [a, b] = shifts(x, y);
        int64_t &now = time[y * w + x];
        if (a && w > 1) {
          departA[y * w + x] = now;
          now += issue;
        }
        if (b && h > 1) {
          departB[y * w + x] =
              a && w > 1 ? std::max(now, departA[y * w + x] + occupancyA) : now;
          now += issue;
        }
        if (computing)
          now += multiply;
      }
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        auto [a, b] = shifts(x, y);
        int64_t &now = time[y * w + x];
        bool receivesA = a && w > 1, receivesB = b && h > 1;
        // From the next ring positions, which send to this one; the two
        // messages come in over the core's ramp one after the other.
        int64_t arrivalA =
            receivesA ? departA[y * w + (x + 1) % w] + latencyA((x + 1) % w)
                      : 0;
        int64_t arrivalB =
            receivesB ? departB[((y + 1) % h) * w + x] + latencyB((y + 1) % h)
                      : 0;
        if (receivesA && receivesB) {
          if (arrivalA - occupancyA <= arrivalB - occupancyB)
            arrivalB = std::max(arrivalB, arrivalA + occupancyB);
          else
            arrivalA = std::max(arrivalA, arrivalB + occupancyA);
        }
        if (receivesA)
          now = std::max(now, arrivalA) + receive;
        if (a && x == w - 1)
          now += rotateA;
        if (receivesB)
          now = std::max(now, arrivalB) + receive;
        if (b && y == h - 1)
          now += rotateB;
      }
  }
  return *std::max_element(time.begin(), time.end()) + multiply;
}

int64_t GemmOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                               bool interleave) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  GemmTiling t = getTiling(grid);
  rt::DType dtype = dtypeOf(getResult());
  auto kernel = [&](int64_t work) { return timing.kernelCycles(work, dtype); };
  int64_t multiply = kernel(t.mt * t.kt * t.nt);
  int64_t aBlock = t.mt * t.kt, bBlock = t.kt * t.nt;
  int64_t cycles = kernel(t.mt * t.nt);
  auto hop = [&](int64_t elements) {
    return messageCycles(timing, elements, dtype, 1) + timing.receiveCycles();
  };
  switch (getAlgorithm()) {
  case GemmAlgorithm::summa:
    return cycles + summaCycles(timing, t, grid, dtype, multiply);
  case GemmAlgorithm::allgather: {
    // W - 1 (H - 1) shifts of whole chunks, each copied into the panel,
    // then every block pair multiplied.
    int64_t aChunk = t.aSlots * aBlock, bChunk = t.bSlots * bBlock;
    cycles += kernel(aChunk) + kernel(bChunk);
    auto gather = [&](int64_t chunk, int64_t n) {
      return ringShiftCycles(timing, n - 1, chunk, dtype, n, interleave, 0, 0,
                             kernel(chunk));
    };
    cycles += gather(aChunk, w) + gather(bChunk, h);
    return cycles + t.blocks * (kernel(aBlock) + kernel(bBlock) + multiply);
  }
  case GemmAlgorithm::meshgemm:
  case GemmAlgorithm::cannon:
    break;
  }
  // Operands other ops read too are shifted as copies.
  if (!getLhs().hasOneUse())
    cycles += kernel(localElements(getLhs(), grid));
  if (!getRhs().hasOneUse())
    cycles += kernel(localElements(getRhs(), grid));
  if (std::optional<int64_t> evaluated =
          meshgemmCycles(timing, t, grid, interleave, dtype, multiply))
    return cycles + *evaluated;
  // Alignment: the last row shifts A H - 1 times and the last column B
  // W - 1 times, both together as long as both shift.
  bool shiftsA = w > 1 || t.aSlots > 1, shiftsB = h > 1 || t.bSlots > 1;
  int64_t alignA = shiftsA ? h - 1 : 0, alignB = shiftsB ? w - 1 : 0;
  int64_t both = std::min(alignA, alignB);
  double aligned = shiftSteps(timing, t, grid, interleave, dtype, both, shiftsA,
                              shiftsB, 0) +
                   shiftSteps(timing, t, grid, interleave, dtype, alignA - both,
                              true, false, 0) +
                   shiftSteps(timing, t, grid, interleave, dtype, alignB - both,
                              false, true, 0);
  // Compute-shift: the multiply overlaps the transfers.
  double computed = shiftSteps(timing, t, grid, interleave, dtype, t.blocks - 1,
                               shiftsA, shiftsB, multiply);
  return cycles + std::llround(aligned + computed) + multiply;
}
