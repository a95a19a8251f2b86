//===- RingRuns.cpp - Consecutive ring ops simulated together -------------===//
//
// MeshGEMMs, relayouts and the local work between them move tiles to the
// previous position of a ring along x or y. A core goes on to the next op
// as soon as it is done with one, so its first sends meet the last
// messages of cores still in the op before on the ramps they share; the
// emulator takes them in the order they are sent. Such a run of ops is
// simulated as one schedule, core by core in the order of their time,
// within the budget of core-steps (Schedules.h).
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"
#include "wafer/Runtime/Fabric.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <optional>

namespace wafer::cost {

namespace {

/// What one core does in one step of a ring op: send the operands it
/// shifts (A, or the relayout's tile along x, is operand 0; B, or the
/// tile along y, 1), work `overlapped` cycles, receive each operand and
/// work `afterReceive` after it, then `after`.
struct RingStep {
  bool shifts[2] = {false, false};
  int64_t overlapped = 0, afterReceive[2] = {0, 0}, after = 0;
};

/// One op of a run, as the simulation asks it core by core.
class RunOpShape {
public:
  RunOpShape(const rt::TimingModel &timing, const RunOp &op, int64_t h,
             int64_t w)
      : op(op) {
    extents[0] = w;
    extents[1] = h;
    bool interleave = false;
    int64_t tiles[2] = {0, 0};
    rt::DType dtype = rt::DType::F32;
    if (auto *gemm = std::get_if<MeshGemm>(&op)) {
      const GemmTiling &t = gemm->tiling;
      shiftsAt[0] = w > 1 || t.aSlots > 1;
      shiftsAt[1] = h > 1 || t.bSlots > 1;
      tiles[0] = t.aSlots * t.mt * t.kt;
      tiles[1] = t.bSlots * t.kt * t.nt;
      interleave = gemm->interleave;
      dtype = gemm->dtype;
      for (int k : {0, 1})
        if ((k == 0 ? t.aSlots : t.bSlots) > 1)
          rotations[k] = timing.kernelCycles(tiles[k], dtype);
    } else if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      int k = relayout->alongX ? 0 : 1;
      shiftsAt[k] = true;
      tiles[k] = relayout->tileElements;
      interleave = relayout->interleave;
      dtype = relayout->dtype;
    }
    for (int k : {0, 1}) {
      occupancies[k] =
          timing.occupancy(rt::TimingModel::words(tiles[k], dtype));
      order[k] = rt::ringOrder(extents[k], interleave);
      positions[k] = rt::ringPositions(extents[k], interleave);
    }
  }

  /// The steps on the core that takes the most.
  int64_t rounds() const {
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return std::max(extents[0], extents[1]) - 1 + gemm->tiling.blocks - 1;
    if (auto *relayout = std::get_if<RingRelayout>(&op))
      return extents[relayout->alongX ? 0 : 1] - 1;
    return 0;
  }

  /// The core at ring positions (x, y)'s steps.
  int64_t steps(int64_t x, int64_t y) const {
    if (auto *gemm = std::get_if<MeshGemm>(&op)) {
      // Alignment: A shifts y times, B x times, both at once while both
      // shift; then the compute-shift steps.
      int64_t both = shiftsAt[0] && shiftsAt[1] ? std::min(x, y) : 0;
      return (shiftsAt[0] ? y : 0) + (shiftsAt[1] ? x : 0) - both +
             gemm->tiling.blocks - 1;
    }
    return rounds();
  }

  /// The core at ring positions (x, y)'s work before its first step.
  int64_t before(int64_t x, int64_t y) const {
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return gemm->before;
    if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      int64_t position = relayout->alongX ? x : y;
      return relayout->before + relayout->keep(position, position);
    }
    return std::get<LocalWork>(op).cycles;
  }

  /// Each core's work after its last step: MeshGEMM's last multiply.
  int64_t finish() const {
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return gemm->multiply;
    return 0;
  }

