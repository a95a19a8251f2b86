//===- Emulator.cpp - The mesh emulator -----------------------------------===//
//
// Every core interprets its role's instructions, compiled once per role into
// a flat code with jumps, so per-core state is a program counter, a loop
// stack and its buffers. Time is a per-core cycle counter; messages move hop
// by hop over the configured routes and reserve each ramp and link they use
// (every resource is free again at `free_at`).
//
// Scheduling is a discrete-event loop over batches: the ready cores with the
// smallest time run (in parallel when allowed) until they block on a recv,
// finish, or reach a send at a later time; the sends of a batch are then
// committed in (y, x) order. Only commits touch shared state, so results and
// cycle counts do not depend on the number of host threads.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Emulator.h"
#include "wafer/Runtime/RowKernels.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/Layout.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <queue>

using namespace llvm;

namespace wafer::rt {

json::Value statsToJSON(const RunStats &stats) {
  json::Array ops;
  for (const OpStats &op : stats.ops)
    ops.push_back(json::Object{{"name", op.name},
                               {"kind", op.kind},
                               {"algorithm", op.algorithm},
                               {"cycles", op.cycles},
                               {"compute_cycles", op.computeCycles},
                               {"words_sent", op.wordsSent},
                               {"messages", op.messages}});
  return json::Object{{"cycles", stats.cycles},
                      {"seconds", stats.seconds},
                      {"max_sram_bytes_per_core", stats.maxSramBytesPerCore},
                      {"max_routes_per_core", stats.maxRoutesPerCore},
                      {"kv_capacity_tokens",
                       stats.kvCapacityTokens < 0
                           ? json::Value(nullptr)
                           : json::Value(stats.kvCapacityTokens)},
                      {"messages", stats.messages},
                      {"link_words", stats.linkWords},
                      {"ops", std::move(ops)}};
}

namespace {

Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}



//===----------------------------------------------------------------------===//
// Role code
//===----------------------------------------------------------------------===//

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
  int32_t expr = -1, expr2 = -1;
  /// LoopBegin / Branch: pc past the body; LoopEnd: pc of its LoopBegin.
  uint32_t jump = 0;
  int64_t mark = -1;
};

void compileBody(const std::vector<Instr> &body, std::vector<Op> &code,
                 std::vector<Expr> &exprs) {
  for (const Instr &in : body) {
    Op op;
    auto buf = [&](size_t i) { return in.bufs.size() > i ? in.bufs[i] : -1; };
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
    op.opcode = in.op;
    op.mark = in.mark;
    switch (in.op) {
    case Opcode::GemmTile:
      op.kind = Step::Gemm;
      break;
    case Opcode::GemvTile:
      op.kind = Step::Gemv;
      break;
    case Opcode::Add:
      op.kind = Step::Add;
      break;
    case Opcode::Mul:
      op.kind = Step::Mul;
      break;
    case Opcode::Zero:
      op.kind = Step::Zero;
      break;
    case Opcode::Swap:
      op.kind = Step::Swap;
      break;
    case Opcode::RotateSlots:
      op.kind = Step::Rotate;
      break;
    case Opcode::Send:
      op.kind = Step::Send;
      break;
    case Opcode::Recv:
      op.kind = Step::Recv;
      break;
    case Opcode::Mark:
      op.kind = Step::Mark;
      break;
    case Opcode::Max:
      op.kind = Step::Max;
      break;
    case Opcode::Swiglu:
      op.kind = Step::Swiglu;
      break;
    case Opcode::Reduce:
      op.kind = Step::Reduce;
      break;
    case Opcode::RmsScale:
      op.kind = Step::RmsScale;
      break;
    case Opcode::Rope:
      op.kind = Step::Rope;
      break;
    case Opcode::AttnScores:
      // validateProgram has parsed the expression already.
      op.kind = Step::AttnScores;
      op.expr = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr)));
      break;
    case Opcode::SoftmaxExp:
      op.kind = Step::SoftmaxExp;
      break;
    case Opcode::AttnValues:
      op.kind = Step::AttnValues;
      break;
    case Opcode::DivRows:
      op.kind = Step::DivRows;
      break;
    case Opcode::Regrid:
    case Opcode::FlashStep:
      // validateProgram has parsed both expressions already.
      op.kind = in.op == Opcode::Regrid ? Step::Regrid : Step::FlashStep;
      op.expr = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr)));
      op.expr2 = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr2)));
      break;
    case Opcode::Copy:
      // validateProgram has parsed both expressions already.
      op.kind = Step::Copy;
      op.expr = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr)));
      op.expr2 = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr2)));
      break;
    case Opcode::Relay: {
      op.kind = Step::Recv;
      code.push_back(op);
      op.kind = Step::Send;
      op.channel = in.channel2;
      break;
    }
    case Opcode::Repeat:
    case Opcode::When: {
      // validateProgram has parsed every expression already.
      op.kind = in.op == Opcode::Repeat ? Step::LoopBegin : Step::Branch;
      op.expr = int32_t(exprs.size());
      exprs.push_back(cantFail(Expr::parse(in.expr)));
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
    }
    code.push_back(op);
  }
}

