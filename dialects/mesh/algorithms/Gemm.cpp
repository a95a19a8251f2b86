//===- Gemm.cpp - MeshGEMM, Cannon, SUMMA and allgather plans -------------===//
//
// The tiling, channels and working buffers of mesh.gemm's algorithms
// (paper section 5 and its baselines). Lowered by
// passes/conversion/LowerGemm.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

#include "wafer/Support/CheckedMath.h"
#include <array>
#include <deque>
#include <map>
#include <mutex>
#include <queue>

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

/// Core-steps a GEMM's schedule is simulated for at most (about 0.2 s);
/// beyond it the estimates use closed forms.
constexpr int64_t kCoreStepBudget = 1'000'000;

/// The cores of a simulated schedule by their time, earliest first (ties:
/// the lower core id, the order the emulator commits sends in).
class ReadyCores {
public:
  explicit ReadyCores(int64_t cores) {
    for (int64_t c = 0; c < cores; ++c)
      push(0, c);
  }
  bool empty() const { return queue.empty(); }
  void push(int64_t time, int64_t core) {
    queue.push((uint64_t(time) << kCoreBits) | uint64_t(core));
  }
  std::pair<int64_t, int64_t> pop() {
    uint64_t top = queue.top();
    queue.pop();
    return {int64_t(top >> kCoreBits), int64_t(top & ((1u << kCoreBits) - 1))};
  }

private:
  // 2^24 cores (more than a wafer's) and 2^40 cycles.
  static constexpr unsigned kCoreBits = 24;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> queue;
};

/// A simulated schedule is a pure function of the tiling, the grid and the
/// prices; a model's layers repeat the same few GEMMs, so each is
/// simulated once per process.
template <typename Simulate>
static int64_t memoized(const GemmTiling &t, GridAttr grid, bool interleave,
                        rt::DType dtype, const rt::TimingModel &timing,
                        int kind, Simulate simulate) {
  using Key = std::array<int64_t, 17>;
  const rt::Target &target = timing.target();
  Key key = {kind,
             grid.getHeight(),
             grid.getWidth(),
             interleave,
             int64_t(dtype),
             t.mt,
             t.kt,
             t.nt,
             t.aSlots,
             t.bSlots,
             t.blocks,
             target.sendIssueCycles,
             target.relayCycles,
             target.rampCycles,
             target.hopCycles,
             target.linkWordsPerCycle,
             timing.kernelCycles(1 << 20, dtype)};
  static std::mutex mutex;
  static std::map<Key, int64_t> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
  }
  int64_t cycles = simulate();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, cycles);
  return cycles;
}

