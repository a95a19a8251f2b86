//===- Emulator.cpp - The scheduler of the mesh emulator ------------------===//
//
// Every core interprets its role's flat code (RoleCode.h), so per-core state
// is a program counter, a loop stack, a time and where its buffers' storage
// is. The rooms around the scheduler: the data path computes (DataPath.h),
// the network moves messages over the routes (Network.h), the timing model
// prices every event (TimingModel.h), and the host places inputs and reads
// outputs (HostIO.h).
//
// Scheduling is a discrete-event loop over batches: the ready cores with the
// smallest time run until they block on a recv, finish, or reach a send at
// a later time. Sends enter the network in (time, y, x) order: a batch
// keeps its cores' sends, in (y, x) order, until all its cores ran, then
// commits them (on several threads, band by band at once where their
// messages stay in the senders' bands); on a target whose receives take no
// cycles (or with EmulatorOptions::commitInTurn), a batch commits each send
// as its core issues it. Only commits touch shared state (and the ready
// queue, in a lane per piece and band), so results and cycle counts do not
// depend on the number of host threads.
//
// Over 600 lines: the Scheduler class is private to this file, and its
// per-instruction step(), the event loop that batches it and the session
// runs that reset it read the same core state; splitting them would expose
// that state in a header.
//
//===----------------------------------------------------------------------===//
#include "DataPath.h"
#include "HostIO.h"
#include "HugePages.h"
#include "Network.h"
#include "Progress.h"
#include "ReadyQueue.h"
#include "RoleCode.h"
#include "SpinTeam.h"

#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Emulator.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Runtime/RowShapes.h"
#include "wafer/Runtime/TimingModel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <memory>
#include <optional>

using namespace llvm;

namespace wafer::rt {

namespace {

using namespace emulator;

Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

/// The end of one op's segment on one core, flushed into the op totals.
struct MarkRecord {
  int64_t op = 0, time = 0, compute = 0, words = 0, messages = 0;
};

/// Failed: the core stopped with an error (Scheduler::errors).
enum class Status : uint8_t { Ready, Blocked, Done, Failed };

/// A core's state, three cache lines that Scheduler::prefetchCore asks for
/// ahead of the core's run. What a message that wakes the core reads
/// (Scheduler::receiveStart) fills the first, which the message's hop
/// prefetches (Network::setReceiverState); the third holds the loops'
/// entries, the stream's end (unfetched, it was a miss on every streamed
/// kernel) and the bands of its sends.
struct alignas(64) Core {
  int64_t time = 0;
  uint32_t pc = 0;
  Status status = Status::Ready;
  /// Whether swaps moved any of its buffers' storage (Scheduler::slotOf).
  bool swapped = false;
  int32_t waitChannel = -1, waitColor = -1;
  /// Its role (Scheduler::roleOf, here to save a cache line per visit).
  int32_t role = -1;
  /// The last op mark passed (-1: none yet).
  int32_t lastMark = -1;
  /// Storage slots that sends are still reading, and until when.
  SmallVector<std::pair<int32_t, int64_t>, 1> sending;
  /// Instructions run.
  int64_t instructions = 0;
  /// Kernel cycles, words and messages since the last mark.
  int64_t compute = 0, words = 0, messages = 0;
  /// Over the whole run: kernel cycles, and cycles not spent waiting.
  int64_t computeTotal = 0, busyTotal = 0;
  /// The enclosing loops, innermost last.
  struct Loop {
    int64_t count = 0, iteration = 0;
  };
  SmallVector<Loop, 2> loops;
  /// The end of a CombineRelay's stream: the core is busy until the last
  /// word it forwards has left.
  int64_t streamEnd = 0;
  /// Network::bands for its sends' colors below 64, bit c for color c:
  /// worked out at its first send on the color, in a banded run.
  uint64_t bandsKnown = 0, rowBandColors = 0, columnBandColors = 0;
};
static_assert(sizeof(Core) == 3 * 64, "Scheduler::prefetchCore asks for "
                                      "three cache lines");

/// A traced core's spans since the last mark (their op is the next mark's),
/// and the finished ones.
struct TraceBuffer {
  std::vector<TraceSpan> pending, spans;
};

struct OpTotals {
  int64_t end = -1, compute = 0, words = 0, messages = 0;
};

class Scheduler {
public:
  Scheduler(const Program &p, const EmulatorOptions &options)
      : p(p), timing(p.target), W(p.gridWidth), H(p.gridHeight), N(W * H),
        threads(std::clamp(options.threads, 1u, kMaxEmulatorThreads)),
        mode(options.mode), maxCycles(options.maxCycles),
        maxInstructions(options.maxInstructions), tracing(options.trace),
        detail(options.detail), progressShown(options.progress),
        commitInTurn(options.commitInTurn),
        progressAfter(options.progressAfterMs), network(p, timing),
        data(mode == EmulatorMode::Functional ? makeFunctionalDataPath(p)
                                              : makeTimingDataPath(p)) {}

  /// What every run shares: role code, route tables, storage.
  Error setup();
  /// One run from cycle 0 on the cores' current storage; the first places
  /// every input, later ones only the user inputs given.
  Expected<RunResult> run(const NDArrayMap &inputs, const RunRequest &request);
  /// Session::adopt.
  Error adopt(const Scheduler &from,
              ArrayRef<std::pair<std::string, std::string>> outputsToInputs);

private:
  void chooseTracedCores();
  void budgetExceeded(int32_t id, Core &c, const Twine &what);
  std::string instructionBudget() const {
    return formatv("ran more than {0} instructions (--max-instructions)",
                   maxInstructions);
  }
  void setError(int32_t id, Core &c, std::string message) {
    errors[id] = std::move(message);
    c.status = Status::Failed;
  }
  /// Records a span of a traced core, merged into the previous one when it
  /// continues it.
  void span(int32_t id, TracePhase phase, int64_t start, int64_t end) {
    // Inlined up to here: most runs trace nothing.
    if (!traceTrack.empty() && traceTrack[id] >= 0 && end > start)
      traceSpan(traceTrack[id], phase, start, end);
  }
  LLVM_ATTRIBUTE_NOINLINE void traceSpan(int32_t track, TracePhase phase,
                                         int64_t start, int64_t end) {
    std::vector<TraceSpan> &pending = traceBuffers[track].pending;
    if (!pending.empty() && pending.back().phase == phase &&
        pending.back().end == start) {
      pending.back().end = end;
      return;
    }
    pending.push_back({track, phase, 0, start, end});
  }

