//===- AlgorithmPlans.h - Shared pieces of the algorithm plans --*- C++ -*-===//
//
// What several algorithm units build from: channel families from paths,
// the ring shift, the allreduce every GEMV, rms_norm and decode attention
// ends with (Allreduce.cpp), and the prices their cycle estimates add up
// (Costs.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H
#define WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H

#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/RowShapes.h"

namespace wafer::mesh::plans {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

/// Adds what each allreduce of `use` receives into: the ring's passing and
/// arriving buffers or the K-tree's partial, one set per message.
void addAllreduceScratch(const AllreduceUse &use, GridAttr grid,
                         std::vector<ScratchBuffer> &scratch);

//===----------------------------------------------------------------------===//
// Prices (Costs.cpp): what the emulator charges, in closed form
//===----------------------------------------------------------------------===//

/// The type a distributed tensor is stored, sent and computed in.
rt::DType dtypeOf(mlir::Value v);

/// Cycles of a row instruction of these sizes (RowArgs' meaning).
int64_t rowCycles(const rt::TimingModel &timing, rt::Opcode op, int64_t m,
                  int64_t n, int64_t k, int64_t groups, rt::DType dtype);

/// Cycles from the issue of a send of `elements` values to their arrival
/// `hops` hops away: both ramps, the hops and the words on the link.
int64_t messageCycles(const rt::TimingModel &timing, int64_t elements,
                      rt::DType dtype, int64_t hops);

/// Hops from one ring position to the next: the usual step, and the
/// longest (the identity placement's wrap-around crosses the axis).
struct RingHops {
  int64_t step = 0, longest = 0;
};
RingHops ringHops(int64_t n, bool interleave);

// A ring shift in which every core sends, works, receives from the next
// position and works again is a max-plus system: after k steps a core's
// time is its longest path of k steps, either a core's own sequence k
// times, or a message's way from position to position (its latency and the
// receivers' work), which crosses the ring's longest link once every n
// steps.

/// Cycles of `steps` such steps: `own` per step on a core, or `round` per
/// step for the message plus `wrap` extra cycles each time it crosses the
/// longest link of a ring of n positions.
double ringSteps(int64_t steps, double own, double round, double wrap,
                 int64_t n);

/// Cycles of `steps` steps of a ring shift of `elements` values in which
/// every core runs `before` cycles before its send, `overlapped` cycles
/// between its send and its receive and `after` cycles after it.
int64_t ringShiftCycles(const rt::TimingModel &timing, int64_t steps,
                        int64_t elements, rt::DType dtype, int64_t n,
                        bool interleave, int64_t before, int64_t overlapped,
                        int64_t after);

/// Cycles of message `message` of `use`'s allreduce (values of `dtype`).
int64_t allreduceCycles(const AllreduceUse &use, unsigned message,
                        GridAttr grid, const rt::TimingModel &timing,
                        bool interleave, rt::DType dtype);

} // namespace wafer::mesh::plans

#endif // WAFER_DIALECT_MESH_ALGORITHMS_ALGORITHMPLANS_H