//===----------------------------------------------------------------------===//
// Emulator state
//===----------------------------------------------------------------------===//

using Payload = std::shared_ptr<const std::vector<float>>;

struct Message {
  int64_t arrival = 0;
  Payload data;
};

/// Messages one core receives on one color, in send order.
struct Inbox {
  std::vector<Message> queue;
  size_t head = 0;
};

/// A send issued in a batch, committed afterwards.
struct Outgoing {
  int64_t time = 0;
  int32_t color = 0;
  int32_t storage = 0;
  /// 32-bit link words the message occupies (two f16 values per word).
  int64_t words = 0;
  Payload data;
};

/// The end of one op's segment on one core, flushed into the op totals.
struct MarkRecord {
  int64_t op = 0, time = 0, compute = 0, words = 0, messages = 0;
};

enum class Status : uint8_t { Ready, Blocked, Done };

struct Core {
  int64_t time = 0;
  uint32_t pc = 0;
  Status status = Status::Ready;
  int32_t waitChannel = -1, waitColor = -1;
  /// Kernel cycles, words and messages since the last mark.
  int64_t compute = 0, words = 0, messages = 0;
  /// The enclosing loops, innermost last.
  struct Loop {
    int64_t count = 0, iteration = 0;
  };
  SmallVector<Loop, 2> loops;
  std::optional<Outgoing> outbox;
  SmallVector<MarkRecord, 1> marks;
  std::string error;
};

/// When each of a core's fabric resources is next free.
struct Ports {
  int64_t rampOut = 0, rampIn = 0;
  int64_t link[5] = {0, 0, 0, 0, 0}; // indexed by Dir; [Ramp] unused
};

struct OpTotals {
  int64_t end = -1, compute = 0, words = 0, messages = 0;
};

class Emulator {
public:
  Emulator(const Program &p, const EmulatorOptions &options)
      : p(p), t(p.target), W(p.gridWidth), H(p.gridHeight), N(W * H),
        threads(std::max(1u, options.threads)) {}

  Expected<RunResult> run(const NDArrayMap &inputs);

private:
  Error buildRouteTables();
  Error allocate();
  Error placeInputs(const NDArrayMap &inputs);
  Error simulate();
  void runCore(int32_t id, int64_t batchTime);
  bool step(int32_t id, Core &c, const Op &op, int64_t batchTime);
  Error commitSend(int32_t id, Outgoing &o);
  Error deadlock() const;
  RunResult finish();

  std::string coreName(int32_t id) const {
    return formatv("core ({0},{1})", id % W, id / W).str();
  }
  float *storage(int32_t id, int32_t buf) {
    return data.data() + int64_t(id) * perCore +
           slotOffset[slotOf[int64_t(id) * nb + buf]];
  }
  int64_t &busy(int32_t id, int32_t buf) {
    return busyUntil[int64_t(id) * nb + slotOf[int64_t(id) * nb + buf]];
  }
  /// Cycles of `work` operations writing buffer `buf` (f16 buffers use the
  /// target's f16 rate).
  int64_t cost(int64_t work, int32_t buf) const {
    double rate = p.buffers[buf].dtype == DType::F16 ? t.macsPerCycleF16
                                                      : t.macsPerCycleF32;
    return int64_t(std::ceil(double(work) / rate));
  }
  /// Runs a row instruction on core `id`; returns its work.
  int64_t rowKernel(int32_t id, const Op &op, int64_t expr, int64_t expr2) {
    kernels::RowArgs args;
    args.out = storage(id, op.out);
    auto operand = [&](int32_t buf) -> const float * {
      return buf < 0 ? nullptr : storage(id, buf);
    };
    args.a = operand(op.in1);
    args.b = operand(op.in2);
    args.c = operand(op.in3);
    args.m = op.m, args.groups = op.groups, args.k = op.k, args.n = op.n;
    args.scalar = op.scalar;
    args.expr = expr;
    args.expr2 = expr2;
    args.outElements = p.buffers[op.out].elements;
    args.aElements = op.in1 < 0 ? 0 : p.buffers[op.in1].elements;
    kernels::RowResult result = kernels::rowKernel(op.opcode, args);
    roundIfHalf(op.out, args.out, result.written);
    return result.work;
  }
  /// Rounds values just written into an f16 buffer to half precision.
  void roundIfHalf(int32_t buf, float *values, int64_t count) const {
    if (p.buffers[buf].dtype != DType::F16)
      return;
    for (int64_t i = 0; i < count; ++i)
      values[i] = float(_Float16(values[i]));
  }
  int64_t wordsOf(int32_t buf) const {
    int64_t count = p.buffers[buf].elements;
    return p.buffers[buf].dtype == DType::F16 ? (count + 1) / 2 : count;
  }
  ExprEnv env(int32_t id) const {
    int64_t x = id % W, y = id / W;
    return {x, y, posX[x], posY[y], W, H};
  }
  /// The color of the channel's route that starts at (send) or delivers to
  /// (recv) the core, or -1.
  int32_t channelColor(int32_t id, int32_t channel, bool send) const;

