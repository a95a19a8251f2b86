//===- Emulator.h - The mesh emulator ---------------------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_EMULATOR_H
#define WAFER_RUNTIME_EMULATOR_H

#include "wafer/Runtime/NDArray.h"
#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wafer::rt {

enum class EmulatorMode {
  /// Element data and time: outputs and cycles.
  Functional,
  /// Time only: the same programs without element data (no inputs placed,
  /// no SRAM images, no outputs), and exactly the functional cycles.
  Timing,
  /// Nothing runs: each op's cycles are the compiler's closed-form estimate
  /// (OpInfo::estimatedCycles), the ops one after another.
  Analytic,
};

struct EmulatorOptions {
  /// Host threads; results and cycles do not depend on it.
  unsigned threads = 1;
  EmulatorMode mode = EmulatorMode::Functional;
  /// Record what the cores do, for writeChromeTrace.
  bool trace = false;
  /// Per-core maps in the stats (RunStats::perCore).
  bool detail = false;
  /// A progress line on stderr for runs longer than `progressAfterMs`
  /// milliseconds (only when stderr is a terminal).
  bool progress = true;
  int64_t progressAfterMs = 1000;
  /// Budgets that end a runaway program with an error naming the core and
  /// the op: a core's time in cycles, and the instructions one core runs.
  int64_t maxCycles = int64_t(1) << 40;
  int64_t maxInstructions = int64_t(1) << 27;
  /// Runs each batch's cores one after another, committing each send as
  /// it is issued, on one thread: the reference that running batches in
  /// pieces and committing their sends after them (the default wherever
  /// that is exact) must match, for tests.
  bool commitInTurn = false;
};

/// Host threads beyond this are not used (and a larger request is no error).
constexpr unsigned kMaxEmulatorThreads = 256;

/// What a core was doing over a span of cycles.
enum class TracePhase : uint8_t { Compute, Send, Receive, Wait };

struct TraceSpan {
  int32_t track = 0;
  TracePhase phase = TracePhase::Compute;
  /// The mesh op (index into Program::ops) the span belongs to.
  int32_t op = 0;
  int64_t start = 0, end = 0;
};

/// The cores a run traced and their spans. Grids of up to
/// kTraceEveryCoreLimit cores get one track per core; bigger grids one
/// track per role, following the role's first core in (y, x) order, so a
/// trace stays small whatever the grid.
struct Trace {
  static constexpr int64_t kTraceEveryCoreLimit = 256;
  /// Track names ("core (x,y)" or "role NAME, core (x,y)").
  std::vector<std::string> tracks;
  std::vector<TraceSpan> spans;
};

struct OpStats {
  std::string name, kind, algorithm;
  /// Makespan of the op: latest core's end mark minus the previous op's.
  int64_t cycles = 0;
  /// Largest per-core time spent in local kernels within the op.
  int64_t computeCycles = 0;
  /// 32-bit words the op injected into the fabric, summed over cores.
  int64_t wordsSent = 0;
  int64_t messages = 0;
};

/// Per-core maps, row-major over the grid (index y * width + x).
struct PerCoreStats {
  /// Cycles in local kernels.
  std::vector<int64_t> computeCycles;
  /// Cycles the core was busy: kernels, send issue and message handling
  /// (the rest of its time it waited).
  std::vector<int64_t> busyCycles;
  /// 32-bit words that left (out) or entered (in) the core's router over
  /// each link, indexed [direction - 1][core] for north, east, south, west.
  std::vector<int64_t> wordsOut[4], wordsIn[4];
};

struct RunStats {
  int64_t cycles = 0;
  double seconds = 0;
  int64_t maxSramBytesPerCore = 0;
  int64_t maxRoutesPerCore = 0;
  /// The SRAM a core gives the model's weights and constants: the buffers
  /// every core allocates (tiles padded to whole blocks), and the mean of
  /// the values the cores actually hold (replicas counted, padding not).
  int64_t weightBytesPerCoreMax = 0;
  double weightBytesPerCoreMean = 0;
  /// From the program (-1: no KV cache).
  int64_t kvCapacityTokens = -1;
  /// Messages injected into the fabric.
  int64_t messages = 0;
  /// 32-bit words summed over every link a message crossed (fabric load).
  int64_t linkWords = 0;
  std::vector<OpStats> ops;
  /// With EmulatorOptions::detail; the grid's shape for reading it.
  std::optional<PerCoreStats> perCore;
  int64_t gridHeight = 0, gridWidth = 0;
  /// Fabric rows and columns the grid spans, and the target's defects it
  /// was placed around (all 0 for the identity placement).
  int64_t fabricRowsSpanned = 0, fabricColsSpanned = 0;
  int64_t deadCores = 0, deadLinks = 0;
};

