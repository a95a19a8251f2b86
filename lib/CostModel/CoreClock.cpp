//===- CoreClock.cpp - The analytic mode's per-core clock -----------------===//
//
// Each core's time at the end of the ops estimated so far, so that an op
// starts where the one before left each core rather than at a barrier.
//
//===----------------------------------------------------------------------===//
#include "wafer/CostModel/CostModel.h"

#include <algorithm>
#include <cassert>

namespace wafer::cost {

static int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

void CoreClock::barrier(int64_t cycles) {
  times.clear();
  last = saturatingAdd(last, cycles);
}

void CoreClock::local(int64_t cycles) {
  for (int64_t &time : times)
    time = saturatingAdd(time, cycles);
  last = saturatingAdd(last, cycles);
}

void CoreClock::lines(bool alongX, int64_t cycles) {
  if (times.empty()) {
    last = saturatingAdd(last, cycles);
    return;
  }
  // A line is a grid row (alongX: the cores of one y) or column.
  int64_t lineCount = alongX ? h : w, length = alongX ? w : h;
  int64_t stride = alongX ? 1 : w, lineStride = alongX ? w : 1;
  for (int64_t line = 0; line < lineCount; ++line) {
    int64_t first = line * lineStride, latestInLine = 0;
    for (int64_t i = 0; i < length; ++i)
      latestInLine = std::max(latestInLine, times[first + i * stride]);
    int64_t end = saturatingAdd(latestInLine, cycles);
    for (int64_t i = 0; i < length; ++i)
      times[first + i * stride] = end;
  }
  set(std::move(times));
}

void CoreClock::set(std::vector<int64_t> perCoreTimes) {
  assert(int64_t(perCoreTimes.size()) == h * w && "one time per core");
  auto [earliest, latestTime] =
      std::minmax_element(perCoreTimes.begin(), perCoreTimes.end());
  last = *latestTime;
  if (*earliest == last)
    perCoreTimes.clear();
  times = std::move(perCoreTimes);
}

} // namespace wafer::cost
