//===- BenchCommand.cpp - wafer-run bench ---------------------------------===//
//
// One process, the cartesian product of grids and algorithms, one table (as
// llama-bench prints): the model is imported once and every configuration
// compiles a copy and runs it in the timing mode, which gives the
// functional mode's cycles without element data, or adds up its estimates
// (--mode analytic).
//
//===----------------------------------------------------------------------===//
#include "BenchCommand.h"
#include "Compile.h"

#include "wafer/Dialect/Core/CoreOps.h"
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace wafer;

namespace {

struct Row {
  CompileOptions compile;
  std::optional<rt::RunStats> stats;
  /// Token ids one run embeds (0: the model embeds none).
  int64_t tokens = 0;
  double wallSeconds = 0;
  std::string error;
};

/// The token ids a program's embedding gather takes per run.
int64_t tokensPerRun(const rt::Program &program) {
  for (const rt::HostTensor &in : program.inputs)
    if (!in.gatherIds.empty()) {
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < in.sourceShape.size(); ++d)
        rows *= in.sourceShape[d];
      return rows;
    }
  return 0;
}

Row measure(mlir::ModuleOp imported, const CompileOptions &compile,
            const rt::EmulatorOptions &emulator) {
  Row row;
  row.compile = compile;
  auto start = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module(imported.clone());
  Expected<rt::Program> program =
      compileModule(*module, compile, /*weights=*/false);
  if (!program) {
    row.error = toString(program.takeError());
    return row;
  }
  row.tokens = tokensPerRun(*program);
  Expected<rt::RunResult> result = rt::runProgram(*program, {}, emulator);
  if (!result) {
    row.error = toString(result.takeError());
    return row;
  }
  row.stats = result->stats;
  row.wallSeconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return row;
}

/// The algorithm `--gemm auto` chose for a row that ran (that of its
/// first mesh.gemm), or "" for other rows.
std::string chosenGemm(const Row &row) {
  if (row.compile.gemm != "auto" || !row.stats)
    return "";
  for (const rt::OpStats &op : row.stats->ops)
    if (op.kind == "gemm")
      return op.algorithm;
  return "";
}

/// The --gemm of a row, with the algorithm auto chose ("auto: cannon").
std::string gemmText(const Row &row) {
  std::string chosen = chosenGemm(row);
  return chosen.empty() ? row.compile.gemm : row.compile.gemm + ": " + chosen;
}

json::Value rowJSON(const Row &row) {
  const CompileOptions &c = row.compile;
  json::Object o{{"grid", c.grid},
                 {"gemm", compileOptionText(c, "gemm")},
                 {"allreduce", compileOptionText(c, "allreduce")},
                 {"ktree_k", c.ktreeK},
                 {"dtype", compileOptionText(c, "dtype")},
                 {"kv", compileOptionText(c, "kv")},
                 {"prefill_heads", compileOptionText(c, "prefill-heads")}};
  if (!row.stats) {
    o["error"] = row.error;
    return o;
  }
  if (std::string chosen = chosenGemm(row); !chosen.empty())
    o["gemm_chosen"] = chosen;
  o["cycles"] = row.stats->cycles;
  o["seconds"] = row.stats->seconds;
  if (row.tokens)
    o["tokens_per_second"] = row.tokens / row.stats->seconds;
  o["max_sram_bytes_per_core"] = row.stats->maxSramBytesPerCore;
  o["max_routes_per_core"] = row.stats->maxRoutesPerCore;
  o["wall_seconds"] = row.wallSeconds;
  return o;
}