  Error allocate();
  Error simulate();
  struct PieceLog;
  /// Runs a core in its batch: in a piece of a batch (`piece`), its sends
  /// wait in the piece's log for the batch to commit them after all its
  /// cores ran, and so do its op marks; in turn (`piece` null), its sends
  /// enter the network as it issues them. Either way it runs on.
  void runCore(int32_t id, int64_t batchTime, PieceLog *piece);
  /// A batch's cores lie far apart in memory, so each one's state is a
  /// cache miss: asking for the state of a core a few places ahead overlaps
  /// those misses (8% of a full-wafer timing run). Four places: further
  /// ahead, the misses outstanding at once fill the processor's buffers
  /// and the prefetches stall (eight places ahead was 5% slower).
  static constexpr size_t kPrefetchAhead = 4;
  void prefetchCore(int32_t id) const {
    const char *c = reinterpret_cast<const char *>(&cores[id]);
    __builtin_prefetch(c);
    __builtin_prefetch(c + 64);
    __builtin_prefetch(c + 128);
    network.prefetch(id);
  }
  /// Network::bands for a send of core `id` on `color`, kept in the core's
  /// state (a table of them beside it was a cache miss at every send: a
  /// two-thread full-wafer run was 17% slower with it).
  uint8_t sendBands(Core &c, int32_t id, int32_t color) const {
    if (color >= 64)
      return network.bands(id, color);
    uint64_t bit = uint64_t(1) << color;
    if (!(c.bandsKnown & bit)) {
      uint8_t flags = network.bands(id, color);
      c.bandsKnown |= bit;
      if (flags & Network::InRowBand)
        c.rowBandColors |= bit;
      if (flags & Network::InColumnBand)
        c.columnBandColors |= bit;
    }
    return (c.rowBandColors & bit ? Network::InRowBand : 0) |
           (c.columnBandColors & bit ? Network::InColumnBand : 0);
  }
  /// Commits the sends of a batch's pieces, in (y, x) order: band by band
  /// on the team's threads where it can (band b first offered to member
  /// b).
  Error commitBatch(SpinTeam *team);
  /// Whether a batch's sends may be committed band by band (a run on
  /// several threads).
  bool bandedCommits = false;
  bool step(int32_t id, Core &c, const Op &op, int64_t batchTime,
            PieceLog *piece);
  /// After a core's run in a batch: queues it again if it can go on.
  void retire(int32_t id);
  /// What the cores of a piece of a batch did: their op marks and done
  /// count, applied after it in piece order, and their sends. The cores
  /// that go on are queued at once, in the piece's lane of the ready queue.
  /// On cache lines of its own: its thread writes it for every core it
  /// runs, and a line shared with the next piece's log made a full-wafer
  /// run on two threads 15% slower.
  struct alignas(64) PieceLog {
    std::vector<MarkRecord> marks;
    /// The ready queue's lane that its cores which go on are queued in.
    size_t lane = 0;
    int64_t done = 0;
    int32_t failed = -1;
    /// The sends its cores issued, in order, and their senders; where the
    /// running core's sends begin.
    std::vector<Outgoing> sends;
    std::vector<int32_t> senders;
    size_t coreSends = 0;
    /// Whether all the sends stay in their sender's band of rows (of
    /// columns): Scheduler::commitBatch.
    bool rowBandSends = true, columnBandSends = true;
    void clear() {
      marks.clear();
      sends.clear();
      senders.clear();
      done = 0;
      failed = -1;
      rowBandSends = columnBandSends = true;
    }
  };
  /// A parallel batch's pieces: kPiecesPerBand per band of rows.
  static constexpr size_t kPiecesPerBand = 2;
  /// The same in a batch run in pieces, into the piece's log and lane.
  void retire(int32_t id, PieceLog &log);
  /// A batch's senders lie far apart in memory too, and most messages go
  /// one hop: before committing send `i` of a log, ask for the route and
  /// ports of the sender 2 * kPrefetchAhead sends ahead, and for the
  /// neighbours that the sender kPrefetchAhead sends ahead sends to (its
  /// route is in cache by then), if `own` commits them (a 2-layer 660x660
  /// timing run 15% faster on one thread and on two).
  template <typename OwnSend>
  void prefetchSends(const PieceLog &log, size_t i, OwnSend own) const {
    size_t far = i + 2 * kPrefetchAhead, near = i + kPrefetchAhead;
    if (far < log.sends.size() && own(log.senders[far]))
      network.prefetchSend(log.senders[far], log.sends[far].color);
    if (near < log.sends.size() && own(log.senders[near]))
      network.prefetchFirstHops(log.senders[near], log.sends[near].color);
  }
  std::vector<PieceLog> pieceLogs;
  /// Piece k of a batch is its cores from pieceBounds[k] to [k + 1].
  std::vector<size_t> pieceBounds;
  void addMark(const MarkRecord &m) {
    OpTotals &o = opTotals[m.op];
    o.end = std::max(o.end, m.time);
    o.compute = std::max(o.compute, m.compute);
    o.words += m.words;
    o.messages += m.messages;
  }
  /// What one thread's commits of a band of the grid add up to, on cache
  /// lines of its own (PieceLog).
  struct alignas(64) CommitBand {
    Network::Tally tally;
    int64_t serial = 0;
    /// The ready queue's lane for the cores its messages wake.
    size_t lane = 0;
  };
  Error commitSend(int32_t id, const Outgoing &o, CommitBand *band = nullptr);
  /// Link cycles of the message a recv takes.
  int64_t receiveOccupancy(const Op &recv) const {
    const Buffer &b = p.buffers[recv.out];
    return timing.occupancy(TimingModel::words(b.elements, b.dtype));
  }
  /// When core `id` starts handling a message whose last word arrives at
  /// `arrival`: a streamed receive (CombineRelay) starts on its first word.
  int64_t receiveStart(int32_t id, const Op &recv, int64_t arrival) const {
    int64_t first =
        recv.streamed ? arrival - receiveOccupancy(recv) + 1 : arrival;
    const Core &c = cores[id];
    return std::max({c.time, first, busy(c, id, recv.out)});
  }
  Error deadlock() const;
  RunStats stats() const;