  const Program &p;
  const Target &t;
  const int64_t W, H, N;
  const unsigned threads;
  std::vector<int64_t> posX, posY, orderX, orderY;

  std::vector<std::vector<Op>> code; // per role
  std::vector<Expr> exprs;
  std::vector<int32_t> roleOf;

  int32_t numColors = 0;
  std::vector<const Route *> routeAt; // [core * numColors + color]
  std::vector<int32_t> channelOf;     // the channel that route belongs to
  int64_t maxRoutes = 0, sramBytes = 0;

  int64_t nb = 0, perCore = 0;
  std::vector<int64_t> slotOffset;
  std::vector<int32_t> slotOf;    // [core * nb + buffer] -> storage slot
  std::vector<int64_t> busyUntil; // [core * nb + slot]: pending send done
  std::vector<float> data;

  std::vector<Core> cores;
  std::vector<Ports> ports;
  std::vector<Inbox> inboxes;     // [core * numColors + color]
  std::vector<int64_t> visitedBy; // message serial that last crossed a core
  int64_t messageSerial = 0;
  std::priority_queue<std::pair<int64_t, int32_t>,
                      std::vector<std::pair<int64_t, int32_t>>, std::greater<>>
      ready;

  std::vector<OpTotals> opTotals;
  int64_t lastArrival = 0, totalMessages = 0, linkWords = 0;
};

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

Error Emulator::buildRouteTables() {
  for (const Channel &ch : p.channels)
    for (const Route &r : ch.routes)
      numColors = std::max(numColors, r.color + 1);
  routeAt.assign(N * numColors, nullptr);
  channelOf.assign(N * numColors, -1);
  for (size_t c = 0; c < p.channels.size(); ++c)
    for (const Route &r : p.channels[c].routes)
      for (int64_t y = r.cores.y.lo; y <= r.cores.y.hi; y += r.cores.y.step)
        for (int64_t x = r.cores.x.lo; x <= r.cores.x.hi; x += r.cores.x.step) {
          int64_t slot = (y * W + x) * numColors + r.color;
          if (routeAt[slot])
            return err(formatv("route conflict: core ({0},{1}) color {2} is "
                               "configured by channel '{3}' and channel "
                               "'{4}'",
                               x, y, r.color, p.channels[channelOf[slot]].name,
                               p.channels[c].name));
          routeAt[slot] = &r;
          channelOf[slot] = int32_t(c);
        }
  // validateProgram keeps colors below routesPerCore, so a core never
  // holds more than the target allows; the high-water mark is a statistic.
  for (int64_t id = 0; id < N; ++id)
    maxRoutes = std::max<int64_t>(
        maxRoutes, std::count_if(routeAt.begin() + id * numColors,
                                 routeAt.begin() + (id + 1) * numColors,
                                 [](const Route *r) { return r != nullptr; }));
  return Error::success();
}

