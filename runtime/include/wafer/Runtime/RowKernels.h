//===- RowKernels.h - The emulator's vector kernels -------------*- C++ -*-===//
//
// The arithmetic of the element-wise and row instructions (Program.h,
// Opcode::Max .. Opcode::FlashStep), apart from the emulator's scheduling.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_ROWKERNELS_H
#define WAFER_RUNTIME_ROWKERNELS_H

#include "wafer/Runtime/Program.h"


namespace wafer::rt::kernels {

/// Rounds values to half precision (round to nearest even) in place: with
/// the CPU's F16C instructions where it has them, else one at a time;
/// identical results either way.
void roundToHalf(float *values, int64_t count);
/// The one-at-a-time conversion roundToHalf must agree with.
void roundToHalfReference(float *values, int64_t count);

/// out = a (op) b for Add, Mul, Max, Swiglu.
float elementwise(Opcode op, float a, float b);

/// The operands of one row instruction (see Opcode for their meaning).
struct RowArgs {
  float *out = nullptr;
  const float *a = nullptr, *b = nullptr, *c = nullptr;
  int64_t m = 0, groups = 1, k = 0, n = 0;
  double scalar = 0;
  /// The values of the instruction's expressions: AttnScores: the valid
  /// keys; Regrid: the source and this core's axis positions; FlashStep:
  /// the global positions of the first key and the first query.
  int64_t expr = 0, expr2 = 0;
  /// Regrid: elements of out and a (their slot counts).
  int64_t outElements = 0, aElements = 0;
};

/// Runs a row instruction; returns the values written to `out` (to round
/// f16 results) and the work in operations (for its cycles).
struct RowResult {
  int64_t written = 0, work = 0;
};
RowResult rowKernel(Opcode op, const RowArgs &args);

/// What rowKernel returns, from the sizes and expression values alone
/// (args' pointers are not read): the timing mode's count of the work.
RowResult rowKernelCounts(Opcode op, const RowArgs &args);

} // namespace wafer::rt::kernels

#endif // WAFER_RUNTIME_ROWKERNELS_H
