//===- RowShapes.h - Operands of the row instructions -----------*- C++ -*-===//
//
// Part of the program format: how many buffers each row instruction
// (Program.h, Opcode::Reduce .. Opcode::FlashStep) takes and how many
// elements of each it touches. The verifier of core.rows, the bundle
// validator and the dump read these; the arithmetic is the emulator's
// (RowKernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_ROWSHAPES_H
#define WAFER_RUNTIME_ROWSHAPES_H

#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace wafer::rt {

/// The buffers a row instruction (Reduce .. FlashStep, not Swiglu) takes;
/// 0 for every other opcode.
int rowKernelOperands(Opcode op);

/// The elements a row instruction reads or writes in each of its buffers,
/// in operand order; an error for inconsistent sizes.
llvm::Expected<std::vector<int64_t>> rowKernelExtents(Opcode op, int64_t m,
                                                      int64_t groups,
                                                      int64_t k, int64_t n);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_ROWSHAPES_H
