//===- RowKernels.h - The emulator's vector kernels -------------*- C++ -*-===//
//
// The arithmetic of the element-wise and row instructions (Program.h,
// Opcode::Max .. Opcode::LaneValues, Opcode::LaneFlashScores ..
// Opcode::LaneDivRows), apart from the emulator's scheduling.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_ROWKERNELS_H
#define WAFER_RUNTIME_ROWKERNELS_H

#include "wafer/Runtime/Program.h"
#include "wafer/Runtime/RowShapes.h"

namespace wafer::rt::kernels {

/// out[i] = a[i] (op) b[i] for Add, Mul, Max, Swiglu; out may be a or b.
void elementwise(Opcode op, const float *a, const float *b, float *out,
                 int64_t count);

/// Runs a row instruction; returns the values written to `out` (to round
/// f16 results) and the work in operations (for its cycles).
RowResult rowKernel(Opcode op, const RowArgs &args);

} // namespace wafer::rt::kernels

#endif // WAFER_RUNTIME_ROWKERNELS_H
