//===- LocalTile.h - Sizes of a distributed value on one core ---*- C++ -*-===//
//
// The bottom of the compiler's per-core accounting: how many bytes one
// core's buffer takes (the elements of a local tile come from
// wafer::localElements, next to the mesh ops).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_LOCALTILE_H
#define WAFER_SUPPORT_LOCALTILE_H

#include "wafer/Dialect/Mesh/MeshOps.h"

namespace wafer {

/// Bytes one buffer of `elements` values of `elementType` takes in SRAM
/// (rounded up so that offsets stay 4-byte aligned); INT64_MAX rounded down
/// when that does not fit, which exceeds every SRAM.
int64_t bufferBytes(int64_t elements, mlir::Type elementType);

} // namespace wafer

#endif // WAFER_SUPPORT_LOCALTILE_H
