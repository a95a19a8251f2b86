//===- Schedules.h - What the simulated schedules share ---------*- C++ -*-===//
//
// The cost model's simulations (GemmSchedules.cpp, RingRuns.cpp) advance
// cores in the order of their time within a budget of core-steps, as the
// emulator does; beyond it the closed forms stand in.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_LIB_COSTMODEL_SCHEDULES_H
#define WAFER_LIB_COSTMODEL_SCHEDULES_H

#include "wafer/CostModel/CostModel.h"

#include <array>
#include <map>
#include <mutex>
#include <queue>

namespace wafer::cost {

/// Core-steps a schedule (SUMMA's, a run of ring ops) is simulated for at
/// most (about 0.2 s); beyond it the estimates use closed forms.
inline constexpr int64_t kCoreStepBudget = 1'000'000;

/// The cores of a simulated schedule by their time, earliest first (ties:
/// the lower core id, the order the emulator commits sends in).
class ReadyCores {
public:
  ReadyCores() = default;
  /// Every core, at its start time (none: 0).
  ReadyCores(int64_t cores, const std::vector<int64_t> &starts) {
    for (int64_t c = 0; c < cores; ++c)
      push(starts.empty() ? 0 : starts[c], c);
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

/// What a GEMM's schedule from a common start is a function of: the grid,
/// the tiling, each core's work before it and per step, and the prices.
using ScheduleKey = std::array<int64_t, 18>;
inline ScheduleKey scheduleKey(const GemmTiling &t, int64_t h, int64_t w,
                               bool interleave, rt::DType dtype, int64_t before,
                               int64_t multiply,
                               const rt::TimingModel &timing) {
  const rt::Target &target = timing.target();
  return {h,
          w,
          interleave,
          int64_t(dtype),
          t.mt,
          t.kt,
          t.nt,
          t.aSlots,
          t.bSlots,
          t.blocks,
          before,
          multiply,
          target.sendIssueCycles,
          target.relayCycles,
          target.rampCycles,
          target.hopCycles,
          target.linkWordsPerCycle,
          timing.kernelCycles(1 << 20, dtype)};
}

/// `simulate()` once per process for each key: a model's layers and the
/// planner's candidate plans (each op's estimateCycles) repeat the same
/// few GEMMs. Entries are never erased, so references to them stay valid.
template <typename Ends, typename Simulate>
const Ends &simulatedOnce(const ScheduleKey &key, Simulate simulate) {
  static std::mutex mutex;
  static std::map<ScheduleKey, Ends> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
  }
  Ends ends = simulate();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(ends)).first->second;
}

/// An op from the clock's times: simulated with the ops of the clock's
/// run if the budget allows, else (orAlone) on its own as the first of a
/// new run; false beyond the budget (the clock is unchanged).
bool advanceRun(const rt::TimingModel &timing, RunOp op, CoreClock &clock,
                bool orAlone = true);

/// One position of a K-tree over n positions rooted at `root` (both
/// halves with `levels`, then the join): the positions it receives from
/// and adds, in program order; the one whose message it streams on (-1:
/// none) and the one it sends to (-1: the root, which multicasts).
struct TreePosition {
  std::vector<int64_t> from;
  int64_t relayFrom = -1, to = -1;
};
std::vector<TreePosition>
treePositions(int64_t n, int64_t root,
              const std::vector<rt::KTreeLevel> &levels);

/// MeshGEMM's closed form, beyond the simulation's budget.
int64_t meshGemmClosedForm(const rt::TimingModel &timing, const GemmTiling &t,
                           int64_t h, int64_t w, bool interleave,
                           rt::DType dtype, int64_t multiply);

} // namespace wafer::cost

#endif // WAFER_LIB_COSTMODEL_SCHEDULES_H