  std::string coreName(int32_t id) const {
    return formatv("core ({0},{1})", id % W, id / W).str();
  }
  /// The storage slot of a buffer: its own, unless swaps moved it.
  int32_t slotOf(int32_t id, int32_t buf) const {
    for (const auto &[buffer, slot] : swappedSlots[id])
      if (buffer == buf)
        return slot;
    return buf;
  }
  /// The same for a core in a run: most cores never swap, and their state
  /// is in cache where swappedSlots is not.
  int32_t slotOf(const Core &c, int32_t id, int32_t buf) const {
    return c.swapped ? slotOf(id, buf) : buf;
  }
  void setSlot(int32_t id, int32_t buf, int32_t slot) {
    SmallVector<std::pair<int32_t, int32_t>, 2> &moved = swappedSlots[id];
    auto it = llvm::find_if(moved, [&](auto &e) { return e.first == buf; });
    if (it != moved.end())
      moved.erase(it);
    if (slot != buf)
      moved.push_back({buf, slot});
    cores[id].swapped = !moved.empty();
  }
  /// Records that a send reads the storage slot until `until`.
  void noteSending(Core &c, int32_t slot, int64_t until) {
    // Sends that left before the core's present no longer hold anything.
    llvm::erase_if(c.sending, [&](auto &e) { return e.second <= c.time; });
    auto it =
        llvm::find_if(c.sending, [&](auto &e) { return e.first == slot; });
    if (it == c.sending.end())
      c.sending.push_back({slot, until});
    else
      it->second = std::max(it->second, until);
  }
  /// When the sends reading a buffer's storage have left the core.
  int64_t busy(const Core &c, int32_t id, int32_t buf) const {
    int32_t slot = slotOf(c, id, buf);
    for (const auto &[s, until] : c.sending)
      if (s == slot)
        return until;
    return 0;
  }
  ExprEnv env(int32_t id) const {
    int64_t x = id % W, y = id / W;
    ExprEnv e{x, y, grid.posX[x], grid.posY[y], W, H};
    e.t = position;
    return e;
  }

  const Program &p;
  const TimingModel timing;
  const int64_t W, H, N;
  const unsigned threads;
  const EmulatorMode mode;
  /// The analytic mode's total: the sum of the ops' estimates.
  int64_t analyticCycles = 0;
  const int64_t maxCycles, maxInstructions;
  const bool tracing, detail, progressShown, commitInTurn;
  const std::chrono::milliseconds progressAfter;
  Network network;
  std::unique_ptr<DataPath> data;
  GridPositions grid;

  std::vector<std::vector<Op>> code; // per role
  std::vector<Expr> exprs;
  ExprTables exprTables;
  BranchSkips branchSkips;
  std::vector<int32_t> roleOf;

  int64_t sramBytes = 0;
  /// Per core, the buffers whose storage slot swaps changed, with their
  /// slot (kept across the runs of a session, like the data in them): a
  /// few entries per core instead of one per buffer.
  std::vector<SmallVector<std::pair<int32_t, int32_t>, 2>> swappedSlots;

  /// The run's value of `t`.
  int64_t position = 0;
  /// Runs so far; a failed run leaves the cores mid-program, so the
  /// session ends there.
  int64_t runs = 0;
  bool failed = false;
  /// Per Program::inputs entry: taken over from another session (adopt),
  /// never placed by the host.
  std::vector<bool> residentInputs;

