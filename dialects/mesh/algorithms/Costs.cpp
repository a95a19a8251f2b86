//===- Costs.cpp - The prices the cycle estimates add up ------------------===//
//
// Closed forms of what the emulator charges event by event
// (runtime/lib/emulator): kernels at the MAC rate, a message's ramps, hops
// and link words, a receive's software cost. The algorithm units add them
// along their critical paths (CostedOpInterface).
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

rt::DType plans::dtypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF16()
             ? rt::DType::F16
             : rt::DType::F32;
}

int64_t plans::rowCycles(const rt::TimingModel &timing, rt::Opcode op,
                         int64_t m, int64_t n, int64_t k, int64_t groups,
                         rt::DType dtype) {
  rt::kernels::RowArgs args;
  args.m = m, args.n = n, args.k = k, args.groups = groups;
  return timing.kernelCycles(rt::kernels::rowKernelCounts(op, args).work,
                             dtype);
}

int64_t plans::messageCycles(const rt::TimingModel &timing, int64_t elements,
                             rt::DType dtype, int64_t hops) {
  return timing.messageCycles(rt::TimingModel::words(elements, dtype), hops);
}

RingHops plans::ringHops(int64_t n, bool interleave) {
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

double plans::ringSteps(int64_t steps, double own, double round, double wrap,
                        int64_t n) {
  if (steps <= 0)
    return 0;
  int64_t crossings = n > 1 ? (steps + n - 1) / n : 0;
  return std::max(double(steps) * own,
                  double(steps) * round + double(crossings) * wrap);
}

int64_t plans::ringShiftCycles(const rt::TimingModel &timing, int64_t steps,
                               int64_t elements, rt::DType dtype, int64_t n,
                               bool interleave, int64_t before,
                               int64_t overlapped, int64_t after) {
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

int64_t plans::allreduceCycles(const AllreduceUse &use, unsigned message,
                               GridAttr grid, const rt::TimingModel &timing,
                               bool interleave, rt::DType dtype) {
  int64_t n =
      use.messageAlongX(message) ? grid.getWidth() : grid.getHeight();
  int64_t values = use.messageElements[message];
  if (n <= 1)
    return 0;
  int64_t combine = timing.kernelCycles(values, dtype);
  AllreduceAttr allreduce = use.allreduce;
  if (allreduce.getAlgorithm() == AllreduceAlgorithm::ring)
    // A copy of the sum, then n - 1 steps that pass it on and add.
    return timing.kernelCycles(values, dtype) +
           ringShiftCycles(timing, n - 1, values, dtype, n, interleave, 0, 0,
                           combine);
  return rt::ktreeAllreduceCycles(
      n, allreduce.getTreeK(), values, rt::TimingModel::words(values, dtype),
      timing.macsPerCycle(dtype), timing.target(),
      /*centered=*/allreduce.getAlgorithm() == AllreduceAlgorithm::ktree,
      interleave, use.relayed);
}