void printTable(ArrayRef<Row> rows, const BenchOptions &options) {
  outs() << "| grid | gemm | allreduce | k | dtype | kv | prefill heads | "
            "cycles | modeled s | tokens/s | SRAM/core B | routes/core | wall "
            "s |\n"
         << "|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row &row : rows) {
    const CompileOptions &c = row.compile;
    outs() << formatv("| {0} | {1} | {2} | {3} | {4} | {5} | {6} | ", c.grid,
                      gemmText(row), compileOptionText(c, "allreduce"),
                      c.ktreeK, compileOptionText(c, "dtype"),
                      compileOptionText(c, "kv"),
                      compileOptionText(c, "prefill-heads"));
    if (!row.stats) {
      outs() << "error: " << row.error << " | | | | | |\n";
      continue;
    }
    const rt::RunStats &s = *row.stats;
    std::string rate = row.tokens ? formatRate(row.tokens / s.seconds) : "-";
    outs() << formatv("{0} | {1:e3} | {2} | {3} | {4} | {5:f2} |\n", s.cycles,
                      s.seconds, rate, s.maxSramBytesPerCore,
                      s.maxRoutesPerCore, row.wallSeconds);
  }
  bool analytic = options.emulator.mode == rt::EmulatorMode::Analytic;
  outs() << formatv("\n{0}: {1} configurations on {2}, {3}\n", options.model,
                    rows.size(), options.target,
                    analytic ? "analytic mode (the ops' closed-form cycle "
                               "estimates, nothing run)"
                             : "timing mode (exact cycles, no element data)");
}

} // namespace

static Error benchError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Error wafer::validateBenchOptions(const BenchOptions &options) {
  for (const std::string &grid : options.grids) {
    auto [h, w] = StringRef(grid).split('x');
    int64_t height, width;
    if (grid.empty())
      return benchError(options.grids.size() == 1
                            ? "--grid HxW[,HxW...] is required"
                            : "--grid: an empty item in the list of grids "
                              "(HxW[,HxW...])");
    if (h.getAsInteger(10, height) || w.getAsInteger(10, width) ||
        height < 1 || width < 1)
      return benchError("grid '" + grid + "' is not of the form HxW (at least 1x1)");
  }
  CompileOptions scratch;
  for (auto [name, values] :
       {std::pair{"gemm", &options.gemms},
        std::pair{"allreduce", &options.allreduces},
        std::pair{"dtype", &options.dtypes}, std::pair{"kv", &options.kvs},
        std::pair{"prefill-heads", &options.prefillHeads}})
    for (const std::string &value : *values)
      if (Error e = parseCompileOption(scratch, name, value))
        return e;
  for (int64_t k : options.ktreeKs)
    if (Error e = checkKtreeK(k))
      return e;
  return Error::success();
}

int wafer::runBenchCommand(const BenchOptions &options) {
  mlir::MLIRContext context;
  context.loadDialect<tfm::TfmDialect, mesh::MeshDialect, core::CoreDialect,
                      mlir::func::FuncDialect>();
  auto imported = importOnnxFile(options.model, &context, options.import);
  if (!imported) {
    errs() << "error: " << toString(imported.takeError()) << "\n";
    return 1;
  }
  std::vector<Row> rows;
  int64_t failed = 0;
  for (const std::string &grid : options.grids)
    for (const std::string &gemm : options.gemms)
      for (const std::string &allreduce : options.allreduces)
        for (int64_t k : options.ktreeKs)
          for (const std::string &dtype : options.dtypes)
            for (const std::string &kv : options.kvs)
              for (const std::string &heads : options.prefillHeads) {
                CompileOptions compile;
                compile.grid = grid;
                compile.target = options.target;
                compile.ktreeK = k;
                // validateBenchOptions accepted every value.
                cantFail(parseCompileOption(compile, "gemm", gemm));
                cantFail(parseCompileOption(compile, "allreduce", allreduce));
                cantFail(parseCompileOption(compile, "dtype", dtype));
                cantFail(parseCompileOption(compile, "kv", kv));
                cantFail(parseCompileOption(compile, "prefill-heads", heads));
                rows.push_back(measure(**imported, compile, options.emulator));
                failed += !rows.back().stats;
                if (options.json)
                  outs() << formatv("{0}", rowJSON(rows.back())) << "\n";
              }
  if (!options.json)
    printTable(rows, options);
  if (!failed)
    return 0;
  // Each error is in its row; stderr says that there are some.
  errs() << formatv("error: {0}: {1} of {2} configurations failed (their "
                    "rows give the errors)\n",
                    options.model, failed, rows.size());
  return 1;
}
