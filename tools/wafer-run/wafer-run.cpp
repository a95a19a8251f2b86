//===- wafer-run.cpp - Compile a model and run it on the mesh emulator ----===//
//
//   wafer-run run MODEL.onnx|BUNDLE --grid HxW [--target wse2|FILE.json]
//             [--gemm meshgemm|cannon|summa|allgather]
//             [--allreduce ktree|pipeline|ring] [--ktree-k K] [--dtype f32|f16]
//             [--kv shift|concat] [--phase prefill|decode]
//             --inputs in.npz --outputs out.npz
//             [--stats stats.json] [--threads N] [--input-shape NAME=1x16]
//   wafer-run eval MODULE.mlir|MODEL.onnx --inputs in.npz --outputs out.npz
//             [--input-shape NAME=1x16]
//
// Every failure is one line `error: <where>: <what>` and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "EvalCommand.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Emulator.h"
#include "wafer/Support/ToolSupport.h"
#include "wafer/Target/BundleEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace wafer;

static cl::SubCommand runCommand("run", "Compile (if ONNX) and emulate a model");

static cl::SubCommand evalCommand(
    "eval", "Evaluate a tfm module (or ONNX model) on the host reference");

static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("MODEL.onnx | BUNDLE | MODULE.mlir"),
                                      cl::sub(runCommand), cl::sub(evalCommand));
static cl::list<std::string> inputShapes(
    "input-shape", cl::desc("Static shape for an ONNX graph input, NAME=1x16"),
    cl::sub(runCommand), cl::sub(evalCommand));
static cl::opt<std::string> gridOption("grid", cl::desc("Core grid HxW"),
                                       cl::sub(runCommand));
static cl::opt<std::string> targetOption(
    "target", cl::desc("Target preset (wse2, wse3) or JSON file"),
    cl::init("wse2"), cl::sub(runCommand));
static cl::opt<std::string> gemmOption(
    "gemm",
    cl::desc("GEMM algorithm: meshgemm, cannon, summa, allgather"),
    cl::init("meshgemm"), cl::sub(runCommand));
static cl::opt<std::string> allreduceOption(
    "allreduce", cl::desc("GEMV allreduce: ktree, pipeline, ring"),
    cl::init("ktree"), cl::sub(runCommand));
static cl::opt<int64_t> ktreeOption("ktree-k",
                                    cl::desc("K of the K-tree allreduce"),
                                    cl::init(2), cl::sub(runCommand));
static cl::opt<std::string> dtypeOption(
    "dtype",
    cl::desc("Element type on the grid: f32, or f16 (storage, link words "
             "and MAC rate of f16; inputs and outputs stay f32)"),
    cl::init("f32"), cl::sub(runCommand));
static cl::opt<std::string> kvOption(
    "kv",
    cl::desc("KV cache policy of decode graphs: shift (balanced upward "
             "shift, paper section 4.3) or concat (the baseline)"),
    cl::init("shift"), cl::sub(runCommand));
static cl::opt<std::string> phaseOption(
    "phase",
    cl::desc("What one run of the model is, for tokens/s per request: "
             "prefill (every token id is a token) or decode (one token); "
             "default: decode when the token ids hold one token"),
    cl::sub(runCommand));
static cl::opt<std::string> inputsPath("inputs", cl::desc("Inputs .npz"),
                                       cl::sub(runCommand),
                                       cl::sub(evalCommand));
static cl::opt<std::string> outputsPath("outputs", cl::desc("Outputs .npz"),
                                        cl::sub(runCommand),
                                        cl::sub(evalCommand));
static cl::opt<std::string> statsPath("stats", cl::desc("Statistics JSON"),
                                      cl::sub(runCommand));
static cl::opt<unsigned> threadsOption(
    "threads", cl::desc("Host threads (results do not depend on it)"),
    cl::init(1), cl::sub(runCommand));

static int fail(const Twine &message) {
  errs() << "error: " << message << "\n";
  return 1;
}

/// "file: node 'name'" for locations the importer made, else the file.
static std::string describe(mlir::Location loc) {
  std::string node, file;
  loc->walk([&](mlir::Location inner) {
    if (auto named = dyn_cast<mlir::NameLoc>(inner); named && node.empty())
      node = named.getName().str();
    if (auto fileLoc = dyn_cast<mlir::FileLineColLoc>(inner); file.empty() && fileLoc)
      file = fileLoc.getFilename().str();
    return mlir::WalkResult::advance();
  });
  if (!node.empty())
    return file + ": node '" + node + "'";
  return file;
}

