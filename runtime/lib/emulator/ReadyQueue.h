//===- ReadyQueue.h - The cores ready to run, by time -----------*- C++ -*-===//
//
// The scheduler's event queue. Many cores share one time (those one wave of
// messages wakes, all cores at the start), so the queue keeps a bucket of
// core ids per distinct time instead of one heap entry per core: a push is
// an append, and a batch comes out as its time's bucket sorted by core id,
// the order the scheduler commits in. Threads that run and commit parts of
// a batch queue the cores they wake or let go on at once, each in a lane
// of its own with buckets of its own; a batch joins its time's buckets
// from every lane.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_READYQUEUE_H
#define WAFER_RUNTIME_EMULATOR_READYQUEUE_H

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace wafer::rt::emulator {

class ReadyQueue {
public:
  /// Lanes: pushes to different lanes may run at once on different
  /// threads (each lane one thread's at a time); a batch takes its time's
  /// cores from every lane.
  explicit ReadyQueue(size_t count = 1) : lanes(count) {}
  /// Empties the queue, with `count` lanes.
  void setLanes(size_t count) {
    lanes.clear();
    lanes.resize(count);
  }
  bool empty() const {
    return std::all_of(lanes.begin(), lanes.end(),
                       [](const Lane &l) { return l.buckets.empty(); });
  }
  void push(int64_t time, int32_t core, size_t lane = 0) {
    assert(lane < lanes.size() && "the scheduler sets a lane per piece");
    lanes[lane].push(time, core);
  }
  /// Moves the cores of the earliest time into `batch`, in ascending id,
  /// and returns that time. The queue must not be empty.
  int64_t popEarliest(std::vector<int32_t> &batch) {
    int64_t time = std::numeric_limits<int64_t>::max();
    for (const Lane &l : lanes)
      if (!l.buckets.empty())
        time = std::min(time, l.buckets.begin()->first);
    batch.clear();
    for (Lane &l : lanes)
      if (!l.buckets.empty() && l.buckets.begin()->first == time)
        l.popFirst(batch);
    sortRuns(batch);
    return time;
  }

private:
  /// One lane's buckets, on cache lines of its own (other threads push to
  /// the others).
  struct alignas(64) Lane {
    std::map<int64_t, std::vector<int32_t>> buckets;
    /// Emptied buckets' storage, reused so that pushes rarely allocate.
    std::vector<std::vector<int32_t>> spare;
    /// The bucket pushed to last (map nodes stay put until erased).
    std::vector<int32_t> *last = nullptr;
    int64_t lastTime = 0;

    void push(int64_t time, int32_t core) {
      // Pushes come in runs of one time (the cores of a batch that go on
      // together): those skip the map.
      if (!last || lastTime != time) {
        auto [it, fresh] = buckets.try_emplace(time);
        if (fresh && !spare.empty()) {
          it->second.swap(spare.back());
          spare.pop_back();
        }
        last = &it->second;
        lastTime = time;
      }
      last->push_back(core);
    }
    /// Appends the earliest bucket's cores to `batch` and drops it.
    void popFirst(std::vector<int32_t> &batch) {
      auto first = buckets.begin();
      std::vector<int32_t> &ids = first->second;
      if (batch.empty())
        batch.swap(ids);
      else
        batch.insert(batch.end(), ids.begin(), ids.end());
      ids.clear();
      spare.push_back(std::move(ids));
      if (last == &ids)
        last = nullptr;
      buckets.erase(first);
    }
  };
  std::vector<Lane> lanes;

  /// Sorts `ids`, which the pushes leave as a few ascending runs (each
  /// wave of messages wakes its receivers in id order): the runs are
  /// merged, unless there are many.
  void sortRuns(std::vector<int32_t> &ids) {
    constexpr size_t kMaxRuns = 8;
    size_t starts[kMaxRuns + 1];
    size_t runs = 0;
    starts[runs++] = 0;
    for (size_t i = 1; i < ids.size(); ++i) {
      if (ids[i] >= ids[i - 1])
        continue;
      if (runs == kMaxRuns) {
        sortMany(ids);
        return;
      }
      starts[runs++] = i;
    }
    starts[runs] = ids.size();
    // Merge neighbouring runs until one is left.
    for (size_t width = 1; width < runs; width *= 2)
      for (size_t r = 0; r + width < runs; r += 2 * width)
        std::inplace_merge(ids.begin() + starts[r],
                           ids.begin() + starts[r + width],
                           ids.begin() + starts[std::min(r + 2 * width, runs)]);
  }

  /// Sorts ids (never negative) in any order: a large batch by their
  /// bytes, lowest first, in a few linear passes (a comparison sort took
  /// 4% of a full-wafer timing run, mostly in mispredicted branches).
  void sortMany(std::vector<int32_t> &ids) {
    constexpr size_t kMinRadix = 256;
    if (ids.size() < kMinRadix) {
      std::sort(ids.begin(), ids.end());
      return;
    }
    int32_t largest = *std::max_element(ids.begin(), ids.end());
    scratch.resize(ids.size());
    for (unsigned shift = 0; shift < 31 && (largest >> shift) > 0; shift += 8) {
      size_t starts[257] = {};
      for (int32_t id : ids)
        ++starts[((id >> shift) & 0xff) + 1];
      for (size_t d = 1; d < 257; ++d)
        starts[d] += starts[d - 1];
      for (int32_t id : ids)
        scratch[starts[(id >> shift) & 0xff]++] = id;
      ids.swap(scratch);
    }
  }

  /// sortMany's second array.
  std::vector<int32_t> scratch;
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_READYQUEUE_H