llvm::json::Value statsToJSON(const RunStats &stats);

struct RunResult {
  NDArrayMap outputs;
  RunStats stats;
  /// With EmulatorOptions::trace.
  Trace trace;
};

/// Writes a run as Chrome trace-event JSON (chrome://tracing, Perfetto):
/// an "ops" track with one span per mesh op (their cycles as in the stats,
/// back to back), then the traced cores' compute, send, receive and wait
/// spans. Times are microseconds at the target's clock; every span's args
/// carry its cycles.
void writeChromeTrace(const Program &program, const RunResult &result,
                      llvm::raw_ostream &os);

/// One run of a sequence of runs in one trace (a generation's prefill and
/// decode steps): it becomes a process named `label` whose spans start at
/// `startCycle` of the sequence's time (their args keep the run's own
/// cycles).
struct TracedRun {
  std::string label;
  const Program *program = nullptr;
  const RunResult *result = nullptr;
  int64_t startCycle = 0;
};

/// Writes several runs as one Chrome trace, one process (pid) per run, in
/// the order given.
void writeChromeTrace(llvm::ArrayRef<TracedRun> runs, llvm::raw_ostream &os);

/// Runs the program: places the inputs (user inputs by name; weights from
/// the bundle), executes every core, gathers the outputs (in the timing
/// mode: executes every core without data; no inputs, no outputs). A missing
/// input or one of the wrong shape or dtype, deadlock, a message with no
/// route, a route table overflow and SRAM overflow are one-line errors
/// naming the tensor, or the cores and colors involved. A session of one run.
llvm::Expected<RunResult> runProgram(const Program &program,
                                     const NDArrayMap &inputs,
                                     const EmulatorOptions &options);

/// What one run of a session does beyond placing its inputs.
struct RunRequest {
  /// The value of the expression variable `t` (a decode step's position);
  /// none: Program::position.
  std::optional<int64_t> position;
  /// The outputs to read back, by name (empty: every output).
  std::vector<std::string> outputs;
};

/// Runs one program again and again on the same cores: every core's buffers
/// keep their values from one run to the next, as SRAM would (how a
/// generation keeps its KV caches on the chip between decode steps). Each
/// run starts at cycle 0 with an empty network, and its stats are its own.
/// The program must outlive the session.
class Session {
public:
  /// Checks the program and builds what every run shares (role code, route
  /// tables, storage); errors as runProgram's.
  static llvm::Expected<std::unique_ptr<Session>>
  create(const Program &program, const EmulatorOptions &options);
  ~Session();

  /// The first run places every input as runProgram does; later runs place
  /// only the user inputs given (token ids, caches, ...), every other
  /// buffer keeps what the cores hold. An output laid out for the
  /// program's position (a KV cache read back from its slots) cannot be
  /// read after a run at another position. After a failed run the session
  /// refuses further runs.
  llvm::Expected<RunResult> run(const NDArrayMap &inputs,
                                const RunRequest &request = {});

  /// Takes over values another session's program left on the same cores
  /// (a prefill's KV caches handed to the decode program): each pair names
  /// an output of `from`'s program and an input of this one, which must be
  /// one place in SRAM (the same byte offset, elements, type and layout on
  /// a grid of the same shape and placement); this session's runs then
  /// read the value there and never place that input. Nothing moves on the
  /// chip, so nothing is charged. `from` must have run without error.
  llvm::Error
  adopt(const Session &from,
        llvm::ArrayRef<std::pair<std::string, std::string>> outputsToInputs);

private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace wafer::rt

#endif // WAFER_RUNTIME_EMULATOR_H
