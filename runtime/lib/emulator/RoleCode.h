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
  LaneFlashScores,
  FlashStats,
  LaneFlashValues,
  LaneDivRows,
  LoopBegin,
  LoopEnd,
  Branch,
  Mark
};

/// One step of a role's flattened code. Relay becomes Recv + Send and
/// CombineRelay Recv + combine + Send (streamed); Repeat
/// becomes LoopBegin .. LoopEnd and When becomes Branch, with jumps.
struct Op {
  Step kind = Step::Zero;
  Opcode opcode = Opcode::Zero;
  int32_t out = -1, in1 = -1, in2 = -1, in3 = -1; // buffer indices
  int32_t channel = -1;
  int64_t m = 0, k = 0, n = 0, groups = 1;
  double scalar = 0;
  /// Regrid: Instr::length and Instr::parts.
  int64_t length = 0, parts = 1;
  /// Indices into the shared expression table, -1 when absent.
  int32_t expr = -1, expr2 = -1;
  /// LoopBegin / Branch: pc past the body; LoopEnd: pc of its LoopBegin.
  uint32_t jump = 0;
  int64_t mark = -1;
  /// The Recv, combine and Send of a CombineRelay: the send leaves once the
  /// receive's handling is done, and the core is busy until the stream has
  /// passed (Scheduler::step).
  bool streamed = false;
  /// A kernel without expressions: its cycles on the run's target, which
  /// the op alone fixes (set by the scheduler); -1 for every other op.
  int64_t fixedCycles = -1;
};

/// Whether a step runs a kernel on the data path (DataPath::kernel).
inline bool isKernel(Step kind) {
  switch (kind) {
  case Step::Swap:
  case Step::Send:
  case Step::Recv:
  case Step::LoopBegin:
  case Step::LoopEnd:
  case Step::Branch:
  case Step::Mark:
    return false;
  default:
    return true;
  }
}

/// Appends the flat code of `body` to `code`, its expressions to `exprs`.
/// The program must have passed validateProgram (expressions parse).
void compileBody(const std::vector<Instr> &body, std::vector<Op> &code,
                 std::vector<Expr> &exprs);

/// The values of the expressions that vary with at most one grid axis and
/// not with the loop iteration, tabulated per run. Most conditions and
/// counts of a role (`ly % 10 == 0 && ...`) are evaluated by every core at
/// every op; a lookup replaces a walk of the expression tree.
class ExprTables {
public:
  /// `posX` and `posY` are the cores' logical positions (lx, ly) by
  /// column and row; `position` the run's `t`.
  void build(const std::vector<Expr> &exprs, const std::vector<int64_t> &posX,
             const std::vector<int64_t> &posY, int64_t position);
  /// The value on core (x, y), or null when the expression must be
  /// evaluated (it depends on i, on both axes, or fails somewhere).
  const int64_t *lookup(int32_t expr, int64_t x, int64_t y) const {
    const Entry &e = entries[expr];
    switch (e.by) {
    case By::None:
      return nullptr;
    case By::Constant:
      return &values[e.offset];
    case By::Column:
      return &values[e.offset + x];
    case By::Row:
      return &values[e.offset + y];
    }
    return nullptr;
  }

  /// The axis an expression's table runs along.
  enum class By : uint8_t { None, Constant, Column, Row };
  By axisOf(int32_t expr) const { return entries[expr].by; }

private:
  struct Entry {
    By by = By::None;
    size_t offset = 0;
  };
  std::vector<Entry> entries;
  std::vector<int64_t> values;
};

/// Where a core goes on after a `when` whose condition is tabulated, per
/// run. A role tests a dozen such conditions one after another per op (one
/// per K-tree level and side, say) and a core passes most of them: a
/// lookup passes the false ones at once instead of one step each.
class BranchSkips {
public:
  struct Landing {
    /// The pc the core goes on at: the first true `when`'s body, or the
    /// first op that is not a tabulated `when` along the same axis.
    uint32_t pc = 0;
    /// The `when`s passed on the way, counted as instructions run.
    uint32_t passed = 0;
  };
  void build(const std::vector<std::vector<Op>> &code, const ExprTables &tables,
             int64_t width, int64_t height);
  /// The landing of the Branch at `pc` of `role` on core (x, y), or null
  /// when its condition is not tabulated.
  const Landing *lookup(int32_t role, uint32_t pc, int64_t x, int64_t y) const {
    const Entry &e = entries[role][pc];
    switch (e.by) {
    case ExprTables::By::None:
      return nullptr;
    case ExprTables::By::Constant:
      return &landings[e.offset];
    case ExprTables::By::Column:
      return &landings[e.offset + x];
    case ExprTables::By::Row:
      return &landings[e.offset + y];
    }
    return nullptr;
  }

private:
  struct Entry {
    ExprTables::By by = ExprTables::By::None;
    size_t offset = 0;
  };
  std::vector<std::vector<Entry>> entries; // [role][pc]
  std::vector<Landing> landings;
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_ROLECODE_H
