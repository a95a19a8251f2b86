//===- wafer-run.cpp - Compile a model and run it on the mesh emulator ----===//
//
//   wafer-run run MODEL.onnx|BUNDLE|MODULE.mlir --grid HxW [--target ...]
//             [--gemm meshgemm|cannon|summa|allgather|auto]
//             [--allreduce ktree|pipeline|ring] [--ktree-k K] [--dtype f32|f16]
//             [--kv shift|concat] [--phase prefill|decode]
//             --inputs in.npz --outputs out.npz
//             [--stats stats.json] [--threads N] [--input-shape NAME=1x16]
//             [--dim-param NAME=N] [--layers N]
//   wafer-run eval MODULE.mlir|MODEL.onnx --inputs in.npz --outputs out.npz
//             [--input-shape NAME=1x16] [--dim-param NAME=N]
//   wafer-run generate CHECKPOINT|ONNX_DIR --prompt TEXT|--tokens 1,2,3
//             --grid HxW | --prefill-grid HxW --decode-grid HxW
//             [--max-new-tokens N] [--temperature T --top-k K --top-p P
//             --seed S] [--check] [--json] [--stats FILE] [--trace FILE]
//             and the compile options of run
//   wafer-run bench MODEL.onnx --grid HxW[,HxW...] [--gemm A,B]
//             [--allreduce A,B] [--ktree-k K,K] [--dtype f32,f16]
//             [--kv shift,concat] [--json]
//
// Every failure is one line `error: <where>: <what>` and exit code 1.
//
// Over 600 lines: LLVM's command-line options are globals shared between
// subcommands, so every option of every subcommand is declared here, with
// the run command and the glue that turns options into each command's
// option struct (generate, bench and eval live in their own files).
//
//===----------------------------------------------------------------------===//
#include "BenchCommand.h"
#include "Compile.h"
#include "EvalCommand.h"
#include "GenerateCommand.h"
#include "RunInputs.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Import/WeightStore.h"
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
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace llvm;
using namespace wafer;

static cl::SubCommand runCommand(
    "run", "Compile (an ONNX model or a tfm module) and emulate it; a bundle "
           "or a core module runs as compiled");

static cl::SubCommand generateCommand(
    "generate",
    "Generate text from a GGUF or safetensors checkpoint or an exported ONNX "
    "directory on the emulated mesh");

static cl::SubCommand benchCommand(
    "bench",
    "Compile and time a model for every combination of grids and "
    "algorithms; print a table");

static cl::SubCommand evalCommand(
    "eval", "Evaluate a tfm module (or ONNX model) on the host reference");

// Each command's usage line says what it takes.
static cl::opt<std::string>
    runModel(cl::Positional, cl::desc("MODEL.onnx | BUNDLE | MODULE.mlir"),
             cl::sub(runCommand));
static cl::opt<std::string> generateModel(
    cl::Positional,
    cl::desc("CHECKPOINT.gguf | SAFETENSORS (file, index or directory) | "
             "ONNX-EXPORT-DIR"),
    cl::sub(generateCommand));
static cl::opt<std::string> benchModel(cl::Positional, cl::desc("MODEL.onnx"),
                                       cl::sub(benchCommand));
static cl::opt<std::string> evalModel(cl::Positional,
                                      cl::desc("MODULE.mlir | MODEL.onnx"),
                                      cl::sub(evalCommand));
/// The model of the command given, once the command line is parsed.
static std::string modelPath;
static cl::list<std::string> inputShapes(
    "input-shape", cl::desc("Static shape for an ONNX graph input, NAME=1x16"),
    cl::sub(runCommand), cl::sub(benchCommand), cl::sub(evalCommand));
static cl::list<std::string> dimParams(
    "dim-param",
    cl::desc("Value of a named dynamic dimension of the ONNX graph's inputs, "
             "NAME=N (every input that has it; repeat for several names)"),
    cl::sub(runCommand), cl::sub(benchCommand), cl::sub(evalCommand));
static cl::opt<int64_t> layersOption(
    "layers",
    cl::desc("Compile only the first N decoder layers; the report adds the "
             "time per layer and the whole model's, extrapolated"),
    cl::init(0), cl::sub(runCommand));
static cl::opt<std::string> gridOption("grid", cl::desc("Core grid HxW"),
                                       cl::sub(runCommand));
static cl::opt<std::string> targetOption(
    "target", cl::desc("Target preset (wse2, wse3) or JSON file"),
    cl::init("wse2"), cl::sub(runCommand), cl::sub(benchCommand), cl::sub(generateCommand));
