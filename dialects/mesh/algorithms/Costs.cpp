//===- Costs.cpp - The cost model's prices for mesh values ----------------===//
//
// The glue between the ops and lib/CostModel: a value's type, an
// allreduce's attribute. The algorithm units add the prices along their
// critical paths (CostedOpInterface).
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

int64_t plans::allreduceCycles(const AllreduceUse &use, unsigned message,
                               GridAttr grid, const rt::TimingModel &timing,
                               bool interleave, rt::DType dtype) {
  int64_t n = use.extent(message, grid);
  int64_t values = use.messageElements[message];
  if (n <= 1)
    return 0;
  int64_t combine = timing.kernelCycles(values, dtype);
  AllreduceAttr allreduce = use.allreduce;
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
      use.segmentsAlong(use.messageAlongX(message)) && interleave ? 2 : 1);
}
