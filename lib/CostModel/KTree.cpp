//===- KTree.cpp - The K-tree allreduce's cycles --------------------------===//
#include "wafer/CostModel/CostModel.h"
#include "wafer/Runtime/Fabric.h"

#include <algorithm>
#include <cstdlib>

namespace wafer::cost {

using rt::KTreeLevel;
using rt::ktreeLevels;
using rt::ktreeRoot;
using rt::ringOrder;
using rt::rootedTreeLevels;
using rt::Target;
using rt::TimingModel;

namespace {

/// Runs the chains of `levels` over positions 0 .. ready.size() - 1, where
/// ready[l] is when position l's own value is in; returns when position 0
/// holds the sum. A message from position a to b costs travel(a, b); the
/// members between a chain's ends stream it on (core.combine_relay) unless
/// `storeAndForward`.
template <typename Travel>
int64_t reduceChains(std::vector<int64_t> &ready,
                     const std::vector<KTreeLevel> &levels, Travel travel,
                     bool storeAndForward, const TimingModel &timing,
                     int64_t words, int64_t add) {
  int64_t n = int64_t(ready.size());
  for (const KTreeLevel &level : levels) {
    int64_t span = level.stride * level.groupSize;
    for (int64_t first = 0; first < n; first += span) {
      int64_t last = std::min(first + span, n) - 1;
      last -= (last - first) % level.stride;
      int64_t time = ready[last];
      for (int64_t l = last - level.stride; l >= first; l -= level.stride) {
        int64_t arrival = time + travel(l + level.stride, l);
        if (l == first || storeAndForward) {
          time = std::max(ready[l], arrival) + timing.receiveCycles() + add;
          continue;
        }
        // It sends once its receive's handling follows the first word, its
        // last word leaving when the combine has made it.
        int64_t occupancy = timing.occupancy(words);
        int64_t firstWord = arrival - occupancy + 1;
        time = std::max(ready[l], firstWord) + timing.receiveCycles() +
               std::max<int64_t>(0, add - occupancy);
      }
      ready[first] = time;
    }
  }
  return ready.empty() ? 0 : ready[0];
}

} // namespace

int64_t ktreeAllreduceCycles(int64_t n, int64_t k, int64_t values,
                             int64_t words, double macsPerCycle,
                             const Target &t, bool centered, bool interleaved,
                             bool relayed, int64_t hopsPerPosition) {
  if (n <= 1)
    return 0;
  // The emulator's prices: a message's transfer, its two ramps and its
  // hops to the previous group member; the receive; the add. Each chain
  // runs from its last member to its root, a member forwarding once both its
  // own group (a level below) and the message's first word have arrived.
  TimingModel timing(t);
  int64_t add = TimingModel::kernelCycles(values, macsPerCycle);
  if (relayed) {
    // Over ring positions, every message received and sent on by each
    // position in between, and so is the broadcast to the last position.
    std::vector<int64_t> physical = ringOrder(n, interleaved);
    auto travel = [&](int64_t from, int64_t to) {
      int64_t step = to > from ? 1 : -1;
      int64_t cycles = (std::abs(from - to) - 1) * timing.receiveCycles();
      for (int64_t p = from; p != to; p += step)
        cycles += timing.messageCycles(
            words, std::abs(physical[p] - physical[p + step]));
      return cycles;
    };
    std::vector<int64_t> ready(n, 0);
    int64_t sum = reduceChains(ready, ktreeLevels(n, k), travel,
                               /*storeAndForward=*/true, timing, words, add);
    return sum + travel(0, n - 1) + timing.receiveCycles();
  }
  // Each half reduces towards the root's end over physical positions, the
  // right half's root hands its sum to the root, whose multicast reaches
  // the farther end.
  int64_t root = ktreeRoot(n, centered);
  std::vector<KTreeLevel> levels = rootedTreeLevels(n, root, k);
  auto travel = [&](int64_t from, int64_t to) {
    return timing.messageCycles(words, std::abs(from - to) * hopsPerPosition);
  };
  std::vector<int64_t> left(root + 1, 0), right(n - 1 - root, 0);
  int64_t sum = reduceChains(left, levels, travel, false, timing, words, add);
  if (!right.empty()) {
    int64_t handed =
        reduceChains(right, levels, travel, false, timing, words, add) +
        travel(1, 0);
    sum = std::max(sum, handed) + timing.receiveCycles() + add;
  }
  int64_t farthest = std::max(root, n - 1 - root);
  return sum + timing.messageCycles(words, farthest * hopsPerPosition) +
         timing.receiveCycles();
}

} // namespace wafer::cost
