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

static bool allEqual(const std::vector<int64_t> &v) {
  return std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) ==
         v.end();
}

std::vector<int64_t> CoreClock::perCore() const {
  if (form != Form::Separable)
    return times;
  std::vector<int64_t> sums(h * w);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      sums[y * w + x] = saturatingAdd(columns[x], rows[y]);
  return sums;
}

std::vector<int64_t> CoreClock::runLatests() const {
  if (run)
    return run->latests;
  return {last};
}

void CoreClock::barrier(int64_t cycles) {
  run.reset();
  form = Form::Uniform;
  times.clear();
  columns.clear();
  rows.clear();
  last = saturatingAdd(last, cycles);
}

void CoreClock::local(int64_t cycles) {
  // A separable clock adds the cycles to its rows' part.
  for (int64_t &time : form == Form::Separable ? rows : times)
    time = saturatingAdd(time, cycles);
  last = saturatingAdd(last, cycles);
  if (run) {
    run->ops.emplace_back(std::in_place_type<LocalWork>, LocalWork{cycles});
    run->latests.push_back(last);
  }
}

void CoreClock::lines(bool alongX, int64_t cycles) {
  lines(alongX, [&](std::vector<int64_t> &line) {
    std::fill(
        line.begin(), line.end(),
        saturatingAdd(*std::max_element(line.begin(), line.end()), cycles));
  });
}

void CoreClock::setSeparable(std::vector<int64_t> columnPart,
                             std::vector<int64_t> rowPart) {
  last = saturatingAdd(*std::max_element(columnPart.begin(), columnPart.end()),
                       *std::max_element(rowPart.begin(), rowPart.end()));
  times.clear();
  if (allEqual(columnPart) && allEqual(rowPart)) {
    form = Form::Uniform;
    columns.clear();
    rows.clear();
    return;
  }
  form = Form::Separable;
  columns = std::move(columnPart);
  rows = std::move(rowPart);
}

void CoreClock::lines(bool alongX,
                      const std::function<void(std::vector<int64_t> &)> &op) {
  run.reset();
  if (form == Form::General)
    return generalLines(alongX, op);
  // Every line is the same line, `along`, started `across` later: one op
  // serves them all, and the result is separable again.
  std::vector<int64_t> along, across;
  if (form == Form::Uniform) {
    along.assign(alongX ? w : h, 0);
    across.assign(alongX ? h : w, last);
  } else {
    along = alongX ? columns : rows;
    across = alongX ? rows : columns;
  }
  int64_t base = *std::min_element(along.begin(), along.end());
  for (int64_t &time : along)
    time -= base;
  op(along);
  for (int64_t &time : along)
    time = saturatingAdd(time, base);
  if (alongX)
    setSeparable(std::move(along), std::move(across));
  else
    setSeparable(std::move(across), std::move(along));
}

void CoreClock::generalLines(
    bool alongX, const std::function<void(std::vector<int64_t> &)> &op) {
  // A line is a grid row (alongX: the cores of one y) or column. A line
  // that starts as the one before but later ends so much later: one op
  // serves a run of them.
  int64_t length = alongX ? w : h, lineCount = alongX ? h : w;
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
  if (earliest == latest) {
    form = Form::Uniform;
    times.clear();
    return;
  }
  becomeSeparableIfSo();
}

void CoreClock::becomeSeparableIfSo() {
  // Core (x, y) is done at columns[x] + rows[y] if every core is done as
  // much later than core (0, y) as core (x, 0) is than core (0, 0).
  std::vector<int64_t> columnPart(times.begin(), times.begin() + w), rowPart(h);
  for (int64_t y = 0; y < h; ++y) {
    rowPart[y] = times[y * w] - times[0];
    for (int64_t x = 0; x < w; ++x) {
      int64_t sum;
      if (__builtin_add_overflow(columnPart[x], rowPart[y], &sum) ||
          times[y * w + x] != sum)
        return;
    }
  }
  setSeparable(std::move(columnPart), std::move(rowPart));
}

void CoreClock::set(std::vector<int64_t> perCoreTimes) {
  assert(int64_t(perCoreTimes.size()) == h * w && "one time per core");
  run.reset();
  columns.clear();
  rows.clear();
  last = *std::max_element(perCoreTimes.begin(), perCoreTimes.end());
  if (allEqual(perCoreTimes)) {
    form = Form::Uniform;
    times.clear();
    return;
  }
  form = Form::General;
  times = std::move(perCoreTimes);
}

} // namespace wafer::cost