/// SUMMA's steps, evaluated core by core in the order of their time, as
/// LowerGemm.cpp's program runs: in step i the owner of block i in each
/// row (column) lends it to its panel and sends it both ways, every other
/// core receives it and passes it on, then every core multiplies; the
/// steps pipeline. Each core's outgoing and incoming ramp is a resource
/// that the row's and the column's messages share in the order they are
/// sent, and a panel is written again only once its last send has left.
/// Beyond a budget of core-steps it gives the schedule's steady state
/// (within 0.2% of it on square grids, 5% on non-square ones measured).
static int64_t summaCycles(const rt::TimingModel &timing, const GemmTiling &t,
                           GridAttr grid, rt::DType dtype, int64_t multiply) {
  int64_t h = grid.getHeight(), w = grid.getWidth(), n = h * w;
  // The row broadcast (A, along x) is 0, the column's (B, along y) 1.
  int64_t blocks[2] = {t.mt * t.kt, t.kt * t.nt};
  int64_t extents[2] = {w, h}, slots[2] = {t.aSlots, t.bSlots};
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  int64_t ramp = timing.rampCycles(), hop = timing.hopCycles();
  int64_t copies[2], occupancies[2];
  for (int k : {0, 1}) {
    copies[k] = slots[k] > 1 ? timing.kernelCycles(blocks[k], dtype) : 0;
    occupancies[k] = timing.occupancy(rt::TimingModel::words(blocks[k], dtype));
  }
  if (t.blocks > kCoreStepBudget / n) {
    // The steady state of the schedule below. A step's broadcast starts at
    // its owner once the owner is done with the step before, so the
    // critical path rides the owners one hop a step and jumps across the
    // axis where the ownership wraps: two crossings of each axis per lap
    // of its extent, a hop (a message and its receive) each. At the corner
    // the column's pass-on waits for the row's block to leave the ramp.
    int64_t latencyA = messageCycles(timing, blocks[0], dtype, 1),
            latencyB = messageCycles(timing, blocks[1], dtype, 1);
    int64_t own = multiply + 2 * (receive + issue) + copies[0] + copies[1];
    int64_t corner = std::max<int64_t>(0, occupancies[0] - receive - issue);
    double chains =
        2.0 * double(t.blocks) *
        (double(w - 1) / double(w) * double(latencyA + receive) +
         double(h - 1) / double(h) * double(latencyB + receive));
    return t.blocks * (own + corner) + std::llround(chains);
  }
  // What a core does in a step, in program order.
  enum class Kind : uint8_t { Copy, Receive, Send, Multiply };
  struct Action {
    Kind kind;
    int cast = 0;
    // Receive and Send: forward (towards higher coordinates) or backward;
    // Send: from the panel (not the lent tile).
    bool forward = true, fromPanel = true;
  };
  struct Core {
    int64_t now = 0, rampOut = 0, rampIn = 0;
    int64_t step = 0;
    size_t next = 0;
    bool waiting = false;
    std::vector<Action> actions;
    // Per cast: when the panel's last send leaves, and the arrivals from
    // behind (forward) and ahead (backward) not yet received.
    int64_t panelFree[2] = {0, 0};
    std::deque<int64_t> inbox[2][2];
  };
  std::vector<Core> cores(n);
  auto plan = [&](int64_t c, int64_t step, std::vector<Action> &actions) {
    actions.clear();
    for (int k : {0, 1}) {
      int64_t pos = k == 0 ? c % w : c / w, owner = step % extents[k];
      bool last = pos + 1 == extents[k], first = pos == 0;
      if (pos == owner) {
        if (slots[k] > 1)
          actions.push_back({Kind::Copy, k});
        // One slot: the owner lends its tile itself, by a swap.
        if (!last)
          actions.push_back({Kind::Send, k, true, slots[k] > 1});
        if (!first)
          actions.push_back({Kind::Send, k, false, slots[k] > 1});
      } else {
        bool forward = pos > owner;
        actions.push_back({Kind::Receive, k, forward});
        if (forward ? !last : !first)
          actions.push_back({Kind::Send, k, forward, true});
      }
    }
    actions.push_back({Kind::Multiply});
  };
  ReadyCores ready(n);
  while (!ready.empty()) {
    auto [popped, c] = ready.pop();
    Core &core = cores[c];
    while (core.step < t.blocks) {
      if (core.next == 0)
        plan(c, core.step, core.actions);
      if (core.next == core.actions.size()) {
        ++core.step;
        core.next = 0;
        continue;
      }
      const Action &action = core.actions[core.next];
      int k = action.cast;
      if (action.kind == Kind::Copy) {
        core.now = std::max(core.now, core.panelFree[k]) + copies[k];
      } else if (action.kind == Kind::Multiply) {
        core.now += multiply;
      } else if (action.kind == Kind::Receive) {
        std::deque<int64_t> &inbox = core.inbox[k][action.forward];
        if (inbox.empty()) {
          core.waiting = true;
          break;
        }
        core.now =
            std::max({core.now, inbox.front(), core.panelFree[k]}) + receive;
        inbox.pop_front();
      } else {
        // Sends reserve the ramps in the order of their time.
        if (core.now > popped) {
          ready.push(core.now, c);
          break;
        }
        int64_t stride = k == 0 ? 1 : w;
        int64_t to = c + (action.forward ? stride : -stride);
        int64_t occupancy = occupancies[k];
        int64_t start = std::max(core.now, core.rampOut);
        core.rampOut = start + occupancy;
        if (action.fromPanel)
          core.panelFree[k] = start + occupancy;
        core.now += issue;
        Core &receiver = cores[to];
        int64_t in = std::max(start + ramp + hop, receiver.rampIn);
        receiver.rampIn = in + occupancy;
        receiver.inbox[k][action.forward].push_back(in + occupancy + ramp);
        if (receiver.waiting) {
          receiver.waiting = false;
          ready.push(receiver.now, to);
        }
      }
      ++core.next;
    }
  }
  int64_t last = 0;
  for (const Core &core : cores)
    last = std::max(last, core.now);
  return last;
}

