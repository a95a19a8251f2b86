//===- Emulator.h - The mesh emulator ---------------------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_EMULATOR_H
#define WAFER_RUNTIME_EMULATOR_H

#include "wafer/Runtime/NDArray.h"
#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wafer::rt {

enum class EmulatorMode {
  /// Element data and time: outputs and cycles.
  Functional,
  /// Time only: the same programs without element data (no inputs placed,
  /// no SRAM images, no outputs), and exactly the functional cycles.
  Timing,
};

struct EmulatorOptions {
  /// Host threads; results and cycles do not depend on it.
  unsigned threads = 1;
  EmulatorMode mode = EmulatorMode::Functional;
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

struct RunStats {
  int64_t cycles = 0;
  double seconds = 0;
  int64_t maxSramBytesPerCore = 0;
  int64_t maxRoutesPerCore = 0;
  /// From the program (-1: no KV cache).
  int64_t kvCapacityTokens = -1;
  /// Messages injected into the fabric.
  int64_t messages = 0;
  /// 32-bit words summed over every link a message crossed (fabric load).
  int64_t linkWords = 0;
  std::vector<OpStats> ops;
};

llvm::json::Value statsToJSON(const RunStats &stats);

struct RunResult {
  NDArrayMap outputs;
  RunStats stats;
};

/// Runs the program: places the inputs (user inputs by name; weights from
/// the bundle), executes every core, gathers the outputs (in the timing
/// mode: executes every core without data; no inputs, no outputs). A missing input or
/// one of the wrong shape or dtype, deadlock, a message with no route, a
/// route table overflow and SRAM overflow are one-line errors naming the
/// tensor, or the cores and colors involved.
llvm::Expected<RunResult> runProgram(const Program &program,
                                     const NDArrayMap &inputs,
                                     const EmulatorOptions &options);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_EMULATOR_H
