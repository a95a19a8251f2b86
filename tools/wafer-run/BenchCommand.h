//===- BenchCommand.h - wafer-run bench -------------------------*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_BENCHCOMMAND_H
#define WAFER_TOOLS_WAFER_RUN_BENCHCOMMAND_H

#include "wafer/Import/OnnxImporter.h"
#include "wafer/Runtime/Emulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wafer {

struct BenchOptions {
  std::string model;
  OnnxImportOptions import;
  std::string target = "wse2";
  /// The axes of the cartesian product (each at least one value).
  std::vector<std::string> grids, gemms, allreduces, dtypes, kvs, prefillHeads;
  std::vector<int64_t> ktreeKs;
  rt::EmulatorOptions emulator;
  /// One JSON object per configuration instead of the Markdown table.
  bool json = false;
};

/// Checks every value of every axis (before the first configuration runs).
llvm::Error validateBenchOptions(const BenchOptions &options);

/// Runs `wafer-run bench`: imports the model once, then compiles and runs
/// every combination of the axes in the timing mode (exact cycles, no data)
/// or the analytic mode (`emulator.mode`), and prints one row per
/// configuration. A configuration that does not
/// compile or run gets its error in the row; the exit code is 1 when any
/// did. Returns the exit code.
int runBenchCommand(const BenchOptions &options);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_BENCHCOMMAND_H
