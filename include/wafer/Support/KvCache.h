//===- KvCache.h - Where a KV cache keeps its tokens ------------*- C++ -*-===//
//
// The slots of a mesh.kv_append's cache ([1, KVH, H x C, D], C slots per
// row of cores) that hold each token before and after the step, for the
// concat and shift policies: the planner and mesh-plan-kv-cache place the
// past and read the present with these, the lowering moves tokens by them
// and the attention masks the slots they leave empty.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_KVCACHE_H
#define WAFER_SUPPORT_KVCACHE_H

#include "wafer/Dialect/Mesh/MeshOps.h"

#include <string>
#include <vector>

namespace wafer {

struct KvCacheLayout {
  int64_t rows = 1, slotsPerRow = 1, past = 0;
  mesh::KvPolicy policy = mesh::KvPolicy::shift;

  /// Tokens row r holds before the step: balanced, the extra ones at the
  /// bottom.
  int64_t countBefore(int64_t row) const;
  /// ... and after it.
  int64_t countAfter(int64_t row) const;
  /// The slot of each past position before the step.
  std::vector<int64_t> pastSlots() const;
  /// The slot of each position 0 .. past (the new token last) after it.
  std::vector<int64_t> presentSlots() const;
  // Expressions of the row `ly` and the run-time position `t` (the tokens
  // in the caches before the step, from `past` on):
  /// The first past position row ly holds before the step, and
  /// countBefore (both fixed by `past`; the hand-off fills them).
  std::string firstBeforeExpr() const;
  std::string countBeforeExpr() const;
  /// countAfter.
  std::string countAfterExpr() const;
  /// Shift: the tokens every row holds at least, t / rows.
  std::string rowTokensExpr() const;
  /// Concat: the tokens the bottom row holds before the step.
  std::string bottomCountExpr() const;
  /// Whether row ly holds one token more than the rows above (it passes its
  /// oldest one up in a shift).
  std::string shiftingRowsExpr() const;
  /// Whether row ly takes a token from the row below in a shift.
  std::string receivingRowsExpr() const;

  /// The most tokens the caches hold after a step from `past` on: every row
  /// full (shift), or the bottom row full (concat).
  int64_t tokenLimit() const;
};

/// Slots per row of a cache planned for a step after `past` tokens and room
/// for `capacity` tokens in all (0: the step's own) under `policy`.
int64_t kvSlotsPerRow(int64_t rows, int64_t past, int64_t capacity,
                      mesh::KvPolicy policy);

/// Fails, naming `pass`, when a cache of type `cache` ([.., .., P, ..], its
/// positions split along y) resized to `slotsPerRow` token slots per row of
/// cores would not fit one core's SRAM on the target of `op`'s module. The
/// slots come from the command line (a context length, a --dim-param), so
/// this is checked before anything is sized by them.
mlir::LogicalResult checkKvCacheFits(mlir::Operation *op,
                                     mlir::RankedTensorType cache,
                                     int64_t slotsPerRow, llvm::StringRef pass);

/// The layout of a mesh.kv_append.
KvCacheLayout getKvCacheLayout(mesh::KvAppendOp op);
/// The layout a mesh.kv_handoff fills: the past of its S source positions.
KvCacheLayout getKvCacheLayout(mesh::KvHandoffOp op);

} // namespace wafer

#endif // WAFER_SUPPORT_KVCACHE_H
