//===- RoleCode.h - Role programs as flat code ------------------*- C++ -*-===//
//
// Each role's instruction tree is compiled once into a flat code with jumps,
// so a core's control state is a program counter and a loop stack.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_ROLECODE_H
#define WAFER_RUNTIME_EMULATOR_ROLECODE_H

#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/Program.h"

#include <cstdint>
#include <vector>

namespace wafer::rt::emulator {

enum class Step : uint8_t {
  Gemm,
  Gemv,
  Add,
  Mul,
  Zero,
  Swap,
  Rotate,
  Send,
  Recv,
  Copy,
  Max,
  Swiglu,
  Reduce,
  RmsScale,
  Rope,
  AttnScores,
  SoftmaxExp,
  AttnValues,
  DivRows,
  Regrid,
  FlashStep,
  LaneScores,
  LaneValues,
  LoopBegin,
  LoopEnd,
  Branch,
  Mark
};

/// One step of a role's flattened code. Relay becomes Recv + Send; Repeat
/// becomes LoopBegin .. LoopEnd and When becomes Branch, with jumps.
struct Op {
  Step kind = Step::Zero;
  Opcode opcode = Opcode::Zero;
  int32_t out = -1, in1 = -1, in2 = -1, in3 = -1; // buffer indices
  int32_t channel = -1;
  int64_t m = 0, k = 0, n = 0, groups = 1;
  double scalar = 0;
  /// Indices into the shared expression table, -1 when absent.
  int32_t expr = -1, expr2 = -1;
  /// LoopBegin / Branch: pc past the body; LoopEnd: pc of its LoopBegin.
  uint32_t jump = 0;
  int64_t mark = -1;
};

/// Appends the flat code of `body` to `code`, its expressions to `exprs`.
/// The program must have passed validateProgram (expressions parse).
void compileBody(const std::vector<Instr> &body, std::vector<Op> &code,
                 std::vector<Expr> &exprs);

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_ROLECODE_H
