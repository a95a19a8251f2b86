//===- Costs.cpp - The cost model's prices for mesh values ----------------===//
//
// The glue between the ops and lib/CostModel: a value's type, an
// allreduce's attribute. The algorithm units add the prices along their
// critical paths (CostedOpInterface).
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

rt::DType plans::dtypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF16()
             ? rt::DType::F16
             : rt::DType::F32;
}

std::optional<cost::LineAllreduce>
plans::lineAllreduce(const AllreduceUse &use, GridAttr grid,
                     const rt::TimingModel &timing, bool interleave,
                     rt::DType dtype, int64_t before, int64_t after) {
  AllreduceAttr allreduce = use.allreduce;
  bool alongX = use.messageAlongX(0);
  int64_t n = alongX ? grid.getWidth() : grid.getHeight();
  int64_t values = use.messageElements[0];
  if (n <= 1 || use.relayed ||
      allreduce.getAlgorithm() == AllreduceAlgorithm::ring)
    return std::nullopt;
  // Lane segments' trees run over ring positions (logical columns).
  std::optional<AxisSegments> segments = use.segmentsAlong(alongX);
  return cost::ktreeLine(
      alongX, n, allreduce.getTreeK(), values,
      rt::TimingModel::words(values, dtype), timing.macsPerCycle(dtype),
      allreduce.getAlgorithm() == AllreduceAlgorithm::ktree, before, after,
      segments ? segments->columns : 0, segments ? segments->used() : 0,
      segments ? rt::ringOrder(n, interleave) : std::vector<int64_t>{});
}

int64_t plans::allreduceCycles(const AllreduceUse &use, unsigned message,
                               GridAttr grid, const rt::TimingModel &timing,
                               bool interleave, rt::DType dtype,
                               std::vector<int64_t> *times) {
  int64_t n = use.extent(message, grid);
  int64_t values = use.messageElements[message];
  bool segmented = use.segmentsAlong(use.messageAlongX(message)).has_value();
  AllreduceAttr allreduce = use.allreduce;
  if (times && (n <= 1 || segmented ||
                allreduce.getAlgorithm() == AllreduceAlgorithm::ring)) {
    // From the last position's time, all ending together.
    int64_t end =
        *std::max_element(times->begin(), times->end()) +
        allreduceCycles(use, message, grid, timing, interleave, dtype);
    std::fill(times->begin(), times->end(), end);
    return end;
  }
  if (n <= 1)
    return 0;
  int64_t combine = timing.kernelCycles(values, dtype);
  if (allreduce.getAlgorithm() == AllreduceAlgorithm::ring)
    // A copy of the sum, then n - 1 steps that pass it on and add.
    return timing.kernelCycles(values, dtype) +
           cost::ringShiftCycles(timing, n - 1, values, dtype, n, interleave, 0,
                                 0, combine);
  return cost::ktreeAllreduceCycles(
      n, allreduce.getTreeK(), values, rt::TimingModel::words(values, dtype),
      timing.macsPerCycle(dtype), timing.target(),
      /*centered=*/allreduce.getAlgorithm() == AllreduceAlgorithm::ktree,
      interleave, use.relayed,
      // A segment's tree runs over logical positions, two columns apart
      // under INTERLEAVE.
      segmented && interleave ? 2 : 1, times);
}