Error Emulator::allocate() {
  nb = int64_t(p.buffers.size());
  const Buffer *highest = nullptr;
  for (const Buffer &b : p.buffers) {
    int64_t end = b.offsetBytes + bytesOf(b.dtype) * b.elements;
    if (end > sramBytes) {
      sramBytes = end;
      highest = &b;
    }
    slotOffset.push_back(perCore);
    perCore += b.elements;
  }
  // Every core allocates the same buffers, so core (0,0) stands for all.
  if (sramBytes > t.sramBytes)
    return err(formatv("SRAM overflow at core (0,0): buffer '{0}' ends at "
                       "byte {1}, target {2} has {3} bytes per core",
                       highest->name, sramBytes, t.name, t.sramBytes));
  data.assign(N * perCore, 0.0f);
  slotOf.resize(N * nb);
  for (int64_t id = 0; id < N; ++id)
    for (int64_t b = 0; b < nb; ++b)
      slotOf[id * nb + b] = int32_t(b);
  busyUntil.assign(N * nb, 0);
  return Error::success();
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The embedding rows the token ids of input `in.gatherIds` select from
/// the table in `in.data`, row-major in in.sourceShape.
static Expected<std::vector<float>> gatherRows(const HostTensor &in,
                                               const NDArrayMap &inputs) {
  auto it = inputs.find(in.gatherIds);
  if (it == inputs.end())
    return err("input '" + in.gatherIds + "' missing from the inputs");
  const NDArray &ids = it->second;
  if (ids.dtype != "int64" && ids.dtype != "int32")
    return err(formatv("input '{0}' has dtype {1}, expected int64 or int32 "
                       "token ids",
                       in.gatherIds, ids.dtype));
  int64_t dim = in.sourceShape.back(), rowsWanted = 1;
  for (size_t d = 0; d + 1 < in.sourceShape.size(); ++d)
    rowsWanted *= in.sourceShape[d];
  if (ids.elements() != rowsWanted)
    return err(formatv("input '{0}' has shape {1}, expected {2} token ids",
                       in.gatherIds, shapeText(ids.shape), rowsWanted));
  int64_t rows = int64_t(in.data.size()) / dim;
  std::vector<float> out;
  out.reserve(ids.data.size() * dim);
  for (float id : ids.data) {
    if (!(id >= 0 && id < float(rows)) || id != std::floor(id))
      return err(formatv("input '{0}': token id {1} is outside the "
                         "embedding table of {2} rows",
                         in.gatherIds, int64_t(id), rows));
    auto row = in.data.begin() + int64_t(id) * dim;
    out.insert(out.end(), row, row + dim);
  }
  return out;
}

Error Emulator::placeInputs(const NDArrayMap &inputs) {
  for (const HostTensor &in : p.inputs) {
    const std::vector<float> *source = &in.data;
    std::vector<float> gathered;
    if (!in.gatherIds.empty()) {
      Expected<std::vector<float>> rows = gatherRows(in, inputs);
      if (!rows)
        return rows.takeError();
      gathered = std::move(*rows);
      source = &gathered;
    } else if (in.data.empty()) {
      auto it = inputs.find(in.name);
      if (it == inputs.end())
        return err("input '" + in.name + "' missing from the inputs");
      const NDArray &a = it->second;
      if (a.shape != in.sourceShape)
        return err(formatv("input '{0}' has shape {1}, expected {2}", in.name,
                           shapeText(a.shape), shapeText(in.sourceShape)));
      if (a.dtype != "float32")
        return err(formatv("input '{0}' has dtype {1}, expected float32",
                           in.name, a.dtype));
      if (int64_t(a.data.size()) != a.elements())
        return err(formatv("input '{0}' has {1} values for shape {2}", in.name,
                           a.data.size(), shapeText(a.shape)));
      source = &a.data;
    }
    // The source index of every placed element, shared by all replicas.
    for (int64_t id = 0; id < N; ++id) {
      ExprEnv e = env(int32_t(id));
      float *dst = storage(int32_t(id), in.buffer);
      forEachLocalElement(
          in.shape, in.layout, H, W, e.lx, e.ly,
          [&](int64_t local, int64_t global) {
            int64_t index = global < 0 ? -1 : sourceIndex(in, global);
            dst[local] = index < 0 ? 0.0f : (*source)[index];
          });
      roundIfHalf(in.buffer, dst, p.buffers[in.buffer].elements);
    }
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

int32_t Emulator::channelColor(int32_t id, int32_t channel, bool send) const {
  // A core has at most numColors rules, however many routes the channel has.
  for (int32_t color = 0; color < numColors; ++color) {
    int64_t slot = int64_t(id) * numColors + color;
    const Route *r = routeAt[slot];
    if (r && channelOf[slot] == channel &&
        (send ? r->in == Dir::Ramp : (r->outMask & dirBit(Dir::Ramp)) != 0))
      return color;
  }
  return -1;
}

/// Runs the core until it blocks, finishes or reaches a send that belongs to
/// a later batch.
void Emulator::runCore(int32_t id, int64_t batchTime) {
  Core &c = cores[id];
  const std::vector<Op> &ops = code[roleOf[id]];
  while (c.pc < ops.size() && c.error.empty())
    if (!step(id, c, ops[c.pc], batchTime))
      return;
  if (c.pc >= ops.size())
    c.status = Status::Done;
}

/// Executes one op; false when the core must stop for this batch.
bool Emulator::step(int32_t id, Core &c, const Op &op, int64_t batchTime) {
  // A write must wait until the sends reading the storage have left.
  auto startWrite = [&](int32_t buf) {
    c.time = std::max(c.time, busy(id, buf));
  };
  auto kernel = [&](int64_t work) {
    int64_t cycles = cost(work, op.out);
    c.time += cycles;
    c.compute += cycles;
  };
  auto fail = [&](const Twine &what) {
    c.error = coreName(id) + ": " + what.str();
    return false;
  };
  // Expressions see the core's coordinates and the innermost loop's i.
  auto evaluate = [&](int32_t expr) {
    ExprEnv e = env(id);
    if (!c.loops.empty())
      e.i = c.loops.back().iteration;
    return exprs[expr].evaluate(e);
  };
  switch (op.kind) {
  case Step::Gemm:
  case Step::Gemv: {
    int64_t m = op.kind == Step::Gemm ? op.m : 1, k = op.k, n = op.n;
    startWrite(op.out);
    float *out = storage(id, op.out);
    const float *a = storage(id, op.in1), *b = storage(id, op.in2);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) {
        float av = a[i * k + q];
        for (int64_t j = 0; j < n; ++j)
          out[i * n + j] += av * b[q * n + j];
      }
    roundIfHalf(op.out, out, m * n);
    kernel(m * k * n);
    break;
  }
  case Step::Add:
  case Step::Mul:
  case Step::Max:
  case Step::Swiglu: {
    startWrite(op.out);
    int64_t count = p.buffers[op.out].elements;
    float *out = storage(id, op.out);
    const float *a = storage(id, op.in1), *b = storage(id, op.in2);
    for (int64_t i = 0; i < count; ++i)
      out[i] = kernels::elementwise(op.opcode, a[i], b[i]);
    roundIfHalf(op.out, out, count);
    kernel(count);
    break;
  }
  case Step::AttnScores:
  case Step::Regrid:
  case Step::FlashStep: {
    Expected<int64_t> first = evaluate(op.expr);
    if (!first)
      return fail(toString(first.takeError()));
    int64_t second = 0;
    if (op.expr2 >= 0) {
      Expected<int64_t> value = evaluate(op.expr2);
      if (!value)
        return fail(toString(value.takeError()));
      second = *value;
    }
    startWrite(op.out);
    if (op.kind == Step::FlashStep)
      startWrite(op.in1);
    kernel(rowKernel(id, op, *first, second));
    break;
  }
  case Step::Reduce:
  case Step::RmsScale:
  case Step::Rope:
  case Step::SoftmaxExp:
  case Step::AttnValues:
  case Step::DivRows:
    startWrite(op.out);
    kernel(rowKernel(id, op, 0, 0));
    break;
  case Step::Zero: {
    startWrite(op.out);
    int64_t count = p.buffers[op.out].elements;
    std::fill_n(storage(id, op.out), count, 0.0f);
    kernel(count);
    break;
  }
  case Step::Swap:
    std::swap(slotOf[int64_t(id) * nb + op.out],
              slotOf[int64_t(id) * nb + op.in1]);
    break;
  case Step::Rotate: {
    startWrite(op.out);
    int64_t count = p.buffers[op.out].elements;
    float *a = storage(id, op.out);
    if (count > 0)
      std::rotate(a, a + op.n, a + count);
    kernel(count);
    break;
  }
  case Step::Copy: {
    Expected<int64_t> to = evaluate(op.expr);
    if (!to)
      return fail(toString(to.takeError()));
    Expected<int64_t> from = evaluate(op.expr2);
    if (!from)
      return fail(toString(from.takeError()));
    int64_t toSlots = p.buffers[op.out].elements / op.n,
            fromSlots = p.buffers[op.in1].elements / op.n;
    if (*to < 0 || *to >= toSlots || *from < 0 || *from >= fromSlots)
      return fail(formatv("copy from slot {0} of '{1}' ({2} slots) to slot "
                          "{3} of '{4}' ({5} slots) is out of range",
                          *from, p.buffers[op.in1].name, fromSlots, *to,
                          p.buffers[op.out].name, toSlots));
    startWrite(op.out);
    float *dst = storage(id, op.out) + *to * op.n;
    const float *src = storage(id, op.in1) + *from * op.n;
    if (src != dst) // slots of one size never partly overlap
      std::copy_n(src, op.n, dst);
    roundIfHalf(op.out, dst, op.n);
    kernel(op.n);
    break;
  }
  case Step::Send: {
    if (c.time > batchTime)
      return false;
    int32_t color = channelColor(id, op.channel, /*send=*/true);
    if (color < 0)
      return fail("send on channel '" + p.channels[op.channel].name +
                  "' but the channel has no route starting at this core");
    int64_t count = p.buffers[op.out].elements;
    const float *src = storage(id, op.out);
    c.outbox =
        Outgoing{c.time, color, slotOf[int64_t(id) * nb + op.out],
                 wordsOf(op.out),
                 std::make_shared<const std::vector<float>>(src, src + count)};
    c.words += wordsOf(op.out);
    c.messages += 1;
    c.time += 1; // issue; the transfer itself overlaps what follows
    ++c.pc;
    // Stop so that the commit records when the storage is free again.
    return false;
  }
  case Step::Recv: {
    int32_t color = channelColor(id, op.channel, /*send=*/false);
    if (color < 0)
      return fail("recv on channel '" + p.channels[op.channel].name +
                  "' but the channel has no route delivering to this core");
    Inbox &box = inboxes[int64_t(id) * numColors + color];
    if (box.head == box.queue.size()) {
      c.status = Status::Blocked;
      c.waitChannel = op.channel;
      c.waitColor = color;
      return false;
    }
    Message msg = std::move(box.queue[box.head++]);
    if (box.head == box.queue.size()) {
      box.queue.clear();
      box.head = 0;
    }
    int64_t count = p.buffers[op.out].elements;
    if (int64_t(msg.data->size()) != count)
      return fail(formatv("recv on channel '{0}' into buffer '{1}' of {2} "
                          "elements got a message of {3}",
                          p.channels[op.channel].name, p.buffers[op.out].name,
                          count, msg.data->size()));
    c.time = std::max({c.time, msg.arrival, busy(id, op.out)}) + t.relayCycles;
    std::copy(msg.data->begin(), msg.data->end(), storage(id, op.out));
    roundIfHalf(op.out, storage(id, op.out), count);
    break;
  }
  case Step::LoopBegin:
  case Step::Branch: {
    Expected<int64_t> v = evaluate(op.expr);
    if (!v)
      return fail(toString(v.takeError()));
    if (op.kind == Step::LoopBegin && *v < 0)
      return fail(formatv("repeat count {0} of '{1}' is negative", *v,
                          exprs[op.expr].text()));
    if (*v == 0) {
      c.pc = op.jump;
      return true;
    }
    if (op.kind == Step::LoopBegin)
      c.loops.push_back({*v, 0});
    break;
  }
  case Step::LoopEnd:
    if (++c.loops.back().iteration < c.loops.back().count) {
      c.pc = op.jump + 1;
      return true;
    }
    c.loops.pop_back();
    break;
  case Step::Mark:
    c.marks.push_back({op.mark, c.time, c.compute, c.words, c.messages});
    c.compute = c.words = c.messages = 0;
    break;
  }
  ++c.pc;
  return true;
}

Error Emulator::commitSend(int32_t src, Outgoing &o) {
  int64_t words = o.words;
  int64_t occ = (words + t.linkWordsPerCycle - 1) / t.linkWordsPerCycle;
  Ports &sp = ports[src];
  int64_t start = std::max(o.time, sp.rampOut);
  sp.rampOut = start + occ;
  int64_t &done = busyUntil[int64_t(src) * nb + o.storage];
  done = std::max(done, start + occ);
  ++totalMessages;
  ++messageSerial;

  struct Head {
    int32_t core;
    Dir from;
    int64_t time;
  };
  SmallVector<Head, 8> work{{src, Dir::Ramp, start + t.rampCycles}};
  auto where = [&](int64_t id) {
    return formatv("({0},{1})", id % W, id / W).str();
  };
  // Formatted only when a message goes astray.
  auto origin = [&] {
    return formatv("message on color {0} from {1}", o.color, where(src)).str();
  };
  while (!work.empty()) {
    Head h = work.pop_back_val();
    const Route *r = routeAt[int64_t(h.core) * numColors + o.color];
    if (!r)
      return err(origin() + " reaches " + where(h.core) +
                 ", which has no route for it");
    if (r->in != h.from)
      return err(formatv("{0} arrives at {1} from {2} but its route expects "
                         "{3}",
                         origin(), where(h.core), dirName(h.from),
                         dirName(r->in)));
    if (visitedBy[h.core] == messageSerial)
      return err(origin() + " reaches " + where(h.core) +
                 " twice (routing loop)");
    visitedBy[h.core] = messageSerial;
    Ports &hp = ports[h.core];
    int64_t x = h.core % W, y = h.core / W;
    for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
      if (!(r->outMask & dirBit(d)))
        continue;
      int64_t nx = x + (d == Dir::East) - (d == Dir::West);
      int64_t ny = y + (d == Dir::South) - (d == Dir::North);
      if (nx < 0 || ny < 0 || nx >= W || ny >= H)
        return err(formatv("{0} leaves the grid at {1} going {2}", origin(),
                           where(h.core), dirName(d)));
      int64_t &link = hp.link[unsigned(d)];
      int64_t linkStart = std::max(h.time, link);
      link = linkStart + occ;
      linkWords += words;
      work.push_back(
          {int32_t(ny * W + nx), opposite(d), linkStart + t.hopCycles});
    }
    if (r->outMask & dirBit(Dir::Ramp)) {
      int64_t rampStart = std::max(h.time, hp.rampIn);
      hp.rampIn = rampStart + occ;
      int64_t arrival = rampStart + occ + t.rampCycles;
      lastArrival = std::max(lastArrival, arrival);
      inboxes[int64_t(h.core) * numColors + o.color].queue.push_back(
          {arrival, o.data});
      Core &dst = cores[h.core];
      if (dst.status == Status::Blocked && dst.waitColor == o.color) {
        dst.status = Status::Ready;
        ready.push({dst.time, h.core});
      }
    }
  }
  return Error::success();
}

Error Emulator::deadlock() const {
  int64_t waiting = 0;
  std::string examples;
  for (int32_t id = 0; id < N; ++id) {
    const Core &c = cores[id];
    if (c.status != Status::Blocked)
      continue;
    if (++waiting <= 4)
      examples +=
          formatv("{0}{1} on channel '{2}' color {3}", waiting > 1 ? "; " : "",
                  coreName(id), p.channels[c.waitChannel].name, c.waitColor);
  }
  return err(
      formatv("deadlock: {0} cores wait forever, e.g. {1}", waiting, examples));
}

Error Emulator::simulate() {
  cores.assign(N, Core());
  ports.assign(N, Ports());
  inboxes.assign(N * numColors, Inbox());
  visitedBy.assign(N, 0);
  opTotals.assign(p.ops.size(), OpTotals());
  for (int32_t id = 0; id < N; ++id)
    ready.push({0, id});

  std::optional<DefaultThreadPool> pool;
  if (threads > 1)
    pool.emplace(hardware_concurrency(threads));
  std::vector<int32_t> batch;
  while (!ready.empty()) {
    int64_t now = ready.top().first;
    batch.clear();
    while (!ready.empty() && ready.top().first == now) {
      batch.push_back(ready.top().second);
      ready.pop();
    }
    // Cores only touch their own state while running, so any split works.
    constexpr size_t kMinParallelBatch = 16;
    if (pool && batch.size() >= kMinParallelBatch) {
      size_t chunk = std::max<size_t>(1, batch.size() / (4 * threads));
      for (size_t lo = 0; lo < batch.size(); lo += chunk)
        pool->async([&, lo, chunk] {
          for (size_t i = lo; i < std::min(batch.size(), lo + chunk); ++i)
            runCore(batch[i], now);
        });
      pool->wait();
    } else {
      for (int32_t id : batch)
        runCore(id, now);
    }

    // Commit in (y, x) order: errors, op marks, then sends (which may wake
    // cores of this batch that blocked).
    for (int32_t id : batch)
      if (!cores[id].error.empty())
        return err(cores[id].error);
    for (int32_t id : batch) {
      Core &c = cores[id];
      for (const MarkRecord &m : c.marks) {
        OpTotals &o = opTotals[m.op];
        o.end = std::max(o.end, m.time);
        o.compute = std::max(o.compute, m.compute);
        o.words += m.words;
        o.messages += m.messages;
      }
      c.marks.clear();
      if (c.status == Status::Ready)
        ready.push({c.time, id});
    }
    for (int32_t id : batch)
      if (std::optional<Outgoing> &o = cores[id].outbox) {
        if (Error e = commitSend(id, *o))
          return e;
        o.reset();
      }
  }
  for (const Core &c : cores)
    if (c.status != Status::Done)
      return deadlock();
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

RunResult Emulator::finish() {
  RunResult result;
  RunStats &s = result.stats;
  s.cycles = lastArrival;
  for (const Core &c : cores)
    s.cycles = std::max(s.cycles, c.time);
  s.seconds = double(s.cycles) / t.clockHz;
  s.maxSramBytesPerCore = sramBytes;
  s.maxRoutesPerCore = maxRoutes;
  s.kvCapacityTokens = p.kvCapacityTokens;
  s.messages = totalMessages;
  s.linkWords = linkWords;
  int64_t previousEnd = 0;
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const OpTotals &o = opTotals[k];
    OpStats op{p.ops[k].name, p.ops[k].kind, p.ops[k].algorithm};
    // An op no core marked took no time of its own.
    int64_t end = std::max(o.end, previousEnd);
    op.cycles = end - previousEnd;
    op.computeCycles = o.compute;
    op.wordsSent = o.words;
    op.messages = o.messages;
    previousEnd = end;
    s.ops.push_back(std::move(op));
  }

  for (const HostTensor &out : p.outputs) {
    NDArray a;
    a.shape = out.shape;
    a.data.assign(a.elements(), 0.0f);
    // Replicated axes are read from their logical position 0.
    bool usesX = false, usesY = false;
    for (const LayoutDim &d : out.layout) {
      usesX |= d.axis == Axis::X;
      usesY |= d.axis == Axis::Y;
    }
    for (int64_t ly = 0; ly < (usesY ? H : 1); ++ly)
      for (int64_t lx = 0; lx < (usesX ? W : 1); ++lx) {
        int32_t id = int32_t(orderY[ly] * W + orderX[lx]);
        const float *src = storage(id, out.buffer);
        forEachLocalElement(out.shape, out.layout, H, W, lx, ly,
                            [&](int64_t local, int64_t global) {
                              if (global >= 0)
                                a.data[global] = src[local];
                            });
      }
    if (out.indexDim >= 0) {
      // Host-side gather along one dimension.
      NDArray gathered;
      gathered.shape = a.shape;
      int64_t d = out.indexDim, extent = a.shape[d];
      gathered.shape[d] = int64_t(out.indexMap.size());
      int64_t inner = 1, outer = 1;
      for (size_t i = d + 1; i < a.shape.size(); ++i)
        inner *= a.shape[i];
      for (int64_t i = 0; i < d; ++i)
        outer *= a.shape[i];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t index : out.indexMap)
          gathered.data.insert(gathered.data.end(),
                               a.data.begin() + (o * extent + index) * inner,
                               a.data.begin() + (o * extent + index + 1) *
                                                    inner);
      a = std::move(gathered);
    }
    if (!out.permutation.empty()) {
      // Host-side transpose: element at placed coordinates c goes to
      // coordinates c permuted.
      NDArray permuted;
      for (int64_t p : out.permutation)
        permuted.shape.push_back(a.shape[p]);
      permuted.data.resize(a.data.size());
      size_t rank = a.shape.size();
      std::vector<int64_t> stride(rank, 1);
      for (size_t d = rank; d-- > 1;)
        stride[d - 1] = stride[d] * permuted.shape[d];
      for (int64_t index = 0; index < int64_t(a.data.size()); ++index) {
        int64_t rest = index, target = 0;
        std::vector<int64_t> coord(rank);
        for (size_t d = rank; d-- > 0;) {
          coord[d] = rest % a.shape[d];
          rest /= a.shape[d];
        }
        for (size_t d = 0; d < rank; ++d)
          target += coord[out.permutation[d]] * stride[d];
        permuted.data[target] = a.data[index];
      }
      a = std::move(permuted);
    }
    if (!out.sourceShape.empty())
      a.shape = out.sourceShape;
    result.outputs[out.name] = std::move(a);
  }
  return result;
}