  std::vector<Core> cores;
  /// Per core, the error it stopped with (Status::Failed).
  std::vector<std::string> errors;
  ReadyQueue ready;
  std::vector<OpTotals> opTotals;
  int64_t doneCores = 0;
  /// Per core: its trace track, or -1 (empty when not tracing).
  std::vector<int32_t> traceTrack;
  std::vector<std::string> traceTracks;
  std::vector<TraceBuffer> traceBuffers; // per track
};

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

Error Scheduler::allocate() {
  const Buffer *highest = nullptr;
  for (const Buffer &b : p.buffers) {
    int64_t end = b.offsetBytes + bytesOf(b.dtype) * b.elements;
    if (end > sramBytes) {
      sramBytes = end;
      highest = &b;
    }
  }
  // Every core allocates the same buffers, so core (0,0) stands for all.
  if (sramBytes > p.target.sramBytes)
    return err(formatv("SRAM overflow at core (0,0): buffer '{0}' ends at "
                       "byte {1}, target {2} has {3} bytes per core",
                       highest->name, sramBytes, p.target.name,
                       p.target.sramBytes));
  if (Error e = data->allocate(N))
    return e;
  swappedSlots.assign(N, {});
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

/// Runs the core until it blocks, finishes, or reaches a send that belongs
/// to a later batch.
void Scheduler::runCore(int32_t id, int64_t batchTime, PieceLog *piece) {
  Core &c = cores[id];
  if (piece)
    piece->coreSends = piece->sends.size();
  const std::vector<Op> &ops = code[c.role];
  while (c.pc < ops.size()) {
    if (++c.instructions > maxInstructions || c.time > maxCycles) {
      budgetExceeded(
          id, c,
          c.instructions > maxInstructions
              ? instructionBudget()
              : formatv("ran past cycle {0} (--max-cycles)", maxCycles).str());
      return;
    }
    if (!step(id, c, ops[c.pc], batchTime, piece))
      return;
  }
  if (c.pc >= ops.size())
    c.status = Status::Done;
}

/// Stops the core with the error `what` (how it went over its budget),
/// naming the op it was in.
void Scheduler::budgetExceeded(int32_t id, Core &c, const Twine &what) {
  size_t op = size_t(c.lastMark + 1);
  std::string where = op < p.ops.size()
                          ? "in op '" + p.ops[op].name + "'"
                          : std::string("after the last op");
  setError(id, c, coreName(id) + ": " + where + " " + what.str());
}

/// Executes one op; false when the core must stop for this batch.
bool Scheduler::step(int32_t id, Core &c, const Op &op, int64_t batchTime,
                     PieceLog *piece) {
  // A write must wait until the sends reading the storage have left.
  auto startWrite = [&](int32_t buf) {
    int64_t free = std::max(c.time, busy(c, id, buf));
    span(id, TracePhase::Wait, c.time, free);
    c.time = free;
  };
  auto fail = [&](const Twine &what) {
    setError(id, c, coreName(id) + ": " + what.str());
    return false;
  };
  // Expressions see the core's coordinates and the innermost loop's i.
  auto evaluate = [&](int32_t expr) -> Expected<int64_t> {
    if (const int64_t *value = exprTables.lookup(expr, id % W, id / W))
      return *value;
    ExprEnv e = env(id);
    if (!c.loops.empty())
      e.i = c.loops.back().iteration;
    return exprs[expr].evaluate(e);
  };
  auto slotOrNone = [&](int32_t buf) {
    return buf < 0 ? -1 : slotOf(c, id, buf);
  };
  // Runs a local kernel on the data path and charges its cycles.
  auto kernel = [&](const KernelValues &values) {
    int64_t cycles = op.fixedCycles;
    // The timing mode's data path only counts the work, which a fixed
    // kernel's cycles already price.
    if (cycles < 0 || mode == EmulatorMode::Functional) {
      KernelSlots s{slotOrNone(op.out), slotOrNone(op.in1), slotOrNone(op.in2),
                    slotOrNone(op.in3)};
      int64_t work = data->kernel(id, op, s, values);
      cycles = timing.kernelCycles(work, p.buffers[op.out].dtype);
    }
    c.compute += cycles;
    c.computeTotal += cycles;
    if (op.streamed) {
      // Combines the words as they pass; the send leaves before it ends.
      c.streamEnd = std::max(c.streamEnd, c.time + cycles);
      return;
    }
    span(id, TracePhase::Compute, c.time, c.time + cycles);
    c.time += cycles;
    c.busyTotal += cycles;
  };
  switch (op.kind) {
  case Step::Gemm:
  case Step::Gemv:
  case Step::Add:
  case Step::Mul:
  case Step::Max:
  case Step::Swiglu:
  case Step::Zero:
  case Step::Rotate:
  case Step::Reduce:
  case Step::RmsScale:
  case Step::Rope:
  case Step::SoftmaxExp:
  case Step::AttnValues:
  case Step::DivRows:
    startWrite(op.out);
    kernel({});
    break;
  case Step::AttnScores:
  case Step::Regrid:
  case Step::FlashStep:
  case Step::LaneScores:
  case Step::LaneValues:
  case Step::LaneFlashScores:
  case Step::FlashStats:
  case Step::LaneFlashValues:
  case Step::LaneDivRows: {
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
    if (rowKernelUpdatesOperand(op.opcode))
      startWrite(op.in1);
    kernel({*first, second});
    break;
  }
  case Step::Swap: {
    int32_t out = slotOf(c, id, op.out), in = slotOf(c, id, op.in1);
    setSlot(id, op.out, in);
    setSlot(id, op.in1, out);
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
    kernel({*to, *from});
    break;
  }
  case Step::Send: {
    if (op.streamed) {
      // The words leave as the combine makes them: a combine slower than
      // the link holds the send back until its last word can follow.
      const Buffer &buffer = p.buffers[op.out];
      int64_t leaves = c.streamEnd - timing.occupancy(TimingModel::words(
                                         buffer.elements, buffer.dtype));
      if (leaves > c.time) {
        span(id, TracePhase::Receive, c.time, leaves);
        c.busyTotal += leaves - c.time;
        c.time = leaves;
      }
    }
    if (c.time > batchTime)
      return false;
    int32_t color = network.channelColor(id, op.channel, /*send=*/true);
    if (color < 0)
      return fail("send on channel '" + p.channels[op.channel].name +
                  "' but the channel has no route starting at this core");
    const Buffer &buffer = p.buffers[op.out];
    int64_t words = TimingModel::words(buffer.elements, buffer.dtype);
    int32_t slot = slotOf(c, id, op.out);
    Outgoing message{c.time, color, words, buffer.elements,
                     data->read(id, slot, buffer.elements)};
    c.words += words;
    c.messages += 1;
    // The transfer itself overlaps what follows.
    span(id, TracePhase::Send, c.time, c.time + timing.sendIssueCycles());
    c.time += timing.sendIssueCycles();
    c.busyTotal += timing.sendIssueCycles();
    if (op.streamed && c.streamEnd > c.time) {
      span(id, TracePhase::Receive, c.time, c.streamEnd);
      c.busyTotal += c.streamEnd - c.time;
      c.time = c.streamEnd;
    }
    ++c.pc;
    // The storage is read until the message has left the ramp.
    ArrayRef<Outgoing> queued;
    if (piece)
      queued = ArrayRef(piece->sends).drop_front(piece->coreSends);
    noteSending(c, slot,
                network.leavesRamp(id, queued, message.time, message.words));
    if (piece) {
      if (bandedCommits) {
        uint8_t bands = sendBands(c, id, message.color);
        piece->rowBandSends &= (bands & Network::InRowBand) != 0;
        piece->columnBandSends &= (bands & Network::InColumnBand) != 0;
      }
      piece->sends.push_back(std::move(message));
      piece->senders.push_back(id);
      return true;
    }
    if (Error e = commitSend(id, message)) {
      setError(id, c, toString(std::move(e)));
      return false;
    }
    return true;
  }
  case Step::Recv: {
    int32_t color = network.channelColor(id, op.channel, /*send=*/false);
    if (color < 0)
      return fail("recv on channel '" + p.channels[op.channel].name +
                  "' but the channel has no route delivering to this core");
    if (!network.hasMessage(id, color)) {
      c.status = Status::Blocked;
      c.waitChannel = op.channel;
      c.waitColor = color;
      return false;
    }
    Message msg = network.takeMessage(id, color);
    int64_t count = p.buffers[op.out].elements;
    if (msg.elements != count)
      return fail(formatv("recv on channel '{0}' into buffer '{1}' of {2} "
                          "elements got a message of {3}",
                          p.channels[op.channel].name, p.buffers[op.out].name,
                          count, msg.elements));
    int64_t start = receiveStart(id, op, msg.arrival);
    span(id, TracePhase::Wait, c.time, start);
    span(id, TracePhase::Receive, start, start + timing.receiveCycles());
    c.time = start + timing.receiveCycles();
    c.busyTotal += timing.receiveCycles();
    if (op.streamed)
      c.streamEnd = c.time + receiveOccupancy(op);
    data->write(id, slotOf(c, id, op.out), op.out, msg.data);
    break;
  }
  case Step::LoopBegin:
  case Step::Branch: {
    if (op.kind == Step::Branch)
      if (const BranchSkips::Landing *landing =
              branchSkips.lookup(c.role, c.pc, id % W, id / W)) {
        c.pc = landing->pc;
        c.instructions += landing->passed - 1;
        if (c.instructions > maxInstructions) {
          budgetExceeded(id, c, instructionBudget());
          return false;
        }
        return true;
      }
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
    if (op.kind == Step::LoopBegin) {
      // Every iteration takes at least one instruction (its loop end): a
      // count past the budget fails now rather than after running every
      // core of the grid up to it.
      if (*v > maxInstructions - c.instructions) {
        budgetExceeded(id, c,
                       formatv("repeats {0} times, more than the {1} "
                               "instructions left of --max-instructions",
                               *v, maxInstructions - c.instructions));
        return false;
      }
      c.loops.push_back({*v, 0});
    }
    break;
  }
  case Step::LoopEnd:
    if (++c.loops.back().iteration < c.loops.back().count) {
      c.pc = op.jump + 1;
      return true;
    }
    c.loops.pop_back();
    break;
  case Step::Mark: {
    MarkRecord mark{op.mark, c.time, c.compute, c.words, c.messages};
    // A batch run in pieces defers the op totals to its commit.
    if (piece)
      piece->marks.push_back(mark);
    else
      addMark(mark);
    c.lastMark = int32_t(op.mark);
    if (!traceTrack.empty() && traceTrack[id] >= 0) {
      TraceBuffer &trace = traceBuffers[traceTrack[id]];
      for (TraceSpan &done : trace.pending) {
        done.op = int32_t(op.mark);
        trace.spans.push_back(done);
      }
      trace.pending.clear();
    }
    c.compute = c.words = c.messages = 0;
    break;
  }
  }
  ++c.pc;
  return true;
}

Error Scheduler::commitSend(int32_t src, const Outgoing &o, CommitBand *band) {
  auto delivered = [&](int32_t core, int32_t color, int64_t arrival) {
    Core &dst = cores[core];
    if (dst.status != Status::Blocked || dst.waitColor != color)
      return;
    dst.status = Status::Ready;
    // Queued at the end of the receive it waits in, the earliest it can
    // send: it then sends in the batch it runs in instead of stopping for a
    // later one. Nothing it does before is seen by other cores, so sends
    // still enter the network in time order.
    const Op &recv = code[dst.role][dst.pc];
    int64_t at = receiveStart(core, recv, arrival) + timing.receiveCycles();
    ready.push(at, core, band ? band->lane : 0);
  };
  return band ? network.inject(src, o, band->serial++, band->tally, delivered)
              : network.inject(src, o, delivered);
}

Error Scheduler::commitBatch(SpinTeam *team) {
  // When every message of the batch stays in its sender's band, the bands'
  // commits touch no common core, and each band's in (y, x) order is the
  // serial order as far as its cores can tell.
  size_t sendCount = 0;
  bool byRows = true, byColumns = true;
  for (const PieceLog &log : pieceLogs) {
    sendCount += log.sends.size();
    byRows &= log.rowBandSends;
    byColumns &= log.columnBandSends;
  }
  constexpr size_t kMinParallelSends = 16;
  if (!team || (!byRows && !byColumns) || sendCount < kMinParallelSends) {
    // In (y, x) order: the pieces' sends in piece order.
    for (const PieceLog &log : pieceLogs)
      for (size_t i = 0; i < log.sends.size(); ++i) {
        prefetchSends(log, i, [](int32_t) { return true; });
        if (Error e = commitSend(log.senders[i], log.sends[i]))
          return e;
      }
    return Error::success();
  }
  int64_t firstSerial = network.reserveSerials(int64_t(sendCount));
  size_t bandCount = team->size();
  std::vector<CommitBand> bands(bandCount);
  std::vector<std::string> failures(bandCount);
  // Each band's thread goes through all the sends for its own, numbering
  // them as the serial order does (a scan per band, cheap for the few
  // threads a machine has).
  auto commitBand = [&](size_t b) {
    CommitBand &band = bands[b];
    band.lane = 1 + b;
    int64_t rowsFrom = network.firstRowOfBand(int32_t(b)) * W,
            rowsTo = network.firstRowOfBand(int32_t(b) + 1) * W;
    auto own = [&](int32_t core) {
      return byRows ? core >= rowsFrom && core < rowsTo
                    : network.columnBand(core % W) == int32_t(b);
    };
    int64_t serial = firstSerial;
    for (const PieceLog &log : pieceLogs)
      for (size_t i = 0; i < log.sends.size(); ++i, ++serial) {
        int32_t core = log.senders[i];
        if (!own(core))
          continue;
        prefetchSends(log, i, own);
        band.serial = serial;
        if (Error e = commitSend(core, log.sends[i], &band)) {
          failures[b] = toString(std::move(e));
          return;
        }
      }
  };
  team->forEach(bandCount, commitBand);
  for (size_t b = 0; b < bandCount; ++b) {
    if (!failures[b].empty())
      return err(failures[b]);
    network.add(bands[b].tally);
  }
  return Error::success();
}

Error Scheduler::deadlock() const {
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

Error Scheduler::simulate() {
  if (mode == EmulatorMode::Analytic) {
    // The ops one after another, each taking its estimate.
    opTotals.assign(p.ops.size(), OpTotals());
    int64_t end = 0;
    for (size_t k = 0; k < p.ops.size(); ++k) {
      if (__builtin_add_overflow(end, p.ops[k].estimatedCycles, &end))
        return err("the ops' cycle estimates add up to more than 2^63 "
                   "cycles (a corrupt bundle?)");
      opTotals[k].end = end;
    }
    analyticCycles = end;
    return Error::success();
  }
  assignOnHugePages(cores, size_t(N), Core());
  network.setReceiverState(cores.data(), sizeof(Core));
  for (int32_t id = 0; id < N; ++id) {
    cores[id].role = roleOf[id];
    cores[id].swapped = !swappedSlots[id].empty();
  }
  errors.assign(N, std::string());
  traceBuffers.assign(traceTracks.size(), TraceBuffer());
  doneCores = 0;
  network.reset(detail);
  opTotals.assign(p.ops.size(), OpTotals());

  // More threads than processors would only spin. A batch run in pieces
  // does not see its messages until it commits: a core that one of them
  // wakes runs in a later batch, which is exact only if the receive takes
  // it past the batch's time (a core run in turn would otherwise find the
  // message and send at that time, before the higher cores). Targets
  // whose receives cost no cycles run in turn.
  unsigned teamSize = std::min(
      threads, std::max(1u, hardware_concurrency().compute_thread_count()));
  std::optional<SpinTeam> team;
  // Batches run in pieces, their sends committed after all their cores
  // ran, wherever that is exact: 3% faster than committing each send as
  // it is issued, on one thread too.
  bool deferSends = timing.receiveCycles() > 0 && !commitInTurn;
  if (teamSize > 1 && deferSends) {
    team.emplace(teamSize);
    network.cutIntoBands(int32_t(teamSize));
  }
  bandedCommits = team.has_value();
  // Lane 0 for the pushes in turn, then one per band for its commits and
  // one per piece of a batch, so that threads queue cores at once.
  size_t bandCount = team ? team->size() : 0;
  size_t firstPieceLane = 1 + bandCount;
  ready.setLanes(firstPieceLane + (team ? kPiecesPerBand * bandCount : 1));
  for (int32_t id = 0; id < N; ++id)
    ready.push(0, id);
  std::vector<int32_t> batch;
  Progress progress(N, progressShown, progressAfter);
  while (!ready.empty()) {
    int64_t now = ready.popEarliest(batch);
    progress.update(now, doneCores);
    // Cores only touch their own state while running, so any split works.
    // A core's slice of a batch is often a few instructions: handing out a
    // batch (a microsecond or so to spinning workers) pays from some tens
    // of cores on (a full-wafer run was 3% faster at 64 than at 512).
    constexpr size_t kMinParallelBatch = 64;
    bool parallel = team && batch.size() >= kMinParallelBatch;
    if (deferSends) {
      // Two pieces per band of rows, in (y, x) order: the team member that
      // commits a band's sends when they commit by rows (SpinTeam's own
      // share) runs its cores first, so their state stays in that
      // member's cache; a member whose band has few cores then takes
      // pieces of the others'.
      pieceBounds.assign(1, 0);
      if (parallel) {
        size_t lo = 0;
        for (int32_t band = 0; band < int32_t(team->size()); ++band) {
          int64_t bandEnd = network.firstRowOfBand(band + 1) * W;
          size_t hi =
              std::lower_bound(batch.begin() + lo, batch.end(), bandEnd) -
              batch.begin();
          for (size_t k = 1; k <= kPiecesPerBand; ++k)
            pieceBounds.push_back(lo + (hi - lo) * k / kPiecesPerBand);
          lo = hi;
        }
      } else {
        pieceBounds.push_back(batch.size());
      }
      size_t pieces = pieceBounds.size() - 1;
      pieceLogs.resize(pieces);
      auto runPiece = [&](size_t k) {
        PieceLog &log = pieceLogs[k];
        log.clear();
        log.lane = firstPieceLane + k;
        size_t lo = pieceBounds[k], hi = pieceBounds[k + 1];
        for (size_t i = lo; i < hi && log.failed < 0; ++i) {
          if (i + kPrefetchAhead < hi)
            prefetchCore(batch[i + kPrefetchAhead]);
          runCore(batch[i], now, &log);
          retire(batch[i], log);
        }
      };
      if (parallel)
        team->forEach(pieces, runPiece);
      else
        runPiece(0);
      // Then in (y, x) order: errors, op marks and done counts, and the
      // sends (which may wake cores of this batch that blocked).
      for (const PieceLog &log : pieceLogs)
        if (log.failed >= 0)
          return err(errors[log.failed]);
      for (const PieceLog &log : pieceLogs) {
        for (const MarkRecord &m : log.marks)
          addMark(m);
        doneCores += log.done;
      }
      if (Error e = commitBatch(team ? &*team : nullptr))
        return e;
      continue;
    }
    // One after another in (y, x) order, each send committed as it is
    // issued. The sends still enter the network in (time, y, x) order.
    for (size_t i = 0; i < batch.size(); ++i) {
      int32_t id = batch[i];
      if (i + kPrefetchAhead < batch.size())
        prefetchCore(batch[i + kPrefetchAhead]);
      runCore(id, now, nullptr);
      if (cores[id].status == Status::Failed)
        return err(errors[id]);
      retire(id);
    }
  }
  for (const Core &c : cores)
    if (c.status != Status::Done)
      return deadlock();
  return network.checkAllReceived();
}

void Scheduler::retire(int32_t id) {
  Core &c = cores[id];
  if (c.status == Status::Ready)
    ready.push(c.time, id);
  else if (c.status == Status::Done)
    ++doneCores;
}

void Scheduler::retire(int32_t id, PieceLog &log) {
  Core &c = cores[id];
  if (c.status == Status::Failed) {
    log.failed = id;
    return;
  }
  if (c.status == Status::Ready)
    ready.push(c.time, id, log.lane);
  else if (c.status == Status::Done)
    ++log.done;
}

void Scheduler::chooseTracedCores() {
  traceTrack.assign(N, -1);
  auto name = [&](int64_t id) {
    return formatv("({0},{1})", id % W, id / W).str();
  };
  if (N <= Trace::kTraceEveryCoreLimit) {
    for (int64_t id = 0; id < N; ++id) {
      traceTrack[id] = int32_t(traceTracks.size());
      traceTracks.push_back("core " + name(id));
    }
    return;
  }
  for (size_t r = 0; r < p.roles.size(); ++r) {
    const CoreSet &cs = p.roles[r].cores;
    if (cs.x.count() == 0 || cs.y.count() == 0)
      continue;
    int64_t id = cs.y.lo * W + cs.x.lo;
    traceTrack[id] = int32_t(traceTracks.size());
    traceTracks.push_back("role " + p.roles[r].name + ", core " + name(id));
  }
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

RunStats Scheduler::stats() const {
  RunStats s;
  s.cycles = std::max(network.lastArrival(), analyticCycles);
  for (const Core &c : cores)
    s.cycles = std::max(s.cycles, c.time);
  s.seconds = double(s.cycles) / p.target.clockHz;
  s.maxSramBytesPerCore = sramBytes;
  s.maxRoutesPerCore = network.maxRoutesPerCore();
  double weightBytes = 0;
  for (const HostTensor &in : p.inputs) {
    if (!in.weight)
      continue;
    const Buffer &buffer = p.buffers[in.buffer];
    int64_t bytes = bytesOf(buffer.dtype);
    s.weightBytesPerCoreMax += buffer.elements * bytes;
    double values = double(bytes) * (splitAlong(in.layout, Axis::X) ? 1 : W) *
                    (splitAlong(in.layout, Axis::Y) ? 1 : H);
    for (int64_t extent : in.shape)
      values *= double(extent);
    weightBytes += values;
  }
  s.weightBytesPerCoreMean = weightBytes / double(W * H);
  s.kvCapacityTokens = p.kvCapacityTokens;
  s.messages = network.messages();
  s.linkWords = network.linkWords();
  s.gridHeight = H;
  s.gridWidth = W;
  if (!p.fabricRows.empty() || !p.fabricCols.empty()) {
    s.fabricRowsSpanned = p.fabricRows.empty() ? H : p.fabricRows.back() + 1;
    s.fabricColsSpanned = p.fabricCols.empty() ? W : p.fabricCols.back() + 1;
    s.deadCores = int64_t(p.target.deadCores.size());
    s.deadLinks = int64_t(p.target.deadLinks.size());
  }
  if (detail) {
    PerCoreStats &m = s.perCore.emplace();
    for (const Core &c : cores) {
      m.computeCycles.push_back(c.computeTotal);
      m.busyCycles.push_back(c.busyTotal);
    }
    for (int d = 0; d < 4; ++d) {
      m.wordsOut[d] = network.linkWordsOut()[d];
      m.wordsIn[d] = network.linkWordsIn()[d];
    }
  }
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
  return s;
}

Error Scheduler::setup() {
  if (Error e = validateProgram(p))
    return e;
  if (p.weightsOmitted && mode == EmulatorMode::Functional)
    return err("the program was compiled without its weights: it runs only "
               "in the timing and analytic modes");
  if (mode == EmulatorMode::Analytic)
    for (const OpInfo &op : p.ops)
      if (op.estimatedCycles < 0)
        return err("op '" + op.name + "' has no cycle estimate (the bundle "
                   "was written without them): it runs only in the "
                   "functional and timing modes");
  grid.posX = ringPositions(W, p.interleave);
  grid.posY = ringPositions(H, p.interleave);
  grid.orderX = ringOrder(W, p.interleave);
  grid.orderY = ringOrder(H, p.interleave);
  for (const Role &role : p.roles) {
    code.emplace_back();
    compileBody(role.body, code.back(), exprs);
    // Priced once here instead of at every core's every run of the op (in
    // the timing mode; the functional one runs the kernel anyway).
    for (Op &op : code.back())
      if (isKernel(op.kind) && op.expr < 0 && op.expr2 < 0)
        op.fixedCycles =
            timing.kernelCycles(kernelWork(p, op, {}), p.buffers[op.out].dtype);
  }
  assignOnHugePages(roleOf, size_t(N), int32_t(-1));
  for (size_t r = 0; r < p.roles.size(); ++r) {
    const CoreSet &cs = p.roles[r].cores;
    for (int64_t y = cs.y.lo; y <= cs.y.hi; y += cs.y.step)
      for (int64_t x = cs.x.lo; x <= cs.x.hi; x += cs.x.step)
        roleOf[y * W + x] = int32_t(r);
  }
  if (Error e = network.buildRouteTables())
    return e;
  if (Error e = allocate())
    return e;
  if (tracing)
    chooseTracedCores();
  return Error::success();
}

Expected<RunResult> Scheduler::run(const NDArrayMap &inputs,
                                   const RunRequest &request) {
  if (failed)
    return err("the session ended with an earlier run's error");
  position = request.position.value_or(p.position);
  if (position < 0)
    return err(formatv("position {0} is negative", position));
  if (mode != EmulatorMode::Analytic) {
    exprTables.build(exprs, grid.posX, grid.posY, position);
    branchSkips.build(code, exprTables, W, H);
  }
  bool hasData = mode == EmulatorMode::Functional;
  auto currentSlot = [&](int32_t core, int32_t buf) {
    return slotOf(core, buf);
  };
  // A KV cache read back is laid out for the program's own position.
  for (const HostTensor &out : p.outputs)
    if (out.indexDim >= 0 && position != p.position &&
        (request.outputs.empty() ||
         llvm::is_contained(request.outputs, out.name)))
      return err(formatv("output '{0}' is laid out for position {1}; it "
                         "cannot be read after a run at position {2}",
                         out.name, p.position, position));
  for (const std::string &name : request.outputs)
    if (llvm::none_of(p.outputs,
                      [&](const HostTensor &out) { return out.name == name; }))
      return err("the program has no output '" + name + "'");
  if (Error e = checkBoundInputs(p, inputs, position))
    return std::move(e);
  if (hasData)
    if (Error e = placeInputs(p, inputs, grid, *data, currentSlot,
                              /*onlyGiven=*/runs > 0, residentInputs, threads))
      return std::move(e);
  ++runs;
  if (Error e = simulate()) {
    failed = true;
    return std::move(e);
  }
  RunResult result;
  result.stats = stats();
  if (tracing) {
    result.trace.tracks = traceTracks;
    for (int32_t track : traceTrack) {
      if (track < 0)
        continue;
      const std::vector<TraceSpan> &spans = traceBuffers[track].spans;
      result.trace.spans.insert(result.trace.spans.end(), spans.begin(),
                                spans.end());
    }
  }
  if (hasData)
    result.outputs =
        readOutputs(p, grid, *data, currentSlot, request.outputs);
  return result;
}

static const char *typeName(DType dtype) {
  return dtype == DType::F16 ? "f16" : "f32";
}

Error Scheduler::adopt(
    const Scheduler &from,
    ArrayRef<std::pair<std::string, std::string>> outputsToInputs) {
  if (failed || from.failed || from.runs == 0)
    return err("a session takes over values only from a session that ran "
               "without error, before its own error");
  const Program &q = from.p;
  if (q.gridWidth != W || q.gridHeight != H || q.interleave != p.interleave ||
      q.fabricRows != p.fabricRows || q.fabricCols != p.fabricCols)
    return err(formatv("the programs do not run on the same cores ({0}x{1} "
                       "and {2}x{3}, or placed differently)",
                       q.gridHeight, q.gridWidth, H, W));
  residentInputs.resize(p.inputs.size(), false);
  for (const auto &[outName, inName] : outputsToInputs) {
    auto out = llvm::find_if(
        q.outputs, [&](const HostTensor &t) { return t.name == outName; });
    auto in = llvm::find_if(
        p.inputs, [&](const HostTensor &t) { return t.name == inName; });
    if (out == q.outputs.end() || in == p.inputs.end())
      return err(formatv("no output '{0}' to take over as input '{1}'", outName,
                         inName));
    const Buffer &src = q.buffers[out->buffer], &dst = p.buffers[in->buffer];
    bool sameLayout =
        out->shape == in->shape && out->layout.size() == in->layout.size() &&
        llvm::all_of(llvm::zip(out->layout, in->layout), [](auto pair) {
          auto [a, b] = pair;
          return a.axis == b.axis && a.blocks == b.blocks &&
                 a.balanced == b.balanced && a.parts == b.parts;
        });
    // Nothing moves: the value must already be where this program reads it.
    if (src.offsetBytes != dst.offsetBytes || src.elements != dst.elements ||
        src.dtype != dst.dtype || !sameLayout)
      return err(formatv("output '{0}' ({1} {2} values at byte {3} of each "
                         "core) is not where input '{4}' is read ({5} {6} "
                         "values at byte {7}, or another layout)",
                         outName, src.elements, typeName(src.dtype),
                         src.offsetBytes, inName, dst.elements,
                         typeName(dst.dtype), dst.offsetBytes));
    residentInputs[in - p.inputs.begin()] = true;
    if (mode != EmulatorMode::Functional)
      continue;
    for (int32_t id = 0; id < N; ++id)
      std::memcpy(data->storage(id, slotOf(id, in->buffer)),
                  from.data->storage(id, from.slotOf(id, out->buffer)),
                  size_t(src.elements * bytesOf(src.dtype)));
  }
  return Error::success();
}

} // namespace

struct Session::Impl {
  Impl(const Program &program, const EmulatorOptions &options)
      : scheduler(program, options) {}
  Scheduler scheduler;
};

Session::Session(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Session::~Session() = default;

Expected<std::unique_ptr<Session>>
Session::create(const Program &program, const EmulatorOptions &options) {
  auto impl = std::make_unique<Impl>(program, options);
  if (Error e = impl->scheduler.setup())
    return std::move(e);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Expected<RunResult> Session::run(const NDArrayMap &inputs,
                                 const RunRequest &request) {
  return impl->scheduler.run(inputs, request);
}

Error Session::adopt(
    const Session &from,
    ArrayRef<std::pair<std::string, std::string>> outputsToInputs) {
  return impl->scheduler.adopt(from.impl->scheduler, outputsToInputs);
}

Expected<RunResult> runProgram(const Program &program, const NDArrayMap &inputs,
                               const EmulatorOptions &options) {
  Expected<std::unique_ptr<Session>> session =
      Session::create(program, options);
  if (!session)
    return session.takeError();
  return (*session)->run(inputs);
}

} // namespace wafer::rt
