//===- TimingModel.cpp - What the target's time is made of ----------------===//
#include "wafer/Runtime/TimingModel.h"

#include <cmath>

namespace wafer::rt {

int64_t TimingModel::kernelCycles(int64_t work, double macsPerCycle) {
  return int64_t(std::ceil(double(work) / macsPerCycle));
}

} // namespace wafer::rt
