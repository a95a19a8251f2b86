//===- MemoryPlan.h - Per-core SRAM offsets of a mesh program ---*- C++ -*-===//
//
// Where every buffer of a mesh program lives in each core's SRAM. Host
// inputs (mesh.distribute results: weights, caches, constants) are written
// before the program starts and stay for its whole run, at the bottom
// (those with an sram_offset, left by an earlier program, where they are);
// computed values live from their op to their last use and working buffers
// for their op only, first fit around the inputs, so memory freed by dead
// activations is reused. convert-mesh-to-core declares the buffers at these
// offsets and mesh-check-memory checks the high-water against the target.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_MEMORYPLAN_H
#define WAFER_SUPPORT_MEMORYPLAN_H

#include "wafer/Dialect/Mesh/MeshOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace wafer {

struct MemoryPlan {
  /// Byte offset of every distributed value's buffer (values a
  /// mesh.kv_append updates in place share the cache's).
  llvm::DenseMap<mlir::Value, int64_t> valueOffsets;
  /// Byte offset of working buffer `index` (scratchBuffers order) of an op.
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, int64_t>
      scratchOffsets;
  /// The highest byte any buffer ends at.
  int64_t peakBytes = 0;
  /// The first host input whose fixed offset (sram_offset) overlaps
  /// another's, if any.
  mesh::DistributeOp conflict;
  /// The first buffer that ends past the limit, if any.
  struct Overflow {
    mlir::Operation *op = nullptr;
    std::string what;
    int64_t bytes = 0, end = 0;
  };
  std::optional<Overflow> overflow;
};

/// Plans the buffers of @main's mesh ops for cores of `limitBytes` SRAM.
MemoryPlan planMemory(mlir::func::FuncOp main, mesh::GridAttr grid,
                      int64_t limitBytes);

} // namespace wafer

#endif // WAFER_SUPPORT_MEMORYPLAN_H
