//===- AlgorithmPlans.h - Shared pieces of the algorithm plans --*- C++ -*-===//
//
// What several algorithm units build from: channel families from paths,
// the ring shift, the allreduce every GEMV, rms_norm and decode attention
// ends with (Allreduce.cpp), and the prices their cycle estimates add up
// (lib/CostModel, through Costs.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H
#define WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H

#include "wafer/CostModel/CostModel.h"
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/RowShapes.h"
#include "wafer/Support/CheckedMath.h"

namespace wafer::mesh::plans {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

/// A family of `paths`, colored so that paths sharing a link differ.
ChannelFamily makeFamily(ChannelRole role, std::string name, rt::Axis axis,
                         std::vector<rt::LinePath> paths);

/// The ring shift along `axis` (MeshGEMM, prefill attention, relayout).
ChannelFamily ringFamily(ChannelRole role, rt::Axis axis, GridAttr grid,
                         bool interleave);

/// The families of an allreduce along columns (y) or rows (x): one per
/// K-tree level and the broadcast, the ring, or the relayed hops.
std::vector<ChannelFamily> allreduceFamilies(const AllreduceUse &use,
                                             GridAttr grid, bool interleave);

/// Adds what each allreduce of `use` receives into (receivesAllreduce): the
/// ring's passing and arriving buffers or the K-tree's partial, one set
/// per message.
void addAllreduceScratch(const AllreduceUse &use, GridAttr grid,
                         std::vector<ScratchBuffer> &scratch);

//===----------------------------------------------------------------------===//
// Prices: lib/CostModel's, and the glue for mesh values (Costs.cpp)
//===----------------------------------------------------------------------===//

/// The type a distributed tensor is stored, sent and computed in.
rt::DType dtypeOf(mlir::Value v);

/// Cycles of message `message` of `use`'s allreduce (values of `dtype`).
/// With `times` (one per position of the axis, in physical order): from
/// position p's own value in at times[p], they become when each position
/// holds the sum, and it returns the last. The K-tree's and the pipeline's
/// chains start each member at its time (cost::ktreeAllreduceCycles); the
/// ring and segmented trees start from the last and end together.
int64_t allreduceCycles(const AllreduceUse &use, unsigned message,
                        GridAttr grid, const rt::TimingModel &timing,
                        bool interleave, rt::DType dtype,
                        std::vector<int64_t> *times = nullptr);

/// `use`'s first message as the clock simulates it with ring ops
/// (cost::LineAllreduce, `before` and `after` cycles around it): a K-tree's
/// or the pipeline's along lines of more than one core, whole or in lane
/// segments; none for the ring or a relayed tree.
std::optional<cost::LineAllreduce>
lineAllreduce(const AllreduceUse &use, GridAttr grid,
              const rt::TimingModel &timing, bool interleave, rt::DType dtype,
              int64_t before, int64_t after);

/// An op's cycles from a common start (its estimateCycles): the last
/// core's time after advanceClock from every core at 0.
template <typename Op>
int64_t fromCommonStart(Op op, GridAttr grid, const rt::TimingModel &timing,
                        bool interleave) {
  cost::CoreClock clock(grid.getHeight(), grid.getWidth());
  op.advanceClock(clock, grid, timing, interleave);
  return clock.latest();
}

} // namespace wafer::mesh::plans

#endif // WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H
