//===- wafer-run.cpp - Compile a model and run it on the mesh emulator ----===//
//
//   wafer-run run MODEL.onnx|BUNDLE --grid HxW [--target wse2|FILE.json]
//             [--gemm meshgemm|cannon|summa|allgather]
//             [--allreduce ktree|pipeline|ring] [--ktree-k K] [--dtype f32|f16]
//             [--kv shift|concat] [--phase prefill|decode]
//             --inputs in.npz --outputs out.npz
//             [--stats stats.json] [--threads N] [--input-shape NAME=1x16]
//             [--dim-param NAME=N] [--layers N]
//   wafer-run eval MODULE.mlir|MODEL.onnx --inputs in.npz --outputs out.npz
//             [--input-shape NAME=1x16] [--dim-param NAME=N]
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
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
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
static cl::list<std::string> dimParams(
    "dim-param",
    cl::desc("Value of a named dynamic dimension of the ONNX graph's inputs, "
             "NAME=N (every input that has it; repeat for several names)"),
    cl::sub(runCommand), cl::sub(evalCommand));
static cl::opt<int64_t> layersOption(
    "layers",
    cl::desc("Compile only the first N decoder layers; the report adds the "
             "time per layer and the whole model's, extrapolated"),
    cl::init(0), cl::sub(runCommand));
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
static cl::opt<std::string> saveBundlePath(
    "save-bundle",
    cl::desc("Also write the compiled program bundle to this file (run it "
             "again with `wafer-run run FILE`)"),
    cl::sub(runCommand));
static cl::opt<std::string> modeOption(
    "mode",
    cl::desc("functional (numbers and time, the default) or timing (time "
             "only: no element data, the same cycles, far less memory)"),
    cl::init("functional"), cl::sub(runCommand));
static cl::opt<std::string> tracePath(
    "trace",
    cl::desc("Write a Chrome trace (chrome://tracing, Perfetto) of the run: "
             "per op, and per core (per role on grids over 1024 cores) "
             "compute, send, receive and wait"),
    cl::sub(runCommand));
static cl::opt<bool> statsDetail(
    "stats-detail",
    cl::desc("Add per-core maps to the stats: compute and busy cycles, link "
             "words in and out per direction (python3 -m wafer.plot draws "
             "them)"),
    cl::sub(runCommand));
static cl::opt<int64_t> maxCyclesOption(
    "max-cycles",
    cl::desc("End the run with an error when a core's time passes this many "
             "cycles (a runaway program)"),
    cl::init(rt::EmulatorOptions().maxCycles), cl::sub(runCommand));
static cl::opt<int64_t> maxInstructionsOption(
    "max-instructions",
    cl::desc("End the run with an error when a core runs more instructions"),
    cl::init(rt::EmulatorOptions().maxInstructions), cl::sub(runCommand));
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

/// What --layers compiled: N of the model's L layers, and the names of the
/// ops outside the layers (from tfm-keep-layers).
struct LayerSubset {
  int64_t layers = 0, modelLayers = 0;
  StringSet<> nonLayerOps;
};

/// Whether `imported` fits the memory of an n x n grid: the pipeline up to
/// mesh-check-memory on a copy.
static bool fitsSquare(mlir::ModuleOp imported, int64_t n,
                       CompileOptions options) {
  mlir::OwningOpRef<mlir::ModuleOp> copy(imported.clone());
  options.grid = formatv("{0}x{0}", n).str();
  options.lower = false;
  mlir::PassManager pm(imported.getContext());
  buildCompilePipeline(pm, options);
  return mlir::succeeded(pm.run(*copy));
}

/// "; the smallest square grid it fits is NxN" for a model that does not
/// fit `grid`: doubling, then bisection, up to the fabric's smaller side
/// (assuming the bytes per core do not grow with the grid).
static std::string smallestSquareGrid(mlir::ModuleOp imported,
                                      const CompileOptions &options) {
  Expected<rt::Target> target = rt::loadTarget(options.target);
  int64_t height = 0, width = 0;
  if (!target || StringRef(options.grid).split('x').first.getAsInteger(10, height) ||
      StringRef(options.grid).split('x').second.getAsInteger(10, width)) {
    consumeError(target.takeError());
    return "";
  }
  int64_t limit = std::min(target->fabricHeight, target->fabricWidth);
  int64_t fails = std::max(height, width), fits = 0;
  for (int64_t n = std::min(2 * fails, limit); n > fails;
       n = std::min(2 * n, limit)) {
    if (fitsSquare(imported, n, options)) {
      fits = n;
      break;
    }
    fails = n;
  }
  if (!fits)
    return formatv("; it fits no square grid up to {0}x{0} (the fabric of "
                   "target '{1}')",
                   limit, target->name)
        .str();
  while (fits - fails > 1) {
    int64_t mid = (fails + fits) / 2;
    (fitsSquare(imported, mid, options) ? fits : fails) = mid;
  }
  return formatv("; the smallest square grid it fits is {0}x{0}", fits).str();
}

