//===- KTree.cpp - The K-tree allreduce's cycles --------------------------===//
#include "Schedules.h"
#include "wafer/Runtime/Fabric.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>

namespace wafer::cost {

using rt::KTreeLevel;
using rt::ktreeLevels;
using rt::ktreeRoot;
using rt::ringOrder;
using rt::rootedTreeLevels;
using rt::Target;
using rt::TimingModel;

std::vector<TreePosition> treePositions(int64_t n, int64_t root,
                                        const std::vector<KTreeLevel> &levels) {
  std::vector<TreePosition> at(n);
  // Half position q is physical root - q (left) or root + 1 + q (right),
  // as in ktreeLevelPaths and the lowering (treeAllreduce).
  for (const KTreeLevel &level : levels)
    for (auto [size, sign, origin] :
         {std::tuple(root + 1, int64_t(-1), root),
          std::tuple(n - 1 - root, int64_t(1), root + 1)})
      for (int64_t q = 0; q < size; q += level.stride) {
        int64_t member = (q / level.stride) % level.groupSize;
        bool hasNext = member + 1 < level.groupSize && q + level.stride < size;
        TreePosition &p = at[origin + sign * q];
        int64_t next = origin + sign * (q + level.stride);
        if (member == 0 && hasNext)
          p.from.push_back(next);
        if (member > 0) {
          p.to = origin + sign * (q - level.stride);
          p.relayFrom = hasNext ? next : -1;
        }
      }
  if (root + 1 < n) {
    at[root + 1].to = root;
    at[root].from.push_back(root + 1);
  }
  return at;
}

LineAllreduce ktreeLine(bool alongX, int64_t n, int64_t k, int64_t values,
                        int64_t words, double macsPerCycle, bool centered,
                        int64_t before, int64_t after, int64_t segmentColumns,
                        int64_t used, const std::vector<int64_t> &order) {
  LineAllreduce line{alongX, {},
                     words,  TimingModel::kernelCycles(values, macsPerCycle),
                     before, after};
  auto addTree = [&](std::vector<int64_t> positions) {
    int64_t size = int64_t(positions.size());
    int64_t root = ktreeRoot(size, centered);
    line.trees.push_back(
        {std::move(positions), root, rootedTreeLevels(size, root, k)});
  };
  if (segmentColumns <= 0) {
    std::vector<int64_t> positions(n);
    for (int64_t i = 0; i < n; ++i)
      positions[i] = i;
    addTree(std::move(positions));
    return line;
  }
  for (int64_t first = 0; first < used; first += segmentColumns) {
    std::vector<int64_t> positions;
    for (int64_t i = first; i < std::min(first + segmentColumns, used); ++i)
      positions.push_back(order[i]);
    addTree(std::move(positions));
  }
  return line;
}

namespace {

/// Runs the chains of `levels` over ring positions 0 .. ready.size() - 1,
/// where ready[l] is when position l's own value is in; returns when
/// position 0 holds the sum. A message from position a to b costs
/// travel(a, b), each member receiving it whole before it adds and sends
/// on (the relayed tree).
template <typename Travel>
int64_t reduceChains(std::vector<int64_t> &ready,
                     const std::vector<KTreeLevel> &levels, Travel travel,
                     const TimingModel &timing, int64_t add) {
  int64_t n = int64_t(ready.size());
  for (const KTreeLevel &level : levels) {
    int64_t span = level.stride * level.groupSize;
    for (int64_t first = 0; first < n; first += span) {
      int64_t last = std::min(first + span, n) - 1;
      last -= (last - first) % level.stride;
      int64_t time = ready[last];
      for (int64_t l = last - level.stride; l >= first; l -= level.stride)
        time = std::max(ready[l], time + travel(l + level.stride, l)) +
               timing.receiveCycles() + add;
      ready[first] = time;
    }
  }
  return ready.empty() ? 0 : ready[0];
}

/// The reduction of a tree over n physical positions `hopsPerPosition`
/// hops apart, rooted at `root` (both halves with `levels`, then the
/// join), run as the emulator runs the lowered program; returns when the
/// root holds the sum. Each position receives and adds the sums of the
/// groups it is the first member of, level by level, then sends its own
/// to the previous member of its last group, streaming it on
/// (core.combine_relay) when a next member's message comes through it.
///
/// The messages contend as in Network::inject: each reserves every link it
/// crosses (one per direction) and its receiver's ramp for its occupancy,
/// and they take them in the order they enter the network, by send time
/// and then by physical position (the emulator commits a batch's sends in
/// (y, x) order). A level's message sent before the chains below it on its
/// way are done, from a member whose own groups are smaller (a half that
/// is not a whole power of the group size), waits for them or holds them
/// up. Each position sends once, so its own ramp is free. Position p
/// starts at ready[p] (none: 0).
int64_t reduceTree(int64_t n, int64_t root,
                   const std::vector<KTreeLevel> &levels,
                   const TimingModel &timing, int64_t words, int64_t add,
                   int64_t hopsPerPosition, const std::vector<int64_t> *ready) {
  struct Position : TreePosition {
    size_t received = 0;
    /// When its program has got this far.
    int64_t time = 0;
    bool queued = false;
    /// When its own message's last word is in its receiver's mailbox.
    std::optional<int64_t> arrival;
  };
  std::vector<Position> at(n);
  std::vector<TreePosition> tree = treePositions(n, root, levels);
  for (int64_t i = 0; i < n; ++i) {
    static_cast<TreePosition &>(at[i]) = std::move(tree[i]);
    if (ready)
      at[i].time = (*ready)[i];
  }

  int64_t occupancy = timing.occupancy(words);
  // (send time, physical position): the order sends enter the network.
  using Send = std::pair<int64_t, int64_t>;
  std::priority_queue<Send, std::vector<Send>, std::greater<Send>> sends;
  // Runs position i's program until it waits for a message not yet sent.
  auto advance = [&](int64_t i) {
    Position &p = at[i];
    for (; p.received < p.from.size(); ++p.received) {
      const std::optional<int64_t> &arrival = at[p.from[p.received]].arrival;
      if (!arrival)
        return;
      p.time = std::max(p.time, *arrival) + timing.receiveCycles() + add;
    }
    if (p.to < 0 || p.queued)
      return;
    if (p.relayFrom >= 0) {
      const std::optional<int64_t> &arrival = at[p.relayFrom].arrival;
      if (!arrival)
        return;
      // It sends once its receive's handling follows the first word, its
      // last word leaving when the combine has made it.
      p.time = std::max(p.time, *arrival - occupancy + 1) +
               timing.receiveCycles() + std::max<int64_t>(0, add - occupancy);
    }
    p.queued = true;
    sends.push({p.time, i});
  };
  for (int64_t i = 0; i < n; ++i)
    advance(i);
  // Per position, when its link towards higher and lower positions and
  // its ramp into the core are free again.
  std::vector<int64_t> up(n, 0), down(n, 0), rampIn(n, 0);
  while (!sends.empty()) {
    auto [time, i] = sends.top();
    sends.pop();
    int64_t to = at[i].to, step = to > i ? 1 : -1;
    std::vector<int64_t> &links = step > 0 ? up : down;
    int64_t head = time + timing.rampCycles();
    for (int64_t p = i; p != to; p += step) {
      int64_t start = std::max(head, links[p]);
      links[p] = start + occupancy;
      head = start + timing.hopCycles() * hopsPerPosition;
    }
    int64_t start = std::max(head, rampIn[to]);
    rampIn[to] = start + occupancy;
    at[i].arrival = start + occupancy + timing.rampCycles();
    advance(to);
  }
  return at[root].time;
}

} // namespace

int64_t ktreeAllreduceCycles(int64_t n, int64_t k, int64_t values,
                             int64_t words, double macsPerCycle,
                             const Target &t, bool centered, bool interleaved,
                             bool relayed, int64_t hopsPerPosition,
                             std::vector<int64_t> *times) {
  if (n <= 1)
    return times ? (*times)[0] : 0;
  // The emulator's prices: a message's transfer, its two ramps and its
  // hops to the previous group member; the receive; the add.
  TimingModel timing(t);
  int64_t add = TimingModel::kernelCycles(values, macsPerCycle);
  if (relayed) {
    // Over ring positions, every message received and sent on by each
    // position in between, and so is the broadcast to the last position.
    // Each chain runs from its last member to its root, a member sending
    // once both its own group (a level below) and the message are in.
    std::vector<int64_t> physical = ringOrder(n, interleaved);
    auto travel = [&](int64_t from, int64_t to) {
      int64_t step = to > from ? 1 : -1;
      int64_t cycles = (std::abs(from - to) - 1) * timing.receiveCycles();
      for (int64_t p = from; p != to; p += step)
        cycles += timing.messageCycles(
            words, std::abs(physical[p] - physical[p + step]));
      return cycles;
    };
    // Ring position l is physical position physical[l].
    std::vector<int64_t> own(n, 0);
    for (int64_t l = 0; times && l < n; ++l)
      own[l] = (*times)[physical[l]];
    int64_t sum = reduceChains(own, ktreeLevels(n, k), travel, timing, add);
    int64_t end = sum + travel(0, n - 1) + timing.receiveCycles();
    if (times)
      times->assign(n, end);
    return end;
  }
  // Each half reduces towards the root's end over physical positions, the
  // right half's root hands its sum to the root, whose multicast reaches
  // the farther end: its links and ramps are free by then.
  int64_t root = ktreeRoot(n, centered);
  int64_t sum = reduceTree(n, root, rootedTreeLevels(n, root, k), timing, words,
                           add, hopsPerPosition, times);
  // The multicast reaches each position after its hops from the root; the
  // root is done once it has sent it.
  auto received = [&](int64_t position) {
    return sum +
           timing.messageCycles(words,
                                std::abs(position - root) * hopsPerPosition) +
           timing.receiveCycles();
  };
  if (times) {
    for (int64_t p = 0; p < n; ++p)
      (*times)[p] = p == root ? sum + timing.sendIssueCycles() : received(p);
  }
  return received(root < n - 1 - root ? n - 1 : 0);
}

} // namespace wafer::cost