/// MeshGEMM's (or Cannon's) alignment and compute-shift steps evaluated
/// core by core, or nullopt beyond a budget of core-steps. Core (lx, ly)
/// first shifts A ly times and B lx times (both at once while both shift),
/// then runs blocks - 1 steps that send A and B, multiply and receive; each
/// receive takes the next message from the next ring position and rotates
/// the slots of a wrap-around. The cores advance in the order of their
/// time, as the emulator's do, because messages meet on a core's ramps:
/// a send waits for the core's earlier sends to leave, an arrival for the
/// ones before it to come in (the B tile of a core already computing can
/// hold up the A tile of one still aligning), and a receive for the send
/// that last read its buffer.
static std::optional<int64_t> meshgemmCycles(const rt::TimingModel &timing,
                                             const GemmTiling &t, GridAttr grid,
                                             bool interleave, rt::DType dtype,
                                             int64_t multiply) {
  int64_t h = grid.getHeight(), w = grid.getWidth(), n = h * w;
  int64_t rounds = std::max(h, w) - 1 + t.blocks - 1;
  if (rounds > kCoreStepBudget / n)
    return std::nullopt;
  bool shiftsA = w > 1 || t.aSlots > 1, shiftsB = h > 1 || t.bSlots > 1;
  // A shifts along x, B along y; index 0 is A, 1 is B.
  int64_t tiles[2] = {t.aSlots * t.mt * t.kt, t.bSlots * t.kt * t.nt};
  int64_t extents[2] = {w, h}, slots[2] = {t.aSlots, t.bSlots};
  std::vector<int64_t> order[2] = {rt::ringOrder(w, interleave),
                                   rt::ringOrder(h, interleave)};
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  int64_t ramp = timing.rampCycles(), hop = timing.hopCycles();
  struct Core {
    int64_t now = 0, rampOut = 0, rampIn = 0;
    // Steps done, and how far into this one: sending A (0) and B (1),
    // each at its own time as the emulator commits sends in time order,
    // then multiplying and receiving (2).
    int64_t step = 0;
    int phase = 0;
    bool waiting = false;
    // Per operand: when this step's send and the one before left the
    // core, and the arrivals not yet received.
    int64_t sent[2] = {0, 0}, left[2] = {0, 0};
    std::deque<int64_t> inbox[2];
  };
  std::vector<Core> cores(n);
  // Core (x, y)'s step s: which operands it shifts, whether it multiplies.
  struct Step {
    bool shifts[2];
    bool compute;
  };
  auto plan = [&](int64_t x, int64_t y, int64_t s) {
    int64_t both = shiftsA && shiftsB ? std::min(x, y) : 0;
    int64_t onlyA = shiftsA ? y - both : 0, onlyB = shiftsB ? x - both : 0;
    if (s < both)
      return Step{{true, true}, false};
    if (s < both + onlyA)
      return Step{{true, false}, false};
    if (s < both + onlyA + onlyB)
      return Step{{false, true}, false};
    return Step{{shiftsA, shiftsB}, true};
  };
  auto steps = [&](int64_t x, int64_t y) {
    int64_t both = shiftsA && shiftsB ? std::min(x, y) : 0;
    return (shiftsA ? y : 0) + (shiftsB ? x : 0) - both + t.blocks - 1;
  };
  ReadyCores ready(n);
  // Sends operand k of core c to the previous ring position; the receiver
  // reserves its ramp in the order of the sends.
  auto send = [&](int64_t c, int k) {
    Core &from = cores[c];
    int64_t x = c % w, y = c / w;
    int64_t pos = k == 0 ? x : y, prev = (pos + extents[k] - 1) % extents[k];
    int64_t to = k == 0 ? y * w + prev : prev * w + x;
    int64_t occupancy =
        timing.occupancy(rt::TimingModel::words(tiles[k], dtype));
    int64_t start = std::max(from.now, from.rampOut);
    from.rampOut = start + occupancy;
    from.sent[k] = start + occupancy;
    from.now += issue;
    int64_t head =
        start + ramp + std::abs(order[k][pos] - order[k][prev]) * hop;
    Core &receiver = cores[to];
    int64_t in = std::max(head, receiver.rampIn);
    receiver.rampIn = in + occupancy;
    receiver.inbox[k].push_back(in + occupancy + ramp);
    if (receiver.waiting) {
      receiver.waiting = false;
      ready.push(receiver.now, to);
    }
  };
  while (!ready.empty()) {
    int64_t c = ready.pop().second;
    Core &core = cores[c];
    int64_t x = c % w, y = c / w;
    if (core.step == steps(x, y)) {
      core.now += multiply;
      continue;
    }
    Step step = plan(x, y, core.step);
    bool ring[2] = {step.shifts[0] && w > 1, step.shifts[1] && h > 1};
    if (core.phase < 2) {
      int k = core.phase++;
      if (ring[k])
        send(c, k);
      if (k == 1 && step.compute)
        core.now += multiply;
      ready.push(core.now, c);
      continue;
    }
    if ((ring[0] && core.inbox[0].empty()) ||
        (ring[1] && core.inbox[1].empty())) {
      core.waiting = true;
      continue;
    }
    for (int k : {0, 1}) {
      if (ring[k]) {
        core.now =
            std::max({core.now, core.inbox[k].front(), core.left[k]}) + receive;
        core.inbox[k].pop_front();
        core.left[k] = core.sent[k];
      }
      // The wrap-around (or a ring of one) rotates the slots.
      int64_t pos = k == 0 ? x : y;
      if (step.shifts[k] && slots[k] > 1 &&
          (extents[k] == 1 || pos == extents[k] - 1))
        core.now += timing.kernelCycles(tiles[k], dtype);
    }
    ++core.step;
    core.phase = 0;
    ready.push(core.now, c);
  }
  int64_t last = 0;
  for (const Core &core : cores)
    last = std::max(last, core.now);
  return last;
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
  switch (getAlgorithm()) {
  case GemmAlgorithm::summa:
    return cycles + memoized(t, grid, false, dtype, timing, /*kind=*/0, [&] {
             return summaCycles(timing, t, grid, dtype, multiply);
           });
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
  int64_t simulated =
      memoized(t, grid, interleave, dtype, timing, /*kind=*/1, [&] {
        return meshgemmCycles(timing, t, grid, interleave, dtype, multiply)
            .value_or(-1);
      });
  if (simulated >= 0)
    return cycles + simulated;
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
