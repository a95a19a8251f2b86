//===- RingRuns.cpp - Consecutive ring ops simulated together -------------===//
//
// MeshGEMMs, relayouts and prefill attention move tiles to the previous
// position of a ring along x or y; allreduces along lines (an RMSNorm's,
// attention's sum of scores) send up their trees. A core goes on to the
// next op as soon as it is done with one, so its first sends meet the last
// messages of cores still in the op before on the ramps they share; the
// emulator takes them in the order they are sent. Such a run of ops, with
// the local work between them, is simulated as one schedule, core by core
// in the order of their time, within the budget of core-steps
// (Schedules.h).
//
//===----------------------------------------------------------------------===//
#include "RunOpShape.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>

namespace wafer::cost {

namespace {

/// Each core's end of each op of a run, or nullopt beyond the budget.
using RunEnds = std::optional<std::vector<std::vector<int64_t>>>;

/// One core of a simulated run.
struct Core {
  int64_t now = 0, rampOut = 0, rampIn = 0;
  // The op it is in; steps done in it, and how far into this one:
  // sending operand 0 and operand 1, each at its own time as the
  // emulator commits sends in time order, then receiving (2).
  size_t op = 0;
  int64_t step = 0;
  int phase = 0, stage = 0;
  bool waiting = false;
  // Per operand: when this step's send and the one before left the
  // core, and the arrivals not yet received. A core receives an operand
  // from one neighbour, which sends it as often in each op as the core
  // receives it, so the arrivals of later ops queue behind.
  int64_t sent[2] = {0, 0}, left[2] = {0, 0};
  std::deque<int64_t> inbox[2];
  // In an allreduce: the groups' sums received so far. Its messages in
  // from each core and the roots' sums, not yet received (each core
  // sends once in each allreduce, so later ones queue behind). When its
  // links towards higher and lower positions along x and along y are
  // free again.
  size_t received = 0;
  std::map<int64_t, std::deque<int64_t>> fromCore;
  std::deque<int64_t> sums;
  int64_t links[2][2] = {{0, 0}, {0, 0}};
};

} // namespace

/// A run's simulation paused where the first core is done with its last
/// op: up to there nothing an op appended to the run does can change it,
/// so the run goes on from there (CoreClock::Run::paused).
struct RunState {
  std::vector<Core> cores;
  ReadyCores ready;
  /// Each core's end of each op, where it has one.
  std::vector<std::vector<int64_t>> ends;
};

/// The ops of a run evaluated core by core, or nullopt beyond the budget
/// of core-steps. The cores advance in the order of their time, as the
/// emulator's do, because messages meet on a core's ramps: a send waits
/// for the core's earlier sends to leave, an arrival for the ones before
/// it to come in (the B tile of a core already computing can hold up the A
/// tile of one still aligning, a core already in the next op the last
/// tiles of one still in the op before), and a receive for the send that
/// last read its buffer. Allreduces along lines (LineAllreduce) take the
/// links their messages cross too, in the order they are sent, as in
/// ktreeAllreduceCycles; a core already in the next op can hold up their
/// last messages, and they the last tiles of the op before. Each core
/// starts at `starts` (none: 0).
static RunEnds simulateRun(const rt::TimingModel &timing,
                           const std::vector<RunOp> &ops, int64_t h, int64_t w,
                           const std::vector<int64_t> &starts,
                           std::shared_ptr<RunState> *paused = nullptr) {
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
  // Cores are numbered as the clock numbers them, by their physical
  // coordinates; the ops' steps follow their ring positions.
  auto ringPosition = [&](const RunOpShape &shape, int64_t c) {
    return std::pair(shape.positions[0][c % w], shape.positions[1][c / w]);
  };
  // Each core goes on to the next op from its end of the one before.
  RunState state;
  std::vector<Core> &cores = state.cores;
  ReadyCores &ready = state.ready;
  std::vector<std::vector<int64_t>> &ends = state.ends;
  auto enter = [&](int64_t c) {
    Core &core = cores[c];
    auto [x, y] = ringPosition(shapes[core.op], c);
    core.now += shapes[core.op].before(x, y);
    core.step = 0;
    core.phase = core.stage = 0;
    core.sent[0] = core.sent[1] = core.left[0] = core.left[1] = 0;
    ready.push(core.now, c);
  };
  size_t resumed = paused && *paused ? (*paused)->ends.size() : 0;
  if (resumed > 0) {
    state = std::move(**paused);
    ends.resize(ops.size(), std::vector<int64_t>(n));
    for (int64_t c = 0; c < n; ++c)
      if (cores[c].op == resumed)
        enter(c);
  } else {
    cores.assign(n, Core{});
    ends.assign(ops.size(), std::vector<int64_t>(n));
    for (int64_t c = 0; c < n; ++c) {
      cores[c].now = starts.empty() ? 0 : starts[c];
      enter(c);
    }
  }
  if (paused)
    paused->reset();
  auto wake = [&](int64_t c) {
    if (cores[c].waiting) {
      cores[c].waiting = false;
      ready.push(cores[c].now, c);
    }
  };
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
    wake(to);
  };
  // In an allreduce along lines, core c is position lineIndex(c) of its
  // line, whose position i is core lineCore(c, i).
  auto lineIndex = [&](bool alongX, int64_t c) {
    return alongX ? c % w : c / w;
  };
  auto lineCore = [&](bool alongX, int64_t c, int64_t i) {
    return alongX ? c - c % w + i : i * w + c % w;
  };
  // Runs core c's part of the allreduce of its op until it waits (false)
  // or is done (true). Phase 0 receives and adds its groups' sums, 1 sends
  // (at its time, as sends enter the network in time order), 2 waits for
  // the sum.
  auto advanceLine = [&](int64_t c) {
    Core &core = cores[c];
    const RunOpShape &shape = shapes[core.op];
    const LineAllreduce &allreduce = *shape.lineAllreduce();
    bool alongX = allreduce.alongX;
    int64_t index = lineIndex(alongX, c), occupancy = shape.treeOccupancy;
    if (shape.treeOf[index] < 0)
      return true; // past the lane segments
    const TreePosition &position = shape.tree[index];
    // The message in from position i, if it has come.
    auto arrival = [&](int64_t i) -> std::deque<int64_t> * {
      auto it = core.fromCore.find(lineCore(alongX, c, i));
      return it == core.fromCore.end() || it->second.empty() ? nullptr
                                                             : &it->second;
    };
    for (; core.received < position.from.size(); ++core.received) {
      std::deque<int64_t> *in = arrival(position.from[core.received]);
      if (!in) {
        core.waiting = true;
        return false;
      }
      core.now = std::max(core.now, in->front()) + receive + allreduce.add;
      in->pop_front();
    }
    if (core.phase == 0) {
      if (position.relayFrom >= 0) {
        std::deque<int64_t> *in = arrival(position.relayFrom);
        if (!in) {
          core.waiting = true;
          return false;
        }
        // It streams the message on once its receive's handling follows
        // the first word, the last word leaving when the combine made it.
        core.now = std::max(core.now, in->front() - occupancy + 1) + receive +
                   std::max<int64_t>(0, allreduce.add - occupancy);
        in->pop_front();
      }
      core.phase = 1;
      ready.push(core.now, c);
      return false;
    }
    if (core.phase == 1) {
      core.phase = 2;
      int64_t start = std::max(core.now, core.rampOut);
      core.rampOut = start + occupancy;
      core.now += issue;
      if (position.to < 0) {
        // The root multicasts the sum to its tree.
        for (int64_t i : allreduce.trees[shape.treeOf[index]].positions) {
          if (i == index)
            continue;
          int64_t to = lineCore(alongX, c, i);
          int64_t in = std::max(start + ramp + std::abs(i - index) * hop,
                                cores[to].rampIn);
          cores[to].rampIn = in + occupancy;
          cores[to].sums.push_back(in + occupancy + ramp);
          wake(to);
        }
        core.phase = 0;
        core.received = 0;
        return true;
      }
      int64_t step = position.to > index ? 1 : -1, head = start + ramp;
      for (int64_t i = index; i != position.to; i += step) {
        int64_t &link =
            cores[lineCore(alongX, c, i)].links[alongX ? 0 : 1][step > 0];
        int64_t enter = std::max(head, link);
        link = enter + occupancy;
        head = enter + hop;
      }
      int64_t to = lineCore(alongX, c, position.to);
      int64_t in = std::max(head, cores[to].rampIn);
      cores[to].rampIn = in + occupancy;
      cores[to].fromCore[c].push_back(in + occupancy + ramp);
      wake(to);
    }
    if (core.sums.empty()) {
      core.waiting = true;
      return false;
    }
    core.now = std::max(core.now, core.sums.front()) + receive;
    core.sums.pop_front();
    core.phase = 0;
    core.received = 0;
    return true;
  };
  // Runs core c's prefill attention until it waits (false) or is done
  // (true). Each step: stage 0 scores, 1 sums them along x and updates the
  // statistics and values, 2 sends its keys and values (at its time), 3
  // receives the next ones.
  auto advanceAttention = [&](int64_t c) {
    Core &core = cores[c];
    const auto &attention = std::get<RingAttention>(ops[core.op]);
    for (;;) {
      switch (core.stage) {
      case 0:
        core.now += attention.score;
        core.stage = 1;
        [[fallthrough]];
      case 1:
        if (attention.scores && !advanceLine(c))
          return false;
        core.now += attention.update;
        if (core.step == h - 1)
          return true;
        core.stage = 2;
        ready.push(core.now, c);
        return false;
      case 2:
        send(c, 1);
        core.stage = 3;
        [[fallthrough]];
      default:
        if (core.inbox[1].empty()) {
          core.waiting = true;
          return false;
        }
        core.now =
            std::max({core.now, core.inbox[1].front(), core.left[1]}) + receive;
        core.inbox[1].pop_front();
        core.left[1] = core.sent[1];
        ++core.step;
        core.stage = 0;
      }
    }
  };
  while (!ready.empty()) {
    int64_t c = ready.pop().second;
    Core &core = cores[c];
    const RunOpShape &shape = shapes[core.op];
    auto [x, y] = ringPosition(shape, c);
    bool line = std::holds_alternative<LineAllreduce>(ops[core.op]);
    bool attention = std::holds_alternative<RingAttention>(ops[core.op]);
    if (line        ? advanceLine(c)
        : attention ? advanceAttention(c)
                    : core.step == shape.steps(x, y)) {
      core.now += shape.finish();
      ends[core.op][c] = core.now;
      if (++core.op < ops.size())
        enter(c);
      else if (paused && !*paused)
        *paused = std::make_shared<RunState>(state);
      continue;
    }
    if (line || attention)
      continue;
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

bool advanceRun(const rt::TimingModel &timing, RunOp op, CoreClock &clock,
                bool orAlone) {
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
            : simulateRun(timing, run.ops, h, w, starts, &run.paused);
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
  return orAlone &&
         simulate({clock.perCore(), clock.latest(), {std::move(op)}, {}});
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

void advanceLineAllreduce(
    const rt::TimingModel &timing, LineAllreduce allreduce,
    const std::function<void(std::vector<int64_t> &)> &line, CoreClock &clock) {
  // It joins a run of ring ops, whose last tiles it can hold up; without
  // one (a decode step's GEMVs) the closed form stands.
  auto isRingOp = [](const RunOp &op) {
    return std::holds_alternative<MeshGemm>(op) ||
           std::holds_alternative<RingRelayout>(op) ||
           std::holds_alternative<RingAttention>(op);
  };
  if (clock.run && llvm::any_of(clock.run->ops, isRingOp) &&
      advanceRun(timing, allreduce, clock, /*orAlone=*/false))
    return;
  // A run starts with it where a ring op after it can join.
  int64_t cores = clock.height() * clock.width();
  int64_t rounds = 2;
  for (const LineAllreduce::Tree &tree : allreduce.trees)
    rounds = std::max(rounds, int64_t(tree.levels.size()) + 2);
  bool startsRun = rounds <= kCoreStepBudget / cores;
  CoreClock::Run run;
  if (startsRun && !clock.uniform())
    run.starts = clock.perCore();
  run.start = clock.latest();
  clock.local(allreduce.before);
  clock.lines(allreduce.alongX, line);
  clock.local(allreduce.after);
  if (!startsRun)
    return;
  run.ops.push_back(std::move(allreduce));
  run.latests.push_back(clock.latest());
  clock.run = std::move(run);
}

void advanceRingAttention(const rt::TimingModel &timing,
                          const RingAttention &attention, int64_t closedForm,
                          CoreClock &clock) {
  if (!advanceRun(timing, attention, clock))
    clock.barrier(closedForm);
}

void advanceRelayout(const rt::TimingModel &timing,
                     const RingRelayout &relayout, int64_t closedForm,
                     CoreClock &clock) {
  if (!advanceRun(timing, relayout, clock))
    clock.lines(relayout.alongX, closedForm);
}

} // namespace wafer::cost
