//===- Prices.cpp - What a kernel, a message and a ring shift cost --------===//
//
// Closed forms of what the emulator charges event by event: kernels at the
// MAC rate, a message's ramps, hops and link words, a receive's software
// cost, and the ring shift built from them.
//
//===----------------------------------------------------------------------===//
#include "wafer/CostModel/CostModel.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/RowShapes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace wafer::cost {

int64_t rowCycles(const rt::TimingModel &timing, rt::Opcode op, int64_t m,
                  int64_t n, int64_t k, int64_t groups, rt::DType dtype) {
  rt::kernels::RowArgs args;
  args.m = m, args.n = n, args.k = k, args.groups = groups;
  return timing.kernelCycles(rt::kernels::rowKernelCounts(op, args).work,
                             dtype);
}

int64_t messageCycles(const rt::TimingModel &timing, int64_t elements,
                      rt::DType dtype, int64_t hops) {
  return timing.messageCycles(rt::TimingModel::words(elements, dtype), hops);
}

RingHops ringHops(int64_t n, bool interleave) {
  RingHops hops;
  if (n <= 1)
    return hops;
  std::vector<int64_t> order = rt::ringOrder(n, interleave);
  for (int64_t l = 0; l < n; ++l) {
    int64_t distance = std::abs(order[l] - order[(l + 1) % n]);
    hops.longest = std::max(hops.longest, distance);
    if (l + 1 < n)
      hops.step = std::max(hops.step, distance);
  }
  return hops;
}

double ringSteps(int64_t steps, double own, double round, double wrap,
                 int64_t n) {
  if (steps <= 0)
    return 0;
  int64_t crossings = n > 1 ? (steps + n - 1) / n : 0;
  return std::max(double(steps) * own,
                  double(steps) * round + double(crossings) * wrap);
}

int64_t ringShiftCycles(const rt::TimingModel &timing, int64_t steps,
                        int64_t elements, rt::DType dtype, int64_t n,
                        bool interleave, int64_t before, int64_t overlapped,
                        int64_t after) {
  if (steps <= 0)
    return 0;
  if (n <= 1)
    return steps * (before + overlapped + after);
  RingHops hops = ringHops(n, interleave);
  double tail = double(timing.receiveCycles() + after);
  double own = double(before + timing.sendIssueCycles() + overlapped) + tail;
  double round =
      double(before + messageCycles(timing, elements, dtype, hops.step)) + tail;
  double wrap = double((hops.longest - hops.step) * timing.hopCycles());
  return std::llround(ringSteps(steps, own, round, wrap, n));
}

} // namespace wafer::cost