  /// The core at ring positions (x, y)'s step s.
  RingStep step(int64_t x, int64_t y, int64_t s) const {
    RingStep step;
    if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      // After s + 1 shifts a core holds the tile of position + s + 1.
      int64_t k = relayout->alongX ? 0 : 1, position = k == 0 ? x : y;
      step.shifts[k] = true;
      step.after = relayout->keep(position, (position + s + 1) % extents[k]);
      return step;
    }
    const MeshGemm &gemm = std::get<MeshGemm>(op);
    int64_t both = shiftsAt[0] && shiftsAt[1] ? std::min(x, y) : 0;
    int64_t onlyA = shiftsAt[0] ? y - both : 0,
            onlyB = shiftsAt[1] ? x - both : 0;
    if (s < both) {
      step.shifts[0] = step.shifts[1] = true;
    } else if (s < both + onlyA) {
      step.shifts[0] = true;
    } else if (s < both + onlyA + onlyB) {
      step.shifts[1] = true;
    } else {
      // A compute-shift step: the multiply overlaps the transfers.
      step.shifts[0] = shiftsAt[0];
      step.shifts[1] = shiftsAt[1];
      step.overlapped = gemm.multiply;
    }
    // The wrap-around (or a ring of one) rotates the slots.
    for (int k : {0, 1}) {
      int64_t position = k == 0 ? x : y;
      if (step.shifts[k] && (extents[k] == 1 || position == extents[k] - 1))
        step.afterReceive[k] = rotations[k];
    }
    return step;
  }

  int64_t extents[2], occupancies[2];
  /// Per axis: the physical index of each ring position, and the ring
  /// position of each physical index.
  std::vector<int64_t> order[2], positions[2];

private:
  const RunOp &op;
  bool shiftsAt[2] = {false, false};
  int64_t rotations[2] = {0, 0};
};

/// Each core's end of each op of a run, or nullopt beyond the budget.
using RunEnds = std::optional<std::vector<std::vector<int64_t>>>;

} // namespace

/// The ops of a run evaluated core by core, or nullopt beyond the budget
/// of core-steps. The cores advance in the order of their time, as the
/// emulator's do, because messages meet on a core's ramps: a send waits
/// for the core's earlier sends to leave, an arrival for the ones before
/// it to come in (the B tile of a core already computing can hold up the A
/// tile of one still aligning, a core already in the next op the last
/// tiles of one still in the op before), and a receive for the send that
/// last read its buffer. Each core starts at `starts` (none: 0).
static RunEnds simulateRun(const rt::TimingModel &timing,
                           const std::vector<RunOp> &ops, int64_t h, int64_t w,
                           const std::vector<int64_t> &starts) {
  int64_t n = h * w;
  std::vector<RunOpShape> shapes;
  int64_t rounds = 0;
  for (const RunOp &op : ops) {
    shapes.emplace_back(timing, op, h, w);
    rounds += shapes.back().rounds();
  }
  if (rounds > kCoreStepBudget / n)
    return std::nullopt;
  int64_t issue = timing.sendIssueCycles(), receive = timing.receiveCycles();
  int64_t ramp = timing.rampCycles(), hop = timing.hopCycles();
  struct Core {
    int64_t now = 0, rampOut = 0, rampIn = 0;
    // The op it is in; steps done in it, and how far into this one:
    // sending operand 0 and operand 1, each at its own time as the
    // emulator commits sends in time order, then receiving (2).
    size_t op = 0;
    int64_t step = 0;
    int phase = 0;
    bool waiting = false;
    // Per operand: when this step's send and the one before left the
    // core, and the arrivals not yet received. A core receives an operand
    // from one neighbour, which sends it as often in each op as the core
    // receives it, so the arrivals of later ops queue behind.
    int64_t sent[2] = {0, 0}, left[2] = {0, 0};
    std::deque<int64_t> inbox[2];
  };
  // Cores are numbered as the clock numbers them, by their physical
  // coordinates; the ops' steps follow their ring positions.
  auto ringPosition = [&](const RunOpShape &shape, int64_t c) {
    return std::pair(shape.positions[0][c % w], shape.positions[1][c / w]);
  };
  std::vector<Core> cores(n);
  std::vector<int64_t> begins(n);
  for (int64_t c = 0; c < n; ++c) {
    auto [x, y] = ringPosition(shapes[0], c);
    cores[c].now = begins[c] =
        (starts.empty() ? 0 : starts[c]) + shapes[0].before(x, y);
  }
  std::vector<std::vector<int64_t>> ends(ops.size(), std::vector<int64_t>(n));
  ReadyCores ready(n, begins);
  // Sends operand k of core c to the previous ring position; the receiver
  // reserves its ramp in the order of the sends.
  auto send = [&](int64_t c, int k) {
    Core &from = cores[c];
    const RunOpShape &shape = shapes[from.op];
    int64_t px = c % w, py = c / w;
    int64_t here = k == 0 ? px : py;
    int64_t there =
        shape.order[k][(shape.positions[k][here] + shape.extents[k] - 1) %
                       shape.extents[k]];
    int64_t to = k == 0 ? py * w + there : there * w + px;
    int64_t occupancy = shape.occupancies[k];
    int64_t start = std::max(from.now, from.rampOut);
    from.rampOut = start + occupancy;
    from.sent[k] = start + occupancy;
    from.now += issue;
    int64_t head = start + ramp + std::abs(here - there) * hop;
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
    const RunOpShape &shape = shapes[core.op];
    auto [x, y] = ringPosition(shape, c);
    if (core.step == shape.steps(x, y)) {
      core.now += shape.finish();
      ends[core.op][c] = core.now;
      if (++core.op == ops.size())
        continue;
      auto [nextX, nextY] = ringPosition(shapes[core.op], c);
      core.now += shapes[core.op].before(nextX, nextY);
      core.step = 0;
      core.sent[0] = core.sent[1] = core.left[0] = core.left[1] = 0;
      ready.push(core.now, c);
      continue;
    }
    RingStep step = shape.step(x, y, core.step);
    bool ring[2] = {step.shifts[0] && shape.extents[0] > 1,
                    step.shifts[1] && shape.extents[1] > 1};
    if (core.phase < 2) {
      int k = core.phase++;
      if (ring[k])
        send(c, k);
      if (k == 1)
        core.now += step.overlapped;
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
      core.now += step.afterReceive[k];
    }
    core.now += step.after;
    ++core.step;
    core.phase = 0;
    ready.push(core.now, c);
  }
  return ends;
}