/// Compiles an ONNX model to a runtime program.
static Expected<rt::Program> compileOnnx(StringRef path, LayerSubset &subset) {
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
  Expected<OnnxImportOptions> options =
      importOptions(inputShapes, dimParams, inputsPath);
  if (!options)
    return options.takeError();
  auto module = importOnnxFile(path, &context, *options);
  if (!module)
    return module.takeError();
  if (gridOption.empty())
    return createStringError(inconvertibleErrorCode(),
                             "--grid HxW is required to compile a model");
  CompileOptions compile{gridOption,   targetOption, gemmOption,
                         allreduceOption, ktreeOption, dtypeOption,
                         kvOption,     layersOption};
  mlir::OwningOpRef<mlir::ModuleOp> imported((*module)->clone());
  mlir::PassManager pm(&context);
  buildCompilePipeline(pm, compile);
  if (mlir::failed(pm.run(**module))) {
    if (firstError.empty())
      firstError = "compilation failed";
    else if (StringRef(firstError).contains("mesh-check-memory: "))
      firstError += smallestSquareGrid(*imported, compile);
    return createStringError(inconvertibleErrorCode(), firstError);
  }
  if (auto layers = (*module)->getOperation()->getAttrOfType<mlir::IntegerAttr>("tfm.layers")) {
    subset.layers = layers.getInt();
    subset.modelLayers =
        (*module)->getOperation()->getAttrOfType<mlir::IntegerAttr>("tfm.model_layers").getInt();
    for (auto name :
         (*module)->getOperation()->getAttrOfType<mlir::ArrayAttr>("tfm.non_layer_ops")
             .getAsValueRange<mlir::StringAttr>())
      subset.nonLayerOps.insert(name);
  }
  // The timing mode reads no weights, unless a bundle is to be kept.
  bool weights = modeOption != "timing" || !saveBundlePath.empty();
  return buildRuntimeProgram(**module, weights);
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

static Expected<rt::Program> loadModel(StringRef path, LayerSubset &subset) {
  auto file = openInputFile(path);
  if (!file)
    return file.takeError();
  bool isBundle = rt::looksLikeBundle((*file)->getBuffer());
  if (Error error = validateRunOptions(path, isBundle))
    return std::move(error);
  if (isBundle) {
    if (layersOption.getNumOccurrences() || !dimParams.empty())
      return createStringError(
          inconvertibleErrorCode(),
          path + ": is a compiled bundle; --layers and --dim-param apply to "
                 "ONNX models");
    return rt::deserializeBundle((*file)->getBuffer(), path);
  }
  return compileOnnx(path, subset);
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

/// The time of a --layers run per layer and scaled to the whole model:
/// the ops outside the layers once, the layers' time L / N times.
struct Extrapolation {
  int64_t layers = 0, modelLayers = 0;
  double layerCycles = 0, cycles = 0, seconds = 0;
};

static std::optional<Extrapolation>
extrapolate(const LayerSubset &subset, const rt::Program &program,
            const rt::RunStats &stats) {
  if (!subset.layers)
    return std::nullopt;
  int64_t outside = 0;
  for (const rt::OpStats &op : stats.ops)
    if (subset.nonLayerOps.contains(op.name))
      outside += op.cycles;
  Extrapolation e;
  e.layers = subset.layers;
  e.modelLayers = subset.modelLayers;
  e.layerCycles = double(stats.cycles - outside) / subset.layers;
  e.cycles = outside + e.layerCycles * subset.modelLayers;
  e.seconds = e.cycles / program.target.clockHz;
  return e;
}

static void printReport(const rt::Program &program, const rt::RunStats &stats,
                        const std::optional<PhaseTokens> &phase,
                        const std::optional<Extrapolation> &scaled) {
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
  if (scaled) {
    outs() << formatv("layers {0} of {1}: {2:f1} cycles per layer; "
                      "extrapolated to all {1} layers: {3:f0} cycles = "
                      "{4:e3} s\n",
                      scaled->layers, scaled->modelLayers, scaled->layerCycles,
                      scaled->cycles, scaled->seconds);
    if (phase)
      outs() << formatv("{0} extrapolated to all {1} layers: {2:f1} "
                        "tokens/s per request\n",
                        phase->phase, scaled->modelLayers,
                        phase->tokens / scaled->seconds);
  }
  for (const rt::OpStats &op : stats.ops)
    outs() << formatv("  {0,-24} {1,-5} {2,-15} {3,9} cycles ({4} compute)\n",
                      op.name, op.kind, op.algorithm, op.cycles,
                      op.computeCycles);
}

static int run() {
  std::optional<rt::EmulatorMode> mode =
      StringSwitch<std::optional<rt::EmulatorMode>>(modeOption)
          .Case("functional", rt::EmulatorMode::Functional)
          .Case("timing", rt::EmulatorMode::Timing)
          .Default(std::nullopt);
  if (!mode)
    return fail("unknown --mode '" + modeOption +
                "' (known: functional, timing)");
  if (maxCyclesOption < 1 || maxInstructionsOption < 1)
    return fail("--max-cycles and --max-instructions must be positive");
  if (statsDetail && statsPath.empty())
    return fail("--stats-detail needs --stats FILE");
  if (*mode == rt::EmulatorMode::Timing && !outputsPath.empty())
    return fail("--outputs needs --mode functional: the timing mode "
                "computes no values");
  if (layersOption.getNumOccurrences() && layersOption < 1)
    return fail("--layers " + Twine(layersOption) +
                ": give at least 1 decoder layer");
  LayerSubset subset;
  Expected<rt::Program> program = loadModel(modelPath, subset);
  if (!program)
    return fail(toString(program.takeError()));
  if (!saveBundlePath.empty())
    if (Error error = rt::writeBundleFile(*program, saveBundlePath))
      return fail(toString(std::move(error)));
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
  rt::EmulatorOptions emulatorOptions;
  emulatorOptions.threads = threadsOption;
  emulatorOptions.mode = *mode;
  emulatorOptions.trace = !tracePath.empty();
  emulatorOptions.detail = statsDetail;
  emulatorOptions.maxCycles = maxCyclesOption;
  emulatorOptions.maxInstructions = maxInstructionsOption;
  Expected<rt::RunResult> result =
      rt::runProgram(*program, inputs, emulatorOptions);
  if (!result)
    return fail(toString(result.takeError()));
  std::optional<Extrapolation> scaled =
      extrapolate(subset, *program, result->stats);
  if (!outputsPath.empty())
    if (Error error = rt::writeNpz(outputsPath, result->outputs))
      return fail(toString(std::move(error)));
  if (!statsPath.empty()) {
    std::error_code ec;
    raw_fd_ostream os(statsPath, ec, sys::fs::OF_Text);
    if (ec)
      return fail(statsPath + ": cannot write: " + ec.message());
    json::Value stats = rt::statsToJSON(result->stats);
    stats.getAsObject()->try_emplace("mode", modeOption.getValue());
    if (*phase) {
      json::Object *object = stats.getAsObject();
      object->try_emplace("phase", (*phase)->phase);
      object->try_emplace("tokens", (*phase)->tokens);
      object->try_emplace("tokens_per_second",
                          (*phase)->tokens / result->stats.seconds);
    }
    if (scaled) {
      json::Object *object = stats.getAsObject();
      object->try_emplace("layers", scaled->layers);
      object->try_emplace("model_layers", scaled->modelLayers);
      object->try_emplace("extrapolated", true);
      object->try_emplace("layer_cycles", scaled->layerCycles);
      object->try_emplace("extrapolated_cycles", scaled->cycles);
      object->try_emplace("extrapolated_seconds", scaled->seconds);
      if (*phase)
        object->try_emplace("extrapolated_tokens_per_second",
                            (*phase)->tokens / scaled->seconds);
    }
    os << formatv("{0:2}", stats) << "\n";
  }
  if (!tracePath.empty()) {
    std::error_code ec;
    raw_fd_ostream os(tracePath, ec, sys::fs::OF_Text);
    if (ec)
      return fail(tracePath + ": cannot write: " + ec.message());
    rt::writeChromeTrace(*program, *result, os);
  }
  printReport(*program, result->stats, *phase, scaled);
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
    return runEvalCommand(modelPath, inputShapes, dimParams, inputsPath,
                          outputsPath);
  return fail("expected a command: wafer-run run|eval MODEL ... (see --help)");
}