/// Compiles an ONNX model to a runtime program.
static Expected<rt::Program> compileOnnx(StringRef path) {
  mlir::MLIRContext context;
  context.loadDialect<tfm::TfmDialect, mesh::MeshDialect, core::CoreDialect,
                      mlir::func::FuncDialect>();
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
        firstError.empty())
      firstError = describe(diag.getLocation()) + ": " + diag.str();
    return mlir::success();
  });
  Expected<OnnxImportOptions> options = importOptions(inputShapes, inputsPath);
  if (!options)
    return options.takeError();
  auto module = importOnnxFile(path, &context, *options);
  if (!module)
    return module.takeError();
  if (gridOption.empty())
    return createStringError(inconvertibleErrorCode(),
                             "--grid HxW is required to compile a model");
  mlir::PassManager pm(&context);
  buildCompilePipeline(pm, {gridOption, targetOption, gemmOption,
                            allreduceOption, ktreeOption, dtypeOption,
                            kvOption});
  if (mlir::failed(pm.run(**module)))
    return createStringError(inconvertibleErrorCode(),
                             firstError.empty() ? "compilation failed"
                                                : firstError);
  return buildRuntimeProgram(**module);
}

static Error optionError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Checks every option of `run` before any work: values in range, and for a
/// bundle no compile options (it was compiled with its own).
static Error validateRunOptions(StringRef path, bool isBundle) {
  if (isBundle) {
    const cl::Option *compileOptions[] = {
        &gridOption,  &targetOption, &gemmOption, &allreduceOption,
        &ktreeOption, &dtypeOption,  &kvOption,   std::addressof(inputShapes)};
    for (const cl::Option *option : compileOptions)
      if (option->getNumOccurrences())
        return optionError(path + ": --" + option->ArgStr +
                           " does not apply to a bundle (it is compiled "
                           "with its own options)");
  }
  if (gridOption.getNumOccurrences()) {
    auto [h, w] = StringRef(gridOption).split('x');
    int64_t height, width;
    if (h.getAsInteger(10, height) || w.getAsInteger(10, width))
      return optionError("grid '" + gridOption + "' is not of the form HxW");
    if (height < 1 || width < 1)
      return optionError("grid " + gridOption +
                         " must have at least one core per axis");
  }
  if (!mesh::symbolizeGemmAlgorithm(gemmOption))
    return optionError("unknown gemm algorithm '" + gemmOption +
                       "' (known: meshgemm, cannon, summa, allgather)");
  if (!mesh::symbolizeAllreduceAlgorithm(allreduceOption))
    return optionError("unknown allreduce algorithm '" + allreduceOption +
                       "' (known: ktree, pipeline, ring)");
  if (ktreeOption < 0 || ktreeOption > 64)
    return optionError("--ktree-k must be between 0 (chosen per GEMV) and 64, "
                       "got " + Twine(int64_t(ktreeOption)));
  if (dtypeOption != "f32" && dtypeOption != "f16")
    return optionError("unknown dtype '" + dtypeOption + "' (known: f32, f16)");
  if (!mesh::symbolizeKvPolicy(kvOption))
    return optionError("unknown kv cache policy '" + kvOption +
                       "' (known: shift, concat)");
  if (!phaseOption.empty() && phaseOption != "prefill" &&
      phaseOption != "decode")
    return optionError("unknown phase '" + phaseOption +
                       "' (known: prefill, decode)");
  if (threadsOption < 1 || threadsOption > 1024)
    return optionError("--threads must be between 1 and 1024, got " +
                       Twine(unsigned(threadsOption)));
  return Error::success();
}

static Expected<rt::Program> loadModel(StringRef path) {
  auto file = openInputFile(path);
  if (!file)
    return file.takeError();
  bool isBundle = rt::looksLikeBundle((*file)->getBuffer());
  if (Error error = validateRunOptions(path, isBundle))
    return std::move(error);
  if (isBundle)
    return rt::deserializeBundle((*file)->getBuffer(), path);
  return compileOnnx(path);
}

/// The phase a run stands for and the tokens it yields: a prefill the
/// number of token ids, a decode step one token.
struct PhaseTokens {
  StringRef phase;
  int64_t tokens = 1;
};

