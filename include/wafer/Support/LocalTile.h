//===- LocalTile.h - Sizes of a distributed value on one core ---*- C++ -*-===//
//
// The bottom of the compiler's per-core accounting: how many elements and
// bytes one core holds of a distributed value. The buffer plan and the
// channel families both build on it (and not on each other).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_LOCALTILE_H
#define WAFER_SUPPORT_LOCALTILE_H

#include "wafer/Dialect/Mesh/MeshOps.h"

namespace wafer {

/// Elements of the local tile every core holds of a distributed value.
int64_t localElements(mlir::Value distributed, mesh::GridAttr grid);

/// Bytes one buffer of `elements` values of `elementType` takes in SRAM
/// (rounded up so that offsets stay 4-byte aligned); INT64_MAX rounded down
/// when that does not fit, which exceeds every SRAM.
int64_t bufferBytes(int64_t elements, mlir::Type elementType);

} // namespace wafer

#endif // WAFER_SUPPORT_LOCALTILE_H
