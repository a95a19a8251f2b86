//===- RoleCode.cpp - Role programs as flat code --------------------------===//
#include "RoleCode.h"

#include "wafer/Runtime/RowShapes.h"

#include "llvm/Support/Error.h"

namespace wafer::rt::emulator {

static Step stepOf(Opcode opcode) {
  switch (opcode) {
  case Opcode::GemmTile:
    return Step::Gemm;
  case Opcode::GemvTile:
    return Step::Gemv;
  case Opcode::Add:
    return Step::Add;
  case Opcode::Mul:
    return Step::Mul;
  case Opcode::Zero:
    return Step::Zero;
  case Opcode::Swap:
    return Step::Swap;
  case Opcode::RotateSlots:
    return Step::Rotate;
  case Opcode::Send:
    return Step::Send;
  case Opcode::Recv:
  case Opcode::Relay:        // its Recv half; compileBody appends the Send
  case Opcode::CombineRelay: // and the combine and the Send
    return Step::Recv;
  case Opcode::Mark:
    return Step::Mark;
  case Opcode::Max:
    return Step::Max;
  case Opcode::Swiglu:
    return Step::Swiglu;
  case Opcode::Reduce:
    return Step::Reduce;
  case Opcode::RmsScale:
    return Step::RmsScale;
  case Opcode::Rope:
    return Step::Rope;
  case Opcode::AttnScores:
    return Step::AttnScores;
  case Opcode::SoftmaxExp:
    return Step::SoftmaxExp;
  case Opcode::AttnValues:
    return Step::AttnValues;
  case Opcode::DivRows:
    return Step::DivRows;
  case Opcode::Regrid:
    return Step::Regrid;
  case Opcode::FlashStep:
    return Step::FlashStep;
  case Opcode::LaneScores:
    return Step::LaneScores;
  case Opcode::LaneValues:
    return Step::LaneValues;
  case Opcode::LaneFlashScores:
    return Step::LaneFlashScores;
  case Opcode::FlashStats:
    return Step::FlashStats;
  case Opcode::LaneFlashValues:
    return Step::LaneFlashValues;
  case Opcode::LaneDivRows:
    return Step::LaneDivRows;
  case Opcode::Copy:
    return Step::Copy;
  case Opcode::Repeat:
    return Step::LoopBegin;
  case Opcode::When:
    return Step::Branch;
  }
  return Step::Zero;
}

/// The number of expressions an instruction carries.
static int expressionCount(Opcode opcode) {
  switch (opcode) {
  case Opcode::Repeat:
  case Opcode::When:
    return 1;
  case Opcode::Copy:
    return 2;
  default:
    return rowKernelExpressions(opcode);
  }
}

void compileBody(const std::vector<Instr> &body, std::vector<Op> &code,
                 std::vector<Expr> &exprs) {
  for (const Instr &in : body) {
    Op op;
    auto buf = [&](size_t i) { return in.bufs.size() > i ? in.bufs[i] : -1; };
    op.kind = stepOf(in.op);
    op.opcode = in.op;
    op.out = buf(0);
    op.in1 = buf(1);
    op.in2 = buf(2);
    op.in3 = buf(3);
    op.channel = in.channel;
    op.m = in.m;
    op.k = in.k;
    op.n = in.n;
    op.groups = in.groups;
    op.scalar = in.scalar;
    op.length = in.length;
    op.parts = in.parts;
    op.mark = in.mark;
    // validateProgram has parsed every expression already.
    int expressions = expressionCount(in.op);
    if (expressions >= 1) {
      op.expr = int32_t(exprs.size());
      exprs.push_back(llvm::cantFail(Expr::parse(in.expr)));
    }
    if (expressions == 2) {
      op.expr2 = int32_t(exprs.size());
      exprs.push_back(llvm::cantFail(Expr::parse(in.expr2)));
    }
    if (in.op == Opcode::Relay) {
      code.push_back(op);
      op.kind = Step::Send;
      op.channel = in.channel2;
    }
    if (in.op == Opcode::CombineRelay) {
      // recv partial; sum = combine(sum, partial); send sum: three steps
      // timed as one stream.
      int32_t sum = op.out, partial = op.in1;
      op.streamed = true;
      op.out = partial;
      op.in1 = -1;
      code.push_back(op);
      op.opcode = Opcode(in.k);
      op.kind = stepOf(op.opcode);
      op.out = sum;
      op.in1 = sum;
      op.in2 = partial;
      code.push_back(op);
      op.kind = Step::Send;
      op.out = sum;
      op.in1 = op.in2 = -1;
    }
    if (in.op == Opcode::Repeat || in.op == Opcode::When) {
      size_t begin = code.size();
      code.push_back(op);
      compileBody(in.body, code, exprs);
      if (in.op == Opcode::Repeat) {
        Op end;
        end.kind = Step::LoopEnd;
        end.jump = uint32_t(begin);
        code.push_back(end);
      }
      code[begin].jump = uint32_t(code.size());
      continue;
    }
    code.push_back(op);
  }
}

void ExprTables::build(const std::vector<Expr> &exprs,
                       const std::vector<int64_t> &posX,
                       const std::vector<int64_t> &posY, int64_t position) {
  int64_t W = int64_t(posX.size()), H = int64_t(posY.size());
  entries.assign(exprs.size(), Entry());
  values.clear();
  for (size_t k = 0; k < exprs.size(); ++k) {
    unsigned deps = exprs[k].dependences();
    if ((deps & Expr::Iteration) ||
        (deps & (Expr::Column | Expr::Row)) == (Expr::Column | Expr::Row))
      continue;
    By by = deps & Expr::Column ? By::Column
            : deps & Expr::Row  ? By::Row
                                : By::Constant;
    int64_t count = by == By::Column ? W : by == By::Row ? H : 1;
    size_t offset = values.size();
    bool failed = false;
    for (int64_t v = 0; v < count && !failed; ++v) {
      // The other axis's coordinates are 0: the value does not read them.
      ExprEnv env{by == By::Column ? v : 0,
                  by == By::Row ? v : 0,
                  by == By::Column ? posX[v] : 0,
                  by == By::Row ? posY[v] : 0,
                  W,
                  H};
      env.t = position;
      llvm::Expected<int64_t> value = exprs[k].evaluate(env);
      if (!value) {
        // Evaluated on the core instead, which reports the error there.
        llvm::consumeError(value.takeError());
        failed = true;
      } else {
        values.push_back(*value);
      }
    }
    if (failed) {
      values.resize(offset);
      continue;
    }
    entries[k] = {by, offset};
  }
}

void BranchSkips::build(const std::vector<std::vector<Op>> &code,
                        const ExprTables &tables, int64_t width,
                        int64_t height) {
  using By = ExprTables::By;
  entries.assign(code.size(), {});
  landings.clear();
  for (size_t role = 0; role < code.size(); ++role) {
    const std::vector<Op> &ops = code[role];
    std::vector<Entry> &at = entries[role];
    at.assign(ops.size(), Entry());
    // Backwards: a branch's landing when false is that of the branch it
    // jumps to, which comes later.
    for (size_t pc = ops.size(); pc-- > 0;) {
      const Op &op = ops[pc];
      if (op.kind != Step::Branch || tables.axisOf(op.expr) == By::None)
        continue;
      By by = tables.axisOf(op.expr);
      int64_t count = by == By::Column ? width : by == By::Row ? height : 1;
      const Entry *next = nullptr;
      if (op.jump < ops.size() && ops[op.jump].kind == Step::Branch) {
        const Entry &e = at[op.jump];
        if (e.by == by || e.by == By::Constant)
          next = &e;
      }
      size_t offset = landings.size();
      for (int64_t v = 0; v < count; ++v) {
        int64_t x = by == By::Column ? v : 0, y = by == By::Row ? v : 0;
        Landing landing{uint32_t(pc + 1), 1};
        if (*tables.lookup(op.expr, x, y) == 0) {
          landing = {op.jump, 1};
          if (next) {
            const Landing &then =
                landings[next->offset + (next->by == By::Constant ? 0 : v)];
            landing = {then.pc, then.passed + 1};
          }
        }
        landings.push_back(landing);
      }
      at[pc] = {by, offset};
    }
  }
}

} // namespace wafer::rt::emulator