/// None for a model without token ids when no --phase was given.
static Expected<std::optional<PhaseTokens>>
phaseTokens(const rt::Program &program, const rt::NDArrayMap &inputs) {
  int64_t ids = -1;
  for (const rt::HostTensor &in : program.inputs)
    if (!in.gatherIds.empty())
      if (auto it = inputs.find(in.gatherIds); it != inputs.end())
        ids = it->second.elements();
  std::string phase = phaseOption;
  if (phase.empty() && ids < 0)
    return std::nullopt;
  if (phase.empty())
    phase = ids == 1 ? "decode" : "prefill";
  if (phase != "prefill" && phase != "decode")
    return createStringError(inconvertibleErrorCode(),
                             "unknown phase '" + phase +
                                 "' (known: prefill, decode)");
  if (phase == "decode")
    return PhaseTokens{"decode", 1};
  if (ids < 1)
    return createStringError(inconvertibleErrorCode(),
                             "--phase prefill needs a model that embeds "
                             "token ids");
  return PhaseTokens{"prefill", ids};
}

static void printReport(const rt::Program &program, const rt::RunStats &stats,
                        const std::optional<PhaseTokens> &phase) {
  outs() << formatv("grid {0}x{1} on {2}: {3} cycles = {4:e3} s at {5:e2} Hz\n",
                    program.gridHeight, program.gridWidth, program.target.name,
                    stats.cycles, stats.seconds, program.target.clockHz);
  outs() << formatv("max SRAM per core {0} bytes (of {1}), max routes per "
                    "core {2} (of {3})\n",
                    stats.maxSramBytesPerCore, program.target.sramBytes,
                    stats.maxRoutesPerCore, program.target.routesPerCore);
  if (stats.kvCapacityTokens >= 0)
    outs() << formatv("KV caches take {0} more decode tokens before a core's "
                      "SRAM overflows\n",
                      stats.kvCapacityTokens);
  if (phase)
    outs() << formatv("{0}: {1} token(s) per run, {2:f1} tokens/s per "
                      "request\n",
                      phase->phase, phase->tokens,
                      phase->tokens / stats.seconds);
  for (const rt::OpStats &op : stats.ops)
    outs() << formatv("  {0,-24} {1,-5} {2,-15} {3,9} cycles ({4} compute)\n",
                      op.name, op.kind, op.algorithm, op.cycles,
                      op.computeCycles);
}

static int run() {
  Expected<rt::Program> program = loadModel(modelPath);
  if (!program)
    return fail(toString(program.takeError()));
  rt::NDArrayMap inputs;
  if (!inputsPath.empty()) {
    Expected<rt::NDArrayMap> read = rt::readNpz(inputsPath);
    if (!read)
      return fail(toString(read.takeError()));
    inputs = std::move(*read);
  }
  Expected<std::optional<PhaseTokens>> phase = phaseTokens(*program, inputs);
  if (!phase)
    return fail(toString(phase.takeError()));
  Expected<rt::RunResult> result =
      rt::runProgram(*program, inputs, {threadsOption});
  if (!result)
    return fail(toString(result.takeError()));
  if (!outputsPath.empty())
    if (Error error = rt::writeNpz(outputsPath, result->outputs))
      return fail(toString(std::move(error)));
  if (!statsPath.empty()) {
    std::error_code ec;
    raw_fd_ostream os(statsPath, ec, sys::fs::OF_Text);
    if (ec)
      return fail(statsPath + ": cannot write: " + ec.message());
    json::Value stats = rt::statsToJSON(result->stats);
    if (*phase) {
      json::Object *object = stats.getAsObject();
      object->try_emplace("phase", (*phase)->phase);
      object->try_emplace("tokens", (*phase)->tokens);
      object->try_emplace("tokens_per_second",
                          (*phase)->tokens / result->stats.seconds);
    }
    os << formatv("{0:2}", stats) << "\n";
  }
  printReport(*program, result->stats, *phase);
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  hideForeignOptions();
  if (!parseCommandLine(argc, argv, "wafer-run: compile and emulate models\n"))
    return 1;
  if ((runCommand || evalCommand) && modelPath.empty())
    return fail("expected a model: wafer-run run|eval MODEL ... (see --help)");
  if (runCommand)
    return run();
  if (evalCommand)
    return runEvalCommand(modelPath, inputShapes, inputsPath, outputsPath);
  return fail("expected a command: wafer-run run|eval MODEL ... (see --help)");
}