bool advanceRun(const rt::TimingModel &timing, RunOp op, CoreClock &clock) {
  int64_t h = clock.height(), w = clock.width();
  auto simulate = [&](CoreClock::Run run) {
    int64_t base = run.starts.empty() ? run.start
                                      : *std::min_element(run.starts.begin(),
                                                          run.starts.end());
    std::vector<int64_t> starts = run.starts;
    for (int64_t &start : starts)
      start -= base;
    auto *gemm = std::get_if<MeshGemm>(&run.ops.front());
    RunEnds ends =
        run.ops.size() == 1 && starts.empty() && gemm
            ? simulatedOnce<RunEnds>(
                  scheduleKey(gemm->tiling, h, w, gemm->interleave, gemm->dtype,
                              gemm->before, gemm->multiply, timing),
                  [&] { return simulateRun(timing, run.ops, h, w, {}); })
            : simulateRun(timing, run.ops, h, w, starts);
    if (!ends)
      return false;
    run.latests.clear();
    for (std::vector<int64_t> &opEnds : *ends) {
      for (int64_t &end : opEnds)
        end += base;
      run.latests.push_back(*std::max_element(opEnds.begin(), opEnds.end()));
    }
    clock.set(std::move(ends->back()));
    clock.run = std::move(run);
    return true;
  };
  if (clock.run) {
    CoreClock::Run run = *clock.run;
    run.ops.push_back(op);
    if (simulate(std::move(run)))
      return true;
  }
  return simulate({clock.perCore(), clock.latest(), {std::move(op)}, {}});
}

void advanceMeshGemm(const rt::TimingModel &timing, const MeshGemm &gemm,
                     CoreClock &clock) {
  if (advanceRun(timing, gemm, clock))
    return;
  clock.barrier(gemm.before + meshGemmClosedForm(timing, gemm.tiling,
                                                 clock.height(), clock.width(),
                                                 gemm.interleave, gemm.dtype,
                                                 gemm.multiply));
}

void advanceRelayout(const rt::TimingModel &timing,
                     const RingRelayout &relayout, int64_t closedForm,
                     CoreClock &clock) {
  if (!advanceRun(timing, relayout, clock))
    clock.lines(relayout.alongX, closedForm);
}

} // namespace wafer::cost
