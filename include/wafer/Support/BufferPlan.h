//===- BufferPlan.h - Per-core buffers of mesh ops --------------*- C++ -*-===//
//
// What every core stores for a mesh program: one buffer per distributed
// value (its local tile, including padding and block-cyclic slots) and the
// working buffers each algorithm needs. convert-mesh-to-core allocates
// exactly these and mesh-check-memory checks them against the target, so
// both read the sizes from here.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_BUFFERPLAN_H
#define WAFER_SUPPORT_BUFFERPLAN_H

#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Support/LocalTile.h"

#include <string>
#include <vector>

namespace wafer {

/// A working buffer of one op, named `<op tag><suffix>` by the lowering.
struct ScratchBuffer {
  std::string suffix;
  int64_t elements = 0;
};

/// The working buffers of a mesh.gemm (ring shift targets or SUMMA panels)
/// or a mesh.gemv (K-tree partial, ring pass buffers), in allocation order;
/// empty for other ops.
std::vector<ScratchBuffer> scratchBuffers(mlir::Operation *op,
                                          mesh::GridAttr grid);

} // namespace wafer

#endif // WAFER_SUPPORT_BUFFERPLAN_H