static cl::opt<std::string> gemmOption(
    "gemm",
    cl::desc("GEMM algorithm: meshgemm, cannon, summa, allgather, or auto "
             "(the one whose plan the cost model prices lowest)"),
    cl::init("meshgemm"), cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<std::string> allreduceOption(
    "allreduce", cl::desc("GEMV allreduce: ktree, pipeline, ring"),
    cl::init("ktree"), cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<int64_t> ktreeOption("ktree-k",
                                    cl::desc("K of the K-tree allreduce"),
                                    cl::init(2), cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<std::string> dtypeOption(
    "dtype",
    cl::desc("Element type on the grid: f32, or f16 (storage, link words "
             "and MAC rate of f16; inputs and outputs stay f32)"),
    cl::init("f32"), cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<std::string> kvOption(
    "kv",
    cl::desc("KV cache policy of decode graphs: shift (balanced upward "
             "shift, paper section 4.3) or concat (the baseline)"),
    cl::init("shift"), cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<std::string> prefillHeadsOption(
    "prefill-heads",
    cl::desc("Prefill attention on a grid wider than the KV heads: lanes "
             "(heads split into pairs of dimensions along x, partial scores "
             "summed along x), whole (whole KV heads along x), or auto (the "
             "plan the cost model prices lower among those that fit)"),
    cl::init("auto"), cl::sub(runCommand), cl::sub(generateCommand));
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
                                      cl::sub(runCommand), cl::sub(generateCommand));
static cl::opt<std::string> saveBundlePath(
    "save-bundle",
    cl::desc("Also write the compiled program bundle to this file (run it "
             "again with `wafer-run run FILE`)"),
    cl::sub(runCommand));
static cl::opt<std::string> modeOption(
    "mode",
    cl::desc("functional (numbers and time, the default), timing (time "
             "only: no element data, the same cycles, far less memory) or "
             "analytic (each op's closed-form cycle estimate; nothing runs); "
             "bench: timing (the default) or analytic"),
    cl::init("functional"), cl::sub(runCommand), cl::sub(benchCommand));
static cl::opt<std::string> tracePath(
    "trace",
    cl::desc("Write a Chrome trace (chrome://tracing, Perfetto) of the run "
             "(generate: the prefill and every decode step, one process "
             "each, on the generation's timeline): per op, and per core (per "
             "role on grids over 256 cores) compute, send, receive and "
             "wait"),
    cl::sub(runCommand), cl::sub(generateCommand));
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
    cl::init(rt::EmulatorOptions().maxCycles), cl::sub(runCommand), cl::sub(benchCommand), cl::sub(generateCommand));
static cl::opt<int64_t> maxInstructionsOption(
    "max-instructions",
    cl::desc("End the run with an error when a core runs more instructions"),
    cl::init(rt::EmulatorOptions().maxInstructions), cl::sub(runCommand), cl::sub(benchCommand), cl::sub(generateCommand));
static cl::opt<bool> commitInTurnOption(
    "commit-in-turn",
    cl::desc("Run each batch's cores one after another on one thread, each "
             "send committed as it is issued (the reference for the "
             "default's batches in pieces; for tests)"),
    cl::Hidden, cl::sub(runCommand));
static cl::opt<unsigned> progressAfterOption(
    "progress-after-ms",
    cl::desc("Show the progress line after this many milliseconds (for "
             "tests)"),
    cl::init(1000), cl::Hidden, cl::sub(runCommand));
static cl::opt<unsigned> threadsOption(
    "threads",
    cl::desc("Host threads (default: one per hardware thread; results do "
             "not depend on it)"),
    cl::init(std::clamp(llvm::hardware_concurrency().compute_thread_count(), 1u,
                        1024u)),
    cl::sub(runCommand), cl::sub(benchCommand), cl::sub(generateCommand));
static cl::opt<bool> quietOption(
    "quiet",
    cl::desc("No progress line on stderr (shown, on a terminal, for runs "
             "over a second)"),
    cl::sub(runCommand), cl::sub(benchCommand), cl::sub(generateCommand));

static cl::opt<std::string> promptOption(
    "prompt", cl::desc("Text to continue (tokenized with the checkpoint's "
                       "tokenizer)"),
    cl::sub(generateCommand));
static cl::opt<std::string> tokensOption(
    "tokens", cl::desc("Prompt token ids instead of text, 1,2,3"),
    cl::sub(generateCommand));
static cl::opt<std::string> tokenizerOption(
    "tokenizer",
    cl::desc("Tokenizer (tokenizer.json, tokenizer.model, or a GGUF file) "
             "when not the checkpoint's own"),
    cl::sub(generateCommand));
static cl::opt<int64_t> maxNewTokensOption(
    "max-new-tokens", cl::desc("Tokens to generate at most (default 32)"),
    cl::init(32), cl::sub(generateCommand));
static cl::opt<std::string> generateGridOption(
    "grid", cl::desc("Core grid HxW of both prefill and decode"),
    cl::sub(generateCommand));
static cl::opt<std::string> prefillGridOption(
    "prefill-grid", cl::desc("Core grid HxW of the prefill (default: --grid)"),
    cl::sub(generateCommand));
static cl::opt<std::string> decodeGridOption(
    "decode-grid", cl::desc("Core grid HxW of decode (default: --grid)"),
    cl::sub(generateCommand));
static cl::opt<std::string> kvHandoffOption(
    "kv-handoff",
    cl::desc("How the prefill's keys and values reach the decode caches: "
             "auto (on chip when both grids are the same, else through the "
             "host) or host"),
    cl::init("auto"), cl::sub(generateCommand));
static cl::opt<double> temperatureOption(
    "temperature",
    cl::desc("Sampling temperature; 0 (the default) picks the most likely "
             "token"),
    cl::init(0), cl::sub(generateCommand));
static cl::opt<int64_t> topKOption(
    "top-k", cl::desc("Sample among the K most likely tokens (0: all)"),
    cl::init(0), cl::sub(generateCommand));
static cl::opt<double> topPOption(
    "top-p",
    cl::desc("Sample among the most likely tokens whose probability "
             "reaches P (1: all)"),
    cl::init(1), cl::sub(generateCommand));
static cl::opt<uint64_t> seedOption(
    "seed", cl::desc("Seed of sampling (generate) or of --init random (run)"),
    cl::init(0), cl::sub(generateCommand), cl::sub(runCommand));
static cl::opt<std::string> initOption(
    "init",
    cl::desc("Without --inputs: make every input, zeros or random (uniform "
             "in [-1, 1), token ids uniform over the embedding's rows)"),
    cl::sub(runCommand));
static cl::opt<bool> checkOption(
    "check",
    cl::desc("run: compare every output with the host evaluator on the same "
             "inputs (ONNX models); generate: every step's logits, stopping "
             "at the first step whose most likely token differs; either "
             "fails when the error exceeds --check-tolerance"),
    cl::sub(generateCommand), cl::sub(runCommand));
static cl::opt<double> checkToleranceOption(
    "check-tolerance",
    cl::desc("Largest error of --check, relative to the output's largest "
             "magnitude (default 1e-3, or 5e-2 when the grid computes in "
             "f16)"),
    cl::init(1e-3), cl::sub(generateCommand), cl::sub(runCommand));

/// --check's tolerance: the one given, else one that f16's rounding (a
/// relative step of 2^-11 per value stored) stays within.
static double checkTolerance(bool f16) {
  if (checkToleranceOption.getNumOccurrences() || !f16)
    return checkToleranceOption;
  return 5e-2;
}
static cl::opt<bool> jsonOption(
    "json",
    cl::desc("generate: end stdout with one line of JSON (prompt_tokens, "
             "generated_tokens, text, stats); bench: one JSON object per "
             "configuration instead of the table"),
    cl::sub(generateCommand), cl::sub(benchCommand));
static cl::list<std::string> benchGrids(
    "grid", cl::desc("Core grids HxW, comma-separated"), cl::CommaSeparated,
    cl::sub(benchCommand));
static cl::list<std::string>
    benchGemms("gemm",
               cl::desc("GEMM algorithms, auto among them (default meshgemm)"),
               cl::CommaSeparated, cl::sub(benchCommand));
static cl::list<std::string> benchAllreduces(
    "allreduce", cl::desc("GEMV allreduces (default ktree)"),
    cl::CommaSeparated, cl::sub(benchCommand));
static cl::list<int64_t> benchKtreeKs(
    "ktree-k", cl::desc("K-tree Ks (default 2)"), cl::CommaSeparated,
    cl::sub(benchCommand));
static cl::list<std::string> benchDtypes(
    "dtype", cl::desc("Element types (default f32)"), cl::CommaSeparated,
    cl::sub(benchCommand));
static cl::list<std::string> benchKvs(
    "kv", cl::desc("KV cache policies (default shift)"), cl::CommaSeparated,
    cl::sub(benchCommand));
static cl::list<std::string> benchPrefillHeads(
    "prefill-heads",
    cl::desc("Prefill attention plans: lanes, whole, auto (default auto)"),
    cl::CommaSeparated, cl::sub(benchCommand));

static int fail(const Twine &message) {
  errs() << "error: " << message << "\n";
  return 1;
}

/// What --layers compiled: N of the model's L layers, and the names of the
/// ops outside the layers (from tfm-keep-layers).
struct LayerSubset {
  int64_t layers = 0, modelLayers = 0;
  StringSet<> nonLayerOps;
};

/// What `run --check` evaluates on the host: the model as imported.
struct HostModel {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// What the program was read from: "bundle", "core.program" or "model"
  /// (compiled in this run, with `compiled`).
  std::string madeFrom;
  std::optional<CompileOptions> compiled;
};

static Error optionError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The compile options run and generate share, typed once here, at the
/// command line (the grid and layers are set by each command).
static Expected<CompileOptions> compileOptionsFromCommandLine() {
  CompileOptions compile;
  compile.target = targetOption;
  compile.ktreeK = ktreeOption;
  for (auto [name, value] :
       {std::pair{"gemm", &gemmOption},
        std::pair{"allreduce", &allreduceOption},
        std::pair{"dtype", &dtypeOption}, std::pair{"kv", &kvOption},
        std::pair{"prefill-heads", &prefillHeadsOption}})
    if (Error e = parseCompileOption(compile, name, *value))
      return std::move(e);
  if (Error e = checkKtreeK(compile.ktreeK))
    return std::move(e);
  return compile;
}

static Error validateRunOptions(StringRef path, bool isBundle,
                                StringRef compiled = "a bundle");

/// Compiles an ONNX model or a tfm module with the command line's options;
/// a module holding a core.program (compiled already) runs as it is, like
/// a bundle.
static Expected<rt::Program> compileModel(StringRef path, LayerSubset &subset,
                                          HostModel &host) {
  // The import folds and probes large tensors too.
  FreedMemoryKept kept;
  host.context.loadDialect<tfm::TfmDialect, mesh::MeshDialect,
                           core::CoreDialect, mlir::func::FuncDialect>();
  // Only the functional mode reads weights, unless a bundle is to be kept,
  // which holds at most rt::kMaxBundleBytes of them.
  bool weights = modeOption == "functional" || !saveBundlePath.empty();
  uint64_t maxValueBytes =
      saveBundlePath.empty() ? UINT64_MAX : rt::kMaxBundleBytes;
  auto module = loadModule(path, inputShapes, dimParams, inputsPath,
                           host.context, /*checkWeightShapes=*/weights);
  if (!module)
    return module.takeError();
  if (!(*module)->getOps<core::ProgramOp>().empty()) {
    if (Error error = validateRunOptions(path, /*isBundle=*/true,
                                         "a compiled core.program"))
      return std::move(error);
    // Its weight files resolve as a tfm module's do.
    (*module)->walk([&](core::InputOp input) {
      if (std::optional<StringRef> file = input.getWeightFile())
        input.setWeightFile(resolveWeightSource(*file, path));
    });
    if (layersOption.getNumOccurrences())
      return optionError(path + ": holds a compiled core.program; --layers "
                                "applies to models");
    host.madeFrom = "core.program";
    return buildRuntimeProgram(**module, weights, maxValueBytes);
  }
  Expected<CompileOptions> compile = compileOptionsFromCommandLine();
  if (!compile)
    return compile.takeError();
  compile->grid = gridOption;
  compile->layers = layersOption;
  if (checkOption || !initOption.empty())
    host.module = (*module)->clone();
  host.madeFrom = "model";
  host.compiled = *compile;
  Expected<rt::Program> program =
      compileModule(**module, *compile, weights, maxValueBytes);
  if (!program)
    return program.takeError();
  if (auto layers = (*module)->getOperation()->getAttrOfType<mlir::IntegerAttr>("tfm.layers")) {
    subset.layers = layers.getInt();
    subset.modelLayers =
        (*module)->getOperation()->getAttrOfType<mlir::IntegerAttr>("tfm.model_layers").getInt();
    for (auto name :
         (*module)->getOperation()->getAttrOfType<mlir::ArrayAttr>("tfm.non_layer_ops")
             .getAsValueRange<mlir::StringAttr>())
      subset.nonLayerOps.insert(name);
  }
  return program;
}

/// Checks every option of `run` before any work: values in range, and for a
/// bundle no compile options (it was compiled with its own).
static Error validateRunOptions(StringRef path, bool isBundle,
                                StringRef compiled) {
  if (isBundle) {
    const cl::Option *compileOptions[] = {
        &gridOption,      &targetOption,       &gemmOption,
        &allreduceOption, &ktreeOption,        &dtypeOption,
        &kvOption,        &prefillHeadsOption, std::addressof(inputShapes)};
    for (const cl::Option *option : compileOptions)
      if (option->getNumOccurrences())
        return optionError(path + ": --" + option->ArgStr +
                           " does not apply to " + compiled +
                           " (it is compiled with its own options)");
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
  if (Expected<CompileOptions> compile = compileOptionsFromCommandLine();
      !compile)
    return compile.takeError();
  if (!phaseOption.empty() && phaseOption != "prefill" &&
      phaseOption != "decode")
    return optionError("unknown phase '" + phaseOption +
                       "' (known: prefill, decode)");
  if (threadsOption < 1 || threadsOption > 1024)
    return optionError("--threads must be between 1 and 1024, got " +
                       Twine(unsigned(threadsOption)));
  if (!(checkToleranceOption >= 0) || std::isinf(checkToleranceOption))
    return optionError("--check-tolerance must be at least 0 and finite");
  if (checkToleranceOption.getNumOccurrences() && !checkOption)
    return optionError("--check-tolerance applies to --check, which is not "
                       "given");
  return Error::success();
}

static Expected<rt::Program> loadModel(StringRef path, LayerSubset &subset,
                                       HostModel &host) {
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
    // As for a model: only the functional mode reads weights, unless the
    // bundle is to be kept. The program views them in the mapped file,
    // which it keeps.
    host.madeFrom = "bundle";
    std::shared_ptr<const llvm::MemoryBuffer> mapped = std::move(*file);
    return rt::deserializeBundle(
        mapped->getBuffer(), path,
        modeOption == "functional" || !saveBundlePath.empty(), mapped);
  }
  return compileModel(path, subset, host);
}

static bool computesInF16(const rt::Program &program) {
  return llvm::any_of(program.buffers, [](const rt::Buffer &b) {
    return b.dtype == rt::DType::F16;
  });
}

/// How a run's stats were made: the tool, the model and its inputs, the
/// program's grid, target and element types, the compile options when it
/// was compiled in this run, and the mode.
static json::Object provenance(const rt::Program &program,
                               const HostModel &host) {
  json::Object made = toolProvenance("wafer-run run");
  made["model"] = modelPath;
  made["made_from"] = host.madeFrom;
  if (!inputsPath.empty())
    made["inputs"] = inputsPath.getValue();
  else if (initOption == "random")
    made["inputs"] = formatv("random, seed {0}", seedOption.getValue()).str();
  else
    made["inputs"] = initOption.empty() ? "none" : "zeros";
  made["grid"] = formatv("{0}x{1}", program.gridHeight, program.gridWidth);
  made["target"] = program.target.name;
  made["dtype"] = computesInF16(program) ? "f16" : "f32";
  if (const std::optional<CompileOptions> &c = host.compiled) {
    made["gemm"] = compileOptionText(*c, "gemm");
    made["allreduce"] = compileOptionText(*c, "allreduce");
    made["ktree_k"] = c->ktreeK;
    made["kv"] = compileOptionText(*c, "kv");
    made["prefill_heads"] = compileOptionText(*c, "prefill-heads");
  }
  made["mode"] = modeOption.getValue();
  made["threads"] = int64_t(threadsOption.getValue());
  return made;
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
  for (const rt::HostTensor &in : program.inputs) {
    if (in.gatherIds.empty())
      continue;
    if (auto it = inputs.find(in.gatherIds); it != inputs.end()) {
      ids = it->second.elements();
    } else if (!in.sourceShape.empty()) {
      // Without inputs (timing, analytic): the ids' shape the program was
      // compiled for, the gathered rows' shape without the row size.
      ids = 1;
      for (size_t d = 0; d + 1 < in.sourceShape.size(); ++d)
        ids *= in.sourceShape[d];
    }
  }
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
  bool analytic = modeOption == "analytic";
  outs() << formatv("grid {0}x{1} on {2}: {3} cycles = {4:e3} s at {5:e2} Hz"
                    "{6}\n",
                    program.gridHeight, program.gridWidth, program.target.name,
                    stats.cycles, stats.seconds, program.target.clockHz,
                    analytic ? " (analytic: the ops' closed-form estimates)"
                             : "");
  outs() << formatv("max SRAM per core {0} bytes (of {1}), max routes per "
                    "core {2} (of {3})\n",
                    stats.maxSramBytesPerCore, program.target.sramBytes,
                    stats.maxRoutesPerCore, program.target.routesPerCore);
  outs() << formatv("weights per core: {0} bytes allocated (tiles padded to "
                    "whole blocks), {1:f0} bytes of values on average\n",
                    stats.weightBytesPerCoreMax, stats.weightBytesPerCoreMean);
  if (stats.fabricRowsSpanned)
    outs() << formatv("placed around {0} dead core(s) and {1} dead link(s): "
                      "the grid spans {2}x{3} fabric cores\n",
                      stats.deadCores, stats.deadLinks,
                      stats.fabricRowsSpanned, stats.fabricColsSpanned);
  if (stats.kvCapacityTokens >= 0)
    outs() << formatv("KV caches take {0} more decode tokens before a core's "
                      "SRAM overflows\n",
                      stats.kvCapacityTokens);
  if (phase)
    outs() << formatv("{0}: {1} token(s) per run, {2} tokens/s per "
                      "request\n",
                      phase->phase, phase->tokens,
                      formatRate(phase->tokens / stats.seconds));
  if (scaled) {
    outs() << formatv("layers {0} of {1}: {2:f1} cycles per layer; "
                      "extrapolated to all {1} layers: {3:f0} cycles = "
                      "{4:e3} s\n",
                      scaled->layers, scaled->modelLayers, scaled->layerCycles,
                      scaled->cycles, scaled->seconds);
    if (phase)
      outs() << formatv("{0} extrapolated to all {1} layers: {2} "
                        "tokens/s per request\n",
                        phase->phase, scaled->modelLayers,
                        formatRate(phase->tokens / scaled->seconds));
  }
  // Why a non-square grid's GEMMs can be slower than a smaller square
  // grid's: their contraction dimension is cut into lcm(H, W) blocks.
  int64_t h = program.gridHeight, w = program.gridWidth,
          blocks = std::lcm(h, w);
  if (blocks > std::max(h, w) &&
      llvm::any_of(stats.ops,
                   [](const rt::OpStats &op) { return op.kind == "gemm"; }))
    outs() << formatv("non-square grid: each GEMM runs lcm({0}, {1}) = {2} "
                      "block steps, where a square grid runs its side\n",
                      h, w, blocks);
  for (const rt::OpStats &op : stats.ops)
    outs() << formatv("  {0,-24} {1,-5} {2,-15} {3,9} cycles {4}\n", op.name,
                      op.kind, op.algorithm, op.cycles,
                      analytic ? std::string("(estimate)")
                               : formatv("({0} compute)", op.computeCycles)
                                     .str());
}

/// The analytic mode's refusal of the first option given that steers the
/// emulator's run, naming the modes that run it (`runningModes`, as the
/// command has them); none when no such option is given.
static std::optional<std::string> emulatorOnlyOption(StringRef runningModes) {
  for (cl::Option *option :
       std::initializer_list<cl::Option *>{&threadsOption, &maxCyclesOption,
                                           &maxInstructionsOption,
                                           &commitInTurnOption})
    if (option->getNumOccurrences())
      return ("--" + option->ArgStr + " applies to a mode that runs the " +
              "program (" + runningModes +
              "); the analytic mode only adds up estimates")
          .str();
  return std::nullopt;
}

/// A file option given as '' (a shell variable left empty) names no file;
/// it must not pass as the option left out.
static Error checkFileNamesGiven() {
  for (cl::opt<std::string> *option :
       {&inputsPath, &outputsPath, &statsPath, &saveBundlePath, &tracePath,
        &targetOption, &tokenizerOption})
    if (option->getNumOccurrences() && option->empty())
      return createStringError(inconvertibleErrorCode(),
                               "--" + option->ArgStr + " '' names no file");
  return Error::success();
}

/// The file --target reads, or "" for a preset.
static StringRef targetFile() {
  return llvm::is_contained(rt::presetTargetNames(), targetOption.getValue())
             ? StringRef()
             : StringRef(targetOption);
}

static int run() {
  std::optional<rt::EmulatorMode> mode =
      StringSwitch<std::optional<rt::EmulatorMode>>(modeOption)
          .Case("functional", rt::EmulatorMode::Functional)
          .Case("timing", rt::EmulatorMode::Timing)
          .Case("analytic", rt::EmulatorMode::Analytic)
          .Default(std::nullopt);
  if (!mode)
    return fail("unknown --mode '" + modeOption +
                "' (known: functional, timing, analytic)");
  if (maxCyclesOption < 1 || maxInstructionsOption < 1)
    return fail("--max-cycles and --max-instructions must be positive");
  if (statsDetail && statsPath.empty())
    return fail("--stats-detail needs --stats FILE");
  if (std::optional<std::string> clash =
          clashingFiles({{"--stats", statsPath},
                         {"--trace", tracePath},
                         {"--outputs", outputsPath},
                         {"--save-bundle", saveBundlePath}},
                        {{"the model", modelPath},
                         {"--inputs", inputsPath},
                         {"--target", targetFile()}}))
    return fail(*clash);
  if (*mode != rt::EmulatorMode::Functional && !outputsPath.empty())
    return fail("--outputs needs --mode functional: the " + modeOption +
                " mode computes no values");
  if (*mode == rt::EmulatorMode::Analytic &&
      (!tracePath.empty() || statsDetail))
    return fail(std::string(tracePath.empty() ? "--stats-detail" : "--trace") +
                " needs a mode that runs the program (functional or timing); "
                "the analytic mode only adds up estimates");
  if (!initOption.empty() && initOption != "zeros" && initOption != "random")
    return fail("unknown --init '" + initOption + "' (known: zeros, random)");
  if (!initOption.empty() && !inputsPath.empty())
    return fail("--init makes the inputs; give it or --inputs, not both");
  if (seedOption.getNumOccurrences() && initOption != "random")
    return fail("--seed applies to --init random, which is not given");
  if (*mode == rt::EmulatorMode::Analytic)
    if (std::optional<std::string> refusal =
            emulatorOnlyOption("functional or timing"))
      return fail(*refusal);
  if (checkOption && layersOption.getNumOccurrences())
    return fail("--check compares the whole model with the host evaluator; "
                "it does not combine with --layers");
  if (checkOption && *mode != rt::EmulatorMode::Functional)
    return fail("--check needs --mode functional: the " + modeOption +
                " mode computes no values");
  if (layersOption.getNumOccurrences() && layersOption < 1)
    return fail("--layers " + Twine(layersOption) +
                ": give at least 1 decoder layer");
  LayerSubset subset;
  HostModel host;
  Expected<rt::Program> program = loadModel(modelPath, subset, host);
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
  } else if (!initOption.empty()) {
    inputs = makeInputs(*program, host.module ? *host.module : nullptr,
                        initOption == "random", seedOption);
  }
  if (checkOption && !host.module)
    return fail(modelPath + ": --check needs an ONNX model or a tfm module (a "
                            "compiled program has no host reference)");
  Expected<std::optional<PhaseTokens>> phase = phaseTokens(*program, inputs);
  if (!phase)
    return fail(toString(phase.takeError()));
  rt::EmulatorOptions emulatorOptions;
  emulatorOptions.threads = threadsOption;
  emulatorOptions.progress = !quietOption;
  emulatorOptions.progressAfterMs = progressAfterOption;
  emulatorOptions.mode = *mode;
  emulatorOptions.trace = !tracePath.empty();
  emulatorOptions.detail = statsDetail;
  emulatorOptions.maxCycles = maxCyclesOption;
  emulatorOptions.maxInstructions = maxInstructionsOption;
  emulatorOptions.commitInTurn = commitInTurnOption;
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
    stats.getAsObject()->try_emplace("run", provenance(*program, host));
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
    if (Error error = flushOutput(os, statsPath))
      return fail(toString(std::move(error)));
  }
  if (!tracePath.empty()) {
    std::error_code ec;
    raw_fd_ostream os(tracePath, ec, sys::fs::OF_Text);
    if (ec)
      return fail(tracePath + ": cannot write: " + ec.message());
    rt::writeChromeTrace(*program, *result, os);
    if (Error error = flushOutput(os, tracePath))
      return fail(toString(std::move(error)));
  }
  printReport(*program, result->stats, *phase, scaled);
  if (checkOption)
    if (Error error =
            checkOutputs(*host.module, modelPath, inputs, result->outputs,
                         checkTolerance(computesInF16(*program))))
      return fail(toString(std::move(error)));
  return 0;
}

static int generate() {
  if (Error error = validateRunOptions(modelPath, /*isBundle=*/false))
    return fail(toString(std::move(error)));
  if ((promptOption.getNumOccurrences() > 0) ==
      (tokensOption.getNumOccurrences() > 0))
    return fail("give the prompt as --prompt TEXT or as --tokens 1,2,3 (one "
                "of them)");
  if (maxNewTokensOption < 1)
    return fail("--max-new-tokens " + Twine(maxNewTokensOption) +
                ": generate at least 1 token");
  if (temperatureOption < 0 || !std::isfinite(temperatureOption))
    return fail("--temperature must be a finite number at least 0");
  if (topKOption < 0)
    return fail("--top-k must be at least 0");
  if (!(topPOption > 0 && topPOption <= 1))
    return fail("--top-p must be in (0, 1]");
  if (temperatureOption == 0 &&
      (seedOption.getNumOccurrences() || topKOption.getNumOccurrences() ||
       topPOption.getNumOccurrences()))
    return fail(std::string(seedOption.getNumOccurrences()   ? "--seed"
                            : topKOption.getNumOccurrences() ? "--top-k"
                                                             : "--top-p") +
                " applies to sampling: give --temperature above 0 (at 0 the "
                "most likely token is taken)");
  if (std::optional<std::string> clash =
          clashingFiles({{"--stats", statsPath}, {"--trace", tracePath}},
                        {{"the model", modelPath},
                         {"--tokenizer", tokenizerOption},
                         {"--target", targetFile()}}))
    return fail(*clash);
  GenerateOptions options;
  options.model = modelPath;
  options.tokenizer = tokenizerOption;
  if (promptOption.getNumOccurrences())
    options.prompt = promptOption;
  else
    options.tokens = tokensOption;
  options.maxNewTokens = maxNewTokensOption;
  Expected<CompileOptions> compile = compileOptionsFromCommandLine();
  if (!compile)
    return fail(toString(compile.takeError()));
  options.prefill = options.decode = *compile;
  options.prefill.grid =
      prefillGridOption.empty() ? generateGridOption : prefillGridOption;
  options.decode.grid =
      decodeGridOption.empty() ? generateGridOption : decodeGridOption;
  for (const std::string &grid : {options.prefill.grid, options.decode.grid}) {
    auto [h, w] = StringRef(grid).split('x');
    int64_t height, width;
    if (grid.empty())
      return fail("give the grids: --grid HxW, or --prefill-grid HxW and "
                  "--decode-grid HxW");
    if (h.getAsInteger(10, height) || w.getAsInteger(10, width) ||
        height < 1 || width < 1)
      return fail("grid '" + grid + "' is not of the form HxW (at least "
                  "1x1)");
  }
  if (kvHandoffOption != "auto" && kvHandoffOption != "host")
    return fail("unknown --kv-handoff '" + kvHandoffOption +
                "' (known: auto, host)");
  options.handoffOnChip =
      kvHandoffOption == "auto" && options.prefill.grid == options.decode.grid;
  options.temperature = temperatureOption;
  options.topK = topKOption;
  options.topP = topPOption;
  options.seed = seedOption;
  options.check = checkOption;
  options.tolerance = checkTolerance(dtypeOption == "f16");
  options.statsPath = statsPath;
  options.tracePath = tracePath;
  options.emulator.trace = !tracePath.empty();
  options.json = jsonOption;
  options.emulator.threads = threadsOption;
  options.emulator.progress = !quietOption;
  options.emulator.maxCycles = maxCyclesOption;
  options.emulator.maxInstructions = maxInstructionsOption;
  return runGenerateCommand(options);
}

static int bench() {
  BenchOptions options;
  options.model = modelPath;
  // It compiles each configuration from the ONNX graph.
  if (StringRef(modelPath).ends_with(".mlir") || isCheckpointPath(modelPath))
    return fail(modelPath + ": bench takes an ONNX model (run an MLIR "
                            "module with `wafer-run run`, a checkpoint with "
                            "`wafer-run generate`)");
  Expected<OnnxImportOptions> import =
      importOptions(inputShapes, dimParams, /*inputsPath=*/"");
  if (!import)
    return fail(toString(import.takeError()));
  options.import = *import;
  options.target = targetOption;
  auto values = [](const cl::list<std::string> &list, const char *fallback) {
    std::vector<std::string> out(list.begin(), list.end());
    if (out.empty())
      out.push_back(fallback);
    return out;
  };
  options.grids = values(benchGrids, "");
  options.gemms = values(benchGemms, "meshgemm");
  options.allreduces = values(benchAllreduces, "ktree");
  options.dtypes = values(benchDtypes, "f32");
  options.kvs = values(benchKvs, "shift");
  options.prefillHeads = values(benchPrefillHeads, "auto");
  options.ktreeKs.assign(benchKtreeKs.begin(), benchKtreeKs.end());
  if (options.ktreeKs.empty())
    options.ktreeKs.push_back(2);
  if (Error error = validateBenchOptions(options))
    return fail(toString(std::move(error)));
  if (threadsOption < 1 || threadsOption > 1024)
    return fail("--threads must be between 1 and 1024, got " +
                Twine(unsigned(threadsOption)));
  // bench measures time only: timing unless asked for the estimates.
  if (modeOption.getNumOccurrences() && modeOption != "timing" &&
      modeOption != "analytic")
    return fail("bench: unknown --mode '" + modeOption +
                "' (known: timing, analytic)");
  options.emulator.mode = modeOption == "analytic" ? rt::EmulatorMode::Analytic
                                                   : rt::EmulatorMode::Timing;
  if (options.emulator.mode == rt::EmulatorMode::Analytic)
    if (std::optional<std::string> refusal = emulatorOnlyOption("timing"))
      return fail(*refusal);
  options.emulator.threads = threadsOption;
  options.emulator.progress = !quietOption;
  options.emulator.maxCycles = maxCyclesOption;
  options.emulator.maxInstructions = maxInstructionsOption;
  options.json = jsonOption;
  return runBenchCommand(options);
}

static int runCommandLine() {
  modelPath = runCommand        ? runModel
              : generateCommand ? generateModel
              : benchCommand    ? benchModel
                                : evalModel;
  if (Error error = checkFileNamesGiven())
    return fail(toString(std::move(error)));
  if ((runCommand || evalCommand || generateCommand || benchCommand) &&
      modelPath.empty())
    return fail("expected a model: wafer-run run|eval|generate|bench MODEL "
                "... (see --help)");
  if (runCommand)
    return run();
  if (generateCommand)
    return generate();
  if (benchCommand)
    return bench();
  if (evalCommand) {
    if (std::optional<std::string> clash =
            clashingFiles({{"--outputs", outputsPath}},
                          {{"the model", modelPath}, {"--inputs", inputsPath}}))
      return fail(*clash);
    return runEvalCommand(modelPath, inputShapes, dimParams, inputsPath,
                          outputsPath);
  }
  return fail("expected a command: wafer-run run|eval|generate|bench MODEL "
              "... (see --help)");
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  hideForeignOptions();
  // LLVM's flag -stats would take `bench --stats FILE` (a command without
  // a --stats of its own) as a flag and FILE as a second model.
  for (StringRef name : {"stats", "stats-json"})
    if (cl::Option *option = cl::getRegisteredOptions().lookup(name))
      option->removeArgument();
  if (!parseCommandLine(argc, argv, "wafer-run: compile and emulate models\n"))
    return 1;
  return exitStatusWithStdout(runCommandLine());
}
