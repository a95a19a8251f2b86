//===- TimingModel.h - What the target's time is made of -------*- C++ -*-===//
//
// The cycle costs of the PLMR model (DESIGN section 4) as functions of a
// target: local kernels, link occupancy, hops, ramps, message handling. The
// emulator charges exactly these, event by event; closed-form estimates
// (the K-tree cost that picks K) add them up along a schedule. Keeping both
// on one object is what makes the estimates and the emulator agree.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_TIMINGMODEL_H
#define WAFER_RUNTIME_TIMINGMODEL_H

#include "wafer/Runtime/Program.h"

#include <cstdint>
#include <utility>

namespace wafer::rt {

class TimingModel {
public:
  /// Keeps its own copy of the target, so that a model made from a
  /// temporary (say, `TimingModel(attr.getValue())`) stays valid.
  explicit TimingModel(Target target) : t(std::move(target)) {}

  const Target &target() const { return t; }

  /// Cycles of `work` multiply-accumulates (or element operations) at
  /// `macsPerCycle`.
  static int64_t kernelCycles(int64_t work, double macsPerCycle);
  /// Cycles of `work` operations writing a buffer of type `dtype`.
  int64_t kernelCycles(int64_t work, DType dtype) const {
    return kernelCycles(work, macsPerCycle(dtype));
  }
  /// The rate kernels run at: the SIMD rate, slowed by the memory access
  /// the core cannot overlap with it (memory_cycles_per_op per operation).
  double macsPerCycle(DType dtype) const {
    double simd = dtype == DType::F16 ? t.macsPerCycleF16 : t.macsPerCycleF32;
    if (t.memoryCyclesPerOp == 0)
      return simd; // exactly, so that whole kernels stay whole cycles
    return 1.0 / (1.0 / simd + t.memoryCyclesPerOp);
  }

  /// 32-bit link words `elements` values of `dtype` take (two f16 a word).
  static int64_t words(int64_t elements, DType dtype) {
    return dtype == DType::F16 ? (elements + 1) / 2 : elements;
  }
  /// Cycles a message of `words` occupies a link or a ramp.
  int64_t occupancy(int64_t words) const {
    return (words + t.linkWordsPerCycle - 1) / t.linkWordsPerCycle;
  }
  /// Cycles from a send of `words` to its arrival `hops` hops away, with
  /// nothing else on the way: both ramps, the hops and the words on the
  /// link (what the network charges a lone message).
  int64_t messageCycles(int64_t words, int64_t hops) const {
    return 2 * rampCycles() + hops * hopCycles() + occupancy(words);
  }
  /// Latency of one hop on a configured route (alpha).
  int64_t hopCycles() const { return t.hopCycles; }
  /// Latency between a core and its router, paid at each end.
  int64_t rampCycles() const { return t.rampCycles; }
  /// Software handling of one received message (beta).
  int64_t receiveCycles() const { return t.relayCycles; }
  /// A core's cost of issuing a send; the transfer itself is asynchronous.
  int64_t sendIssueCycles() const { return t.sendIssueCycles; }

private:
  Target t;
};

} // namespace wafer::rt

#endif // WAFER_RUNTIME_TIMINGMODEL_H