Expected<RunResult> Emulator::run(const NDArrayMap &inputs) {
  if (Error e = validateProgram(p))
    return std::move(e);
  posX = ringPositions(W, p.interleave);
  posY = ringPositions(H, p.interleave);
  orderX = ringOrder(W, p.interleave);
  orderY = ringOrder(H, p.interleave);
  for (const Role &role : p.roles) {
    code.emplace_back();
    compileBody(role.body, code.back(), exprs);
  }
  roleOf.assign(N, -1);
  for (size_t r = 0; r < p.roles.size(); ++r) {
    const CoreSet &cs = p.roles[r].cores;
    for (int64_t y = cs.y.lo; y <= cs.y.hi; y += cs.y.step)
      for (int64_t x = cs.x.lo; x <= cs.x.hi; x += cs.x.step)
        roleOf[y * W + x] = int32_t(r);
  }
  if (Error e = buildRouteTables())
    return std::move(e);
  if (Error e = allocate())
    return std::move(e);
  if (Error e = placeInputs(inputs))
    return std::move(e);
  if (Error e = simulate())
    return std::move(e);
  return finish();
}

} // namespace

Expected<RunResult> runProgram(const Program &program, const NDArrayMap &inputs,
                               const EmulatorOptions &options) {
  return Emulator(program, options).run(inputs);
}

} // namespace wafer::rt
