//===- RowShapes.h - Operands of the row instructions -----------*- C++ -*-===//
//
// Part of the program format: how many buffers each row instruction
// (Program.h, Opcode::Reduce .. Opcode::LaneValues and
// Opcode::LaneFlashScores .. Opcode::LaneDivRows) takes and how many
// elements of each it touches. The verifier of core.rows, the bundle
// validator and the dump read these, and the work each does, which the
// emulator prices and the closed-form estimates add up; the arithmetic is
// the emulator's (RowKernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_ROWSHAPES_H
#define WAFER_RUNTIME_ROWSHAPES_H

#include "wafer/Runtime/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <vector>

namespace wafer::rt {

/// The buffers a row instruction (Reduce .. LaneValues and LaneFlashScores
/// .. LaneDivRows) takes;
/// 0 for every other opcode.
int rowKernelOperands(Opcode op);

/// The extents with what kernels that take a head count from one buffer's
/// size read of the others: LaneFlashValues reads as many heads of its
/// statistics (buffer 3) as its scores (buffer 1) hold.
/// `bufferElements` are the buffers' sizes, in operand order.
void raiseToBufferHeads(Opcode op, int64_t groups, int64_t k,
                        llvm::ArrayRef<int64_t> bufferElements,
                        std::vector<int64_t> &extents);

/// How many integer expressions (Instr::expr, expr2) a row instruction
/// carries: 0, 1 or 2.
int rowKernelExpressions(Opcode op);

/// Whether a row instruction also writes its first operand (buffer 1): the
/// running statistics of FlashStep and FlashStats.
bool rowKernelUpdatesOperand(Opcode op);

/// The elements a row instruction reads or writes in each of its buffers,
/// in operand order; an error for inconsistent sizes.
llvm::Expected<std::vector<int64_t>> rowKernelExtents(Opcode op, int64_t m,
                                                      int64_t groups,
                                                      int64_t k, int64_t n);

/// A Regrid's `length` and `parts` (Instr::length, Instr::parts) against
/// its widths and its buffers' elements (whole slots, checked before):
/// length 0 for ceil-sized blocks, or the length whose balanced blocks, in
/// as many blocks as the slots on `groups` cores, are the widths' tiles of
/// one unit (the columns of one entry) each; parts 1, or dividing the
/// length and both block counts.
llvm::Error checkRegridLength(int64_t m, int64_t groups, int64_t k, int64_t n,
                              int64_t length, int64_t parts,
                              int64_t outElements, int64_t aElements);

} // namespace wafer::rt

namespace wafer::rt::kernels {

/// The operands of one row instruction (see Opcode for their meaning).
struct RowArgs {
  float *out = nullptr;
  const float *a = nullptr, *b = nullptr, *c = nullptr;
  int64_t m = 0, groups = 1, k = 0, n = 0;
  double scalar = 0;
  /// Regrid: Instr::length and Instr::parts.
  int64_t length = 0, parts = 1;
  /// The values of the instruction's expressions: AttnScores: the valid
  /// keys; Regrid: the source and this core's axis positions; FlashStep:
  /// the global positions of the first key and the first query.
  int64_t expr = 0, expr2 = 0;
  /// Elements of out and a: Regrid's slot counts; the lane kernels' head
  /// counts.
  int64_t outElements = 0, aElements = 0;
};

/// What a row instruction writes to `out` and its work in operations.
struct RowResult {
  int64_t written = 0, work = 0;
};

/// RowResult from the sizes and expression values alone (args' pointers
/// are not read): what the emulator charges and the estimates count.
RowResult rowKernelCounts(Opcode op, const RowArgs &args);

/// Calls f(dst slot, src slot, dst slot's first column, src slot's first
/// column, lo, hi) for every column range [lo, hi) a Regrid copies.
template <typename F> void forEachRegridOverlap(const RowArgs &r, F f) {
  // Block b lies at axis position b % E, slot b / E. Ceil-sized, column c
  // of the matrix lies in block c / width; balanced, the r.length entries
  // of the dimension are split as LayoutDim says (in r.parts parts), each
  // entry `unit` columns wide (the dimensions after it).
  int64_t m = r.m, k = r.k, n = r.n, extent = r.groups;
  int64_t srcSlots = r.aElements / (m * k), dstSlots = r.outElements / (m * n);
  int64_t srcBlocks = srcSlots * extent, dstBlocks = dstSlots * extent;
  int64_t unit =
      r.length > 0 ? k / ((r.length + srcBlocks - 1) / srcBlocks) : 1;
  auto columns = [&](int64_t block, int64_t blocks, int64_t width) {
    if (r.length == 0)
      return std::pair(block * width, (block + 1) * width);
    return std::pair(blockStart(r.length, blocks, true, block, r.parts) * unit,
                     blockStart(r.length, blocks, true, block + 1, r.parts) *
                         unit);
  };
  for (int64_t t = 0; t < dstSlots; ++t) {
    auto [dLo, dHi] = columns(r.expr2 + t * extent, dstBlocks, n);
    for (int64_t s = 0; s < srcSlots; ++s) {
      auto [sLo, sHi] = columns(r.expr + s * extent, srcBlocks, k);
      int64_t lo = std::max(dLo, sLo), hi = std::min(dHi, sHi);
      if (lo < hi)
        f(t, s, dLo, sLo, lo, hi);
    }
  }
}

} // namespace wafer::rt::kernels

#endif // WAFER_RUNTIME_ROWSHAPES_H
