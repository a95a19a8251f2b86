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

#include <string>
#include <vector>

namespace wafer {

/// Elements of the local tile every core holds of a distributed value.
int64_t localElements(mlir::Value distributed, mesh::GridAttr grid);

/// Bytes one buffer of `elements` values of `elementType` takes in SRAM
/// (rounded up so that offsets stay 4-byte aligned); INT64_MAX rounded down
/// when that does not fit, which exceeds every SRAM.
int64_t bufferBytes(int64_t elements, mlir::Type elementType);

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
