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
  lines(alongX, [&](std::vector<int64_t> &line) {
    std::fill(
        line.begin(), line.end(),
        saturatingAdd(*std::max_element(line.begin(), line.end()), cycles));
  });
}

void CoreClock::lines(bool alongX,
                      const std::function<void(std::vector<int64_t> &)> &op) {
  int64_t length = alongX ? w : h;
  if (times.empty()) {
    // Every line alike: one op, and one time again if it ends them so.
    std::vector<int64_t> line(length, 0);
    op(line);
    auto [earliest, latest] = std::minmax_element(line.begin(), line.end());
    if (*earliest == *latest) {
      last = saturatingAdd(last, *latest);
      return;
    }
    times.resize(h * w);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        times[y * w + x] = saturatingAdd(line[alongX ? x : y], last);
    last = saturatingAdd(last, *latest);
    return;
  }
  // A line is a grid row (alongX: the cores of one y) or column. The ops
  // are the same function of every line's times, and a line that starts
  // as the one before but later ends so much later: one op serves a run
  // of them (on a whole wafer, every row or column alike).
  int64_t lineCount = alongX ? h : w;
  int64_t stride = alongX ? 1 : w, lineStride = alongX ? w : 1;
  std::vector<int64_t> line(length), previousStart, previousEnd;
  int64_t earliest = INT64_MAX, latest = INT64_MIN;
  for (int64_t first = 0; first < lineCount * lineStride; first += lineStride) {
    for (int64_t i = 0; i < length; ++i)
      line[i] = times[first + i * stride];
    int64_t base = *std::min_element(line.begin(), line.end());
    for (int64_t &time : line)
      time -= base;
    if (line != previousStart) {
      previousStart = line;
      op(line);
      previousEnd = line;
    }
    for (int64_t i = 0; i < length; ++i) {
      int64_t end = saturatingAdd(previousEnd[i], base);
      times[first + i * stride] = end;
      earliest = std::min(earliest, end);
      latest = std::max(latest, end);
    }
  }
  last = latest;
  if (earliest == latest)
    times.clear();
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
