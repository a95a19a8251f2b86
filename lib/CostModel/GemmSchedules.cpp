//===- GemmSchedules.cpp - The cycles of SUMMA's and MeshGEMM's steps -----===//
//
// SUMMA's steps are simulated core by core in the order of their time, as
// the emulator runs the lowered program (passes/conversion/LowerGemm.cpp),
// within a budget of core-steps (MeshGEMM's: RingRuns.cpp); beyond it the
// closed forms of the schedules' steady states stand in.
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"
#include "wafer/Runtime/Fabric.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <optional>

namespace wafer::cost {

/// The cycles of `steps` steps of MeshGEMM's ring shifts (A along x, B
/// along y, or one of them) with `overlapped` cycles of work between the
/// sends and the receives (see ringSteps): the critical core's own
/// sequence, or a message's way round the x ring of the last row (where
/// every core also rotates B) or the y ring, each receiver doing what
/// follows its receive. The core at a ring's last position rotates the
/// slots it receives; the two messages share a core's ramps, so B leaves
/// after A's words.
static double shiftSteps(const rt::TimingModel &timing, const GemmTiling &t,
                         int64_t h, int64_t w, bool interleave, rt::DType dtype,
                         int64_t steps, bool shiftA, bool shiftB,
                         int64_t overlapped) {
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

/// Each core's end of a simulated schedule, or nullopt beyond the budget.
using CoreEnds = std::optional<std::vector<int64_t>>;

/// Runs a schedule from the clock's times: simulated (from a common start,
/// once per process) where the budget allows, each core ending where the
/// simulation ends it; otherwise every core waits for the last and takes
/// the closed form.
template <typename Memoized, typename Simulate, typename ClosedForm>
static void advanceSchedule(CoreClock &clock, Memoized fromCommonStart,
                            Simulate simulate, ClosedForm closedForm) {
  // Staggered starts have the common start's budget: beyond it, the
  // clock's times are not even read.
  const CoreEnds &common = fromCommonStart();
  if (!common) {
    clock.barrier(closedForm());
    return;
  }
  std::vector<int64_t> ends;
  if (clock.uniform()) {
    ends = *common;
    for (int64_t &end : ends)
      end += clock.latest();
  } else {
    std::vector<int64_t> starts = clock.perCore();
    int64_t base = *std::min_element(starts.begin(), starts.end());
    for (int64_t &start : starts)
      start -= base;
    CoreEnds simulated = simulate(starts);
    assert(simulated && "within the common start's budget");
    ends = std::move(*simulated);
    for (int64_t &end : ends)
      end += base;
  }
  clock.set(std::move(ends));
}

/// Each simulated core's time when it is done.
template <typename Core>
static std::vector<int64_t> endsOf(const std::vector<Core> &cores) {
  std::vector<int64_t> ends;
  ends.reserve(cores.size());
  for (const Core &core : cores)
    ends.push_back(core.now);
  return ends;
}

/// SUMMA's steps, evaluated core by core in the order of their time, as
/// LowerGemm.cpp's program runs: in step i the owner of block i in each
/// row (column) lends it to its panel and sends it both ways, every other
/// core receives it and passes it on, then every core multiplies; the
/// steps pipeline. Each core's outgoing and incoming ramp is a resource
/// that the row's and the column's messages share in the order they are
/// sent, and a panel is written again only once its last send has left.
/// Each core starts at `starts` (none: 0). Nullopt beyond a budget of
/// core-steps.
static CoreEnds simulateSumma(const rt::TimingModel &timing,
                              const GemmTiling &t, int64_t h, int64_t w,
                              rt::DType dtype, int64_t multiply,
                              const std::vector<int64_t> &starts) {
  int64_t n = h * w;
  if (t.blocks > kCoreStepBudget / n)
    return std::nullopt;
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
  for (int64_t c = 0; c < n && !starts.empty(); ++c)
    cores[c].now = starts[c];
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
  ReadyCores ready(n, starts);
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
  return endsOf(cores);
}

/// SUMMA's steady state, beyond the simulation's budget (within 0.2% of
/// the simulation on square grids, 5% on non-square ones measured). A
/// step's broadcast starts at its owner once the owner is done with the
/// step before, so the critical path rides the owners one hop a step and
/// jumps across the axis where the ownership wraps: two crossings of each
/// axis per lap of its extent, a hop (a message and its receive) each. At
/// the corner the column's pass-on waits for the row's block to leave the
/// ramp.
static int64_t summaSteadyState(const rt::TimingModel &timing,
                                const GemmTiling &t, int64_t h, int64_t w,
                                rt::DType dtype, int64_t multiply) {
  int64_t blockA = t.mt * t.kt, blockB = t.kt * t.nt;
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  int64_t copies = (t.aSlots > 1 ? timing.kernelCycles(blockA, dtype) : 0) +
                   (t.bSlots > 1 ? timing.kernelCycles(blockB, dtype) : 0);
  int64_t latencyA = messageCycles(timing, blockA, dtype, 1),
          latencyB = messageCycles(timing, blockB, dtype, 1);
  int64_t own = multiply + 2 * (receive + issue) + copies;
  int64_t corner = std::max<int64_t>(
      0, timing.occupancy(rt::TimingModel::words(blockA, dtype)) - receive -
             issue);
  double chains = 2.0 * double(t.blocks) *
                  (double(w - 1) / double(w) * double(latencyA + receive) +
                   double(h - 1) / double(h) * double(latencyB + receive));
  return t.blocks * (own + corner) + std::llround(chains);
}

/// MeshGEMM's closed form, beyond the simulation's budget.
int64_t meshGemmClosedForm(const rt::TimingModel &timing, const GemmTiling &t,
                           int64_t h, int64_t w, bool interleave,
                           rt::DType dtype, int64_t multiply) {
  // Alignment: the last row shifts A H - 1 times and the last column B
  // W - 1 times, both together as long as both shift.
  bool shiftsA = w > 1 || t.aSlots > 1, shiftsB = h > 1 || t.bSlots > 1;
  int64_t alignA = shiftsA ? h - 1 : 0, alignB = shiftsB ? w - 1 : 0;
  int64_t both = std::min(alignA, alignB);
  double aligned = shiftSteps(timing, t, h, w, interleave, dtype, both, shiftsA,
                              shiftsB, 0) +
                   shiftSteps(timing, t, h, w, interleave, dtype, alignA - both,
                              true, false, 0) +
                   shiftSteps(timing, t, h, w, interleave, dtype, alignB - both,
                              false, true, 0);
  // Compute-shift: the multiply overlaps the transfers.
  double computed = shiftSteps(timing, t, h, w, interleave, dtype, t.blocks - 1,
                               shiftsA, shiftsB, multiply);
  return std::llround(aligned + computed) + multiply;
}

void advanceSumma(const rt::TimingModel &timing, const GemmTiling &t,
                  rt::DType dtype, int64_t multiply, CoreClock &clock) {
  int64_t h = clock.height(), w = clock.width();
  advanceSchedule(
      clock,
      [&]() -> const CoreEnds & {
        return simulatedOnce<CoreEnds>(
            scheduleKey(t, h, w, false, dtype, 0, multiply, timing), [&] {
              return simulateSumma(timing, t, h, w, dtype, multiply, {});
            });
      },
      [&](const std::vector<int64_t> &starts) {
        return simulateSumma(timing, t, h, w, dtype, multiply, starts);
      },
      [&] { return summaSteadyState(timing, t, h, w, dtype, multiply); });
}

} // namespace wafer::cost
