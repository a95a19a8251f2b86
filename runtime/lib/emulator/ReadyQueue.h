//===- ReadyQueue.h - The cores ready to run, by time -----------*- C++ -*-===//
//
// The scheduler's event queue. Many cores share one time (those one wave of
// messages wakes, all cores at the start), so the queue keeps a bucket of
// core ids per distinct time instead of one heap entry per core: a push is
// an append, and a batch comes out as one bucket sorted by core id, the
// order the scheduler commits in.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_READYQUEUE_H
#define WAFER_RUNTIME_EMULATOR_READYQUEUE_H

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace wafer::rt::emulator {

class ReadyQueue {
public:
  bool empty() const { return buckets.empty(); }
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
  /// Moves the cores of the earliest time into `batch`, in ascending id,
  /// and returns that time. The queue must not be empty.
  int64_t popEarliest(std::vector<int32_t> &batch) {
    auto first = buckets.begin();
    int64_t time = first->first;
    batch.clear();
    batch.swap(first->second);
    // The first bucket and many others are pushed in id order already.
    if (!std::is_sorted(batch.begin(), batch.end()))
      std::sort(batch.begin(), batch.end());
    spare.push_back(std::move(first->second));
    buckets.erase(first);
    if (last && lastTime == time)
      last = nullptr;
    return time;
  }
  void clear() {
    buckets.clear();
    last = nullptr;
  }

private:
  std::map<int64_t, std::vector<int32_t>> buckets;
  /// Emptied buckets' storage, reused so that pushes rarely allocate.
  std::vector<std::vector<int32_t>> spare;
  /// The bucket pushed to last (map nodes stay put until erased).
  std::vector<int32_t> *last = nullptr;
  int64_t lastTime = 0;
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_READYQUEUE_H
