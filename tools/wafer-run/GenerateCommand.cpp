//===- GenerateCommand.cpp - wafer-run generate ---------------------------===//
//
// Text in, text out on the emulated mesh. The prompt's prefill runs on the
// prefill grid; one decode program, compiled once with its position a
// run-time value and its KV caches sized for the whole generation, then
// runs once per new token in an emulator session, so the caches stay in the
// cores' SRAM from step to step. When both programs use the same cores the
// prefill ends by handing its keys and values to the decode caches on the
// NoC (mesh-relayout-phases) and the decode session takes them over where
// they lie; otherwise they go through the host (placed by the decode
// program's first run). The graphs come from a checkpoint or an exported
// ONNX directory (GenerateModel).
//
//===----------------------------------------------------------------------===//
#include "GenerateCommand.h"
#include "Compile.h"
#include "GenerateModel.h"
#include "GenerateSupport.h"

#include "wafer/Dialect/Core/CoreOps.h"
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/CheckpointTokenizer.h"
#include "wafer/Import/Tokenizer.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/KvCache.h"
#include "wafer/Support/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace wafer;

namespace {

Error generateError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

struct GridShape {
  int64_t height = 0, width = 0;
};

GridShape gridOf(const CompileOptions &options) {
  GridShape g;
  auto [h, w] = StringRef(options.grid).split('x');
  (void)h.getAsInteger(10, g.height);
  (void)w.getAsInteger(10, g.width);
  return g;
}

class Generation {
public:
  Generation(const GenerateOptions &options)
      : options(options), sampler(options) {
    context.loadDialect<tfm::TfmDialect, mesh::MeshDialect, core::CoreDialect,
                        mlir::func::FuncDialect>();
  }

  Error run();
  /// Whether stdout has text not ended by a newline.
  bool midLine() const { return streamed; }

private:
  Error prepareTokens();
  Error compilePrograms();
  Expected<rt::Program> compileDecode(int64_t capacity);
  /// Compiles the prefill with the on-chip hand-off and the decode program
  /// reading its caches where the prefill leaves them.
  Error compileHandoff(mlir::ModuleOp prefillModule);
  Error prefill();
  Error decode();
  /// The shape the decode program expects of user input `name`.
  std::vector<int64_t> inputShape(StringRef name) const;
  Error checkStep(ArrayRef<float> logits, int64_t step);
  Error writeTrace() const;
  /// Appends a generated token: streams its text, tells whether to go on.
  Expected<bool> accept(int64_t token);
  void report() const;
  json::Value statsJSON() const;
  /// How the stats were made (the "run" object).
  json::Object provenance() const;

  const GenerateOptions &options;
  mlir::MLIRContext context;
  Sampler sampler;
  HostReference reference;
  std::unique_ptr<GenerateModel> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::optional<TokenDecoder> text;
  std::string generatedText;
  bool streamed = false;

  std::vector<int64_t> prompt, generated;
  std::string stopReason = "max-new-tokens";
  std::optional<rt::Program> prefillProgram;
  rt::Program decodeProgram;
  /// How the decode program was compiled (the grid, its caches' capacity).
  CompileOptions decodeCompile;
  /// "none" (no prefill), "on-chip" or "host"; why not on chip when asked.
  std::string handoff = "none", handoffNote;
  /// On chip: the prefill outputs the decode session takes over, as the
  /// decode inputs they become; the session that holds them until then.
  std::vector<std::pair<std::string, std::string>> handoffPairs;
  std::unique_ptr<rt::Session> prefillSession;
  int64_t handoffCycles = 0;
  /// The most tokens the decode caches hold.
  int64_t tokenLimit = 0;
  std::optional<rt::RunStats> prefillStats;
  std::vector<rt::RunStats> decodeStats;
  /// With --trace: every run's stats and spans (outputs dropped).
  std::vector<rt::RunResult> tracedRuns;
  /// Prefill outputs: the logits of the last position, the presents.
  std::vector<float> nextLogits;
  rt::NDArrayMap presents;
  double worstError = 0;
};

Error Generation::prepareTokens() {
  Expected<std::unique_ptr<GenerateModel>> opened =
      GenerateModel::open(options.model, context);
  if (!opened)
    return opened.takeError();
  model = std::move(*opened);
  std::string tokenizerPath =
      options.tokenizer.empty() ? options.model : options.tokenizer;
  auto loaded = loadCheckpointTokenizer(tokenizerPath);
  if (loaded)
    tokenizer = std::move(*loaded);
  else if (options.prompt || !options.tokenizer.empty())
    return loaded.takeError();
  else
    consumeError(loaded.takeError());
  if (tokenizer && tokenizer->size() != model->vocabSize())
    return generateError(formatv("{0}: the tokenizer has {1} tokens, the "
                                 "model's vocabulary {2}",
                                 tokenizer->where(), tokenizer->size(),
                                 model->vocabSize()));
  if (options.prompt) {
    auto ids = tokenizer->encodePrompt(*options.prompt);
    if (!ids)
      return ids.takeError();
    prompt.assign(ids->begin(), ids->end());
  } else {
    auto ids = parseTokenList(*options.tokens, model->vocabSize());
    if (!ids)
      return ids.takeError();
    prompt = std::move(*ids);
  }
  int64_t total = saturatingAdd(int64_t(prompt.size()), options.maxNewTokens);
  std::optional<int64_t> maxContext = model->maxContext();
  if (maxContext && total > *maxContext)
    return generateError(formatv("{0}: the prompt's {1} tokens and {2} new "
                                 "ones exceed the model's context length {3}",
                                 options.model, prompt.size(),
                                 options.maxNewTokens, *maxContext));
  return Error::success();
}

Expected<rt::Program> Generation::compileDecode(int64_t capacity) {
  // Compiled for the first decode step; later steps bind the position.
  int64_t pastLen = std::max<int64_t>(int64_t(prompt.size()), 1);
  auto module = model->decodeGraph(pastLen);
  if (!module)
    return module.takeError();
  CompileOptions compile = options.decode;
  compile.kvCapacity = capacity;
  if (!planFits(**module, compile)) {
    // Fewer tokens may fit: generate as far as they go.
    int64_t fits = 0, fails = capacity;
    for (int64_t lo = pastLen + 1; lo < fails;) {
      int64_t mid = lo + (fails - lo) / 2;
      compile.kvCapacity = mid;
      if (planFits(**module, compile))
        fits = mid, lo = mid + 1;
      else
        fails = mid;
    }
    // None: the error of the smallest plan, one new token.
    compile.kvCapacity = fits ? fits : pastLen + 1;
  }
  auto program = compileModule(**module, compile);
  if (!program)
    return program.takeError();
  decodeCompile = compile;
  KvCacheLayout layout;
  layout.rows = gridOf(compile).height;
  layout.past = pastLen;
  layout.policy = compile.kv;
  layout.slotsPerRow = kvSlotsPerRow(layout.rows, layout.past,
                                     compile.kvCapacity, layout.policy);
  tokenLimit = layout.tokenLimit();
  return program;
}

Error Generation::compilePrograms() {
  // The decode program first: its caches' size is the hand-off's.
  auto program = compileDecode(
      saturatingAdd(int64_t(prompt.size()), options.maxNewTokens));
  if (!program)
    return generateError("decode on " + options.decode.grid + ": " +
                         toString(program.takeError()));
  decodeProgram = std::move(*program);
  // A one-token prompt has no prefill: the decode program takes it at
  // position 0.
  if (prompt.size() <= 1)
    return Error::success();
  auto module = model->prefillGraph(int64_t(prompt.size()));
  if (!module)
    return module.takeError();
  if (options.handoffOnChip) {
    Error onChip = compileHandoff(**module);
    if (!onChip) {
      handoff = "on-chip";
      return Error::success();
    }
    handoffNote = toString(std::move(onChip));
  }
  auto prefill = compileModule(**module, options.prefill);
  if (!prefill)
    return generateError("prefill on " + options.prefill.grid + ": " +
                         toString(prefill.takeError()));
  prefillProgram = std::move(*prefill);
  handoff = "host";
  return Error::success();
}

/// Whether a program's attention splits its heads into lanes.
static bool attentionOverLanes(const rt::Program &program) {
  return llvm::any_of(program.ops, [](const rt::OpInfo &op) {
    return op.kind == "attention" &&
           StringRef(op.algorithm).ends_with("-lanes");
  });
}

Error Generation::compileHandoff(mlir::ModuleOp prefillModule) {
  CompileOptions prefillCompile = options.prefill;
  // The decode caches take the prefill's keys and values where they lie,
  // so both must split the heads alike: decode uses lanes on any grid
  // wider than the KV heads, and so does an unforced prefill here.
  if (prefillCompile.prefillHeads == "auto")
    prefillCompile.prefillHeads = "lanes";
  prefillCompile.kv = decodeCompile.kv;
  prefillCompile.handoffCapacity = decodeCompile.kvCapacity;
  mlir::OwningOpRef<mlir::ModuleOp> copy(prefillModule.clone());
  auto prefill = compileModule(*copy, prefillCompile);
  if (!prefill)
    return prefill.takeError();
  // The decode program reads each cache where the prefill leaves it, in
  // its ring order.
  CompileOptions resident = decodeCompile;
  resident.interleave = prefill->interleave;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const rt::HostTensor &out : prefill->outputs)
    if (StringRef(out.name).starts_with("handoff.")) {
      std::string past = StringRef(out.name).drop_front(8).str();
      resident.residentCaches.push_back(
          formatv("{0}={1}", past, prefill->buffers[out.buffer].offsetBytes));
      pairs.push_back({out.name, past});
    }
  auto module =
      model->decodeGraph(std::max<int64_t>(int64_t(prompt.size()), 1));
  if (!module)
    return module.takeError();
  auto decode = compileModule(**module, resident);
  if (!decode)
    return decode.takeError();
  if (attentionOverLanes(*prefill) != attentionOverLanes(*decode))
    return createStringError(inconvertibleErrorCode(),
                             "the prefill keeps whole KV heads along x "
                             "(--prefill-heads whole) and the decode splits "
                             "them into lanes");
  prefillProgram = std::move(*prefill);
  decodeProgram = std::move(*decode);
  handoffPairs = std::move(pairs);
  return Error::success();
}

Error Generation::prefill() {
  if (!prefillProgram)
    return Error::success();
  rt::NDArray ids;
  ids.dtype = "int64";
  ids.shape = {1, int64_t(prompt.size())};
  ids.data.assign(prompt.begin(), prompt.end());
  auto session = rt::Session::create(*prefillProgram, options.emulator);
  if (!session)
    return generateError("prefill: " + toString(session.takeError()));
  // On chip the decode session takes the caches over; only the logits
  // leave the grid.
  rt::RunRequest request;
  if (handoff == "on-chip")
    request.outputs = {"logits"};
  Expected<rt::RunResult> result =
      (*session)->run({{"input_ids", ids}}, request);
  if (!result)
    return generateError("prefill: " + toString(result.takeError()));
  prefillStats = result->stats;
  for (const rt::OpStats &op : prefillStats->ops)
    if (op.kind == "kv_handoff")
      handoffCycles += op.cycles;
  if (handoff == "on-chip")
    prefillSession = std::move(*session);
  if (options.emulator.trace)
    tracedRuns.push_back({{}, result->stats, std::move(result->trace)});
  const rt::NDArray &logits = result->outputs.at("logits");
  int64_t vocab = logits.shape.back();
  nextLogits.assign(logits.data.end() - vocab, logits.data.end());
  for (auto &[name, array] : result->outputs)
    if (StringRef(name).starts_with("present."))
      presents["past." + StringRef(name).drop_front(8).str()] = array;
  return checkStep(nextLogits, 0);
}

Error Generation::checkStep(ArrayRef<float> logits, int64_t step) {
  if (!options.check)
    return Error::success();
  std::vector<int64_t> sequence = prompt;
  llvm::append_range(sequence, ArrayRef(generated).take_front(step));
  Expected<std::vector<float>> want = reference.logits(*model, sequence);
  if (!want)
    return generateError("--check: host evaluator: " +
                         toString(want.takeError()));
  rt::Deviation deviation = rt::deviationFrom(logits, *want, /*minScale=*/1);
  double error = deviation.relative;
  worstError = std::max(worstError, error);
  if (std::isinf(error))
    return generateError(formatv(
        "--check: step {0} (position {1}): logit "
        "{2} is {3:e3}, where the host evaluator's "
        "is {4:e3}{5}",
        step, sequence.size() - 1, deviation.index, logits[deviation.index],
        (*want)[deviation.index],
        std::isnan((*want)[deviation.index]) ? " (a NaN checks nothing)" : ""));
  if (argmax(logits) != argmax(*want))
    return generateError(formatv("--check: step {0} (position {1}): the "
                                 "mesh's most likely token {2} differs from "
                                 "the host evaluator's {3}",
                                 step, sequence.size() - 1, argmax(logits),
                                 argmax(*want)));
  if (error > options.tolerance)
    return generateError(formatv("--check: step {0} (position {1}): logits "
                                 "differ from the host evaluator's by {2:e2} "
                                 "(relative), above the tolerance {3:e2}",
                                 step, sequence.size() - 1, error,
                                 options.tolerance));
  return Error::success();
}

Expected<bool> Generation::accept(int64_t token) {
  generated.push_back(token);
  if (text) {
    Expected<std::string> piece = text->push(token);
    if (!piece)
      return piece.takeError();
    generatedText += *piece;
    outs() << *piece;
  } else {
    outs() << (generated.size() > 1 ? " " : "") << token;
  }
  streamed = true;
  outs().flush();
  const std::vector<int64_t> &eos = model->eosIds();
  if (llvm::is_contained(eos, token) || (tokenizer && tokenizer->eos() == token)) {
    stopReason = "eos";
    return false;
  }
  return int64_t(generated.size()) < options.maxNewTokens;
}

std::vector<int64_t> Generation::inputShape(StringRef name) const {
  for (const rt::HostTensor &in : decodeProgram.inputs)
    if (in.name == name)
      return in.sourceShape;
  return {};
}

Error Generation::decode() {
  auto session = rt::Session::create(decodeProgram, options.emulator);
  if (!session)
    return session.takeError();
  if (prefillSession) {
    if (Error e = (*session)->adopt(*prefillSession, handoffPairs))
      return generateError("KV hand-off: " + toString(std::move(e)));
    prefillSession.reset();
  }
  // With no prefill, the prompt's one token is the first decode input.
  int64_t position = prefillProgram ? int64_t(prompt.size()) : 0;
  int64_t token = prefillProgram ? sampler.next(nextLogits) : prompt[0];
  if (prefillProgram) {
    Expected<bool> more = accept(token);
    if (!more)
      return more.takeError();
    if (!*more)
      return Error::success();
  }
  for (;; ++position) {
    // The text, report, stats and JSON line are still written; run()
    // then fails with the reason.
    if (position + 1 > tokenLimit) {
      stopReason = "capacity";
      return Error::success();
    }
    rt::NDArrayMap inputs;
    rt::NDArray ids;
    ids.dtype = "int64";
    ids.shape = {1, 1};
    ids.data = {float(token)};
    inputs["input_ids"] = ids;
    RopeFactors factors = model->ropeFactors(position);
    rt::NDArray cos, sin;
    // The planner may have collapsed the broadcast dimensions.
    cos.shape = sin.shape = inputShape("rope.cos");
    cos.data = factors.cos;
    sin.data = factors.sin;
    inputs["rope.cos"] = cos;
    inputs["rope.sin"] = sin;
    auto handedOff = [&](const std::string &name) {
      return llvm::any_of(
          handoffPairs, [&](const auto &pair) { return pair.second == name; });
    };
    if (decodeStats.empty())
      for (const rt::HostTensor &in : decodeProgram.inputs)
        if (StringRef(in.name).starts_with("past.") && !handedOff(in.name)) {
          auto it = presents.find(in.name);
          if (it != presents.end()) {
            inputs[in.name] = it->second;
          } else {
            // No prefill: the cache's compiled past is a placeholder the
            // first token overwrites.
            rt::NDArray zeros;
            zeros.shape = in.sourceShape;
            zeros.data.assign(zeros.elements(), 0.0f);
            inputs[in.name] = zeros;
          }
        }
    rt::RunRequest request;
    request.position = position;
    request.outputs = {"logits"};
    Expected<rt::RunResult> result = (*session)->run(inputs, request);
    if (!result)
      return generateError(formatv("decode step at position {0}: {1}",
                                   position, toString(result.takeError())));
    decodeStats.push_back(result->stats);
    if (options.emulator.trace)
      tracedRuns.push_back({{}, result->stats, std::move(result->trace)});
    const std::vector<float> &logits = result->outputs.at("logits").data;
    if (Error e = checkStep(logits, int64_t(generated.size())))
      return e;
    token = sampler.next(logits);
    Expected<bool> more = accept(token);
    if (!more)
      return more.takeError();
    if (!*more)
      return Error::success();
  }
}

/// The prefill, then each decode step, back to back on the generation's
/// modeled timeline.
Error Generation::writeTrace() const {
  if (options.tracePath.empty())
    return Error::success();
  std::vector<rt::TracedRun> runs;
  int64_t start = 0;
  for (size_t i = 0; i < tracedRuns.size(); ++i) {
    bool isPrefill = prefillProgram && i == 0;
    size_t step = i - (prefillProgram ? 1 : 0);
    int64_t position =
        int64_t(prefillProgram ? prompt.size() : 0) + int64_t(step);
    runs.push_back(
        {isPrefill ? formatv("prefill on {0} ({1} tokens)",
                             options.prefill.grid, prompt.size())
                         .str()
                   : formatv("decode step {0} on {1} (position {2})", step,
                             options.decode.grid, position)
                         .str(),
         isPrefill ? &*prefillProgram : &decodeProgram, &tracedRuns[i],
         start});
    start += tracedRuns[i].stats.cycles;
  }
  std::error_code ec;
  raw_fd_ostream os(options.tracePath, ec, sys::fs::OF_Text);
  if (ec)
    return generateError(options.tracePath + ": cannot write: " +
                         ec.message());
  rt::writeChromeTrace(runs, os);
  return flushOutput(os, options.tracePath);
}

json::Value Generation::statsJSON() const {
  json::Object stats;
  stats["prompt_tokens"] = int64_t(prompt.size());
  stats["generated_tokens"] = int64_t(generated.size());
  stats["stop"] = stopReason;
  stats["kv_handoff"] = handoff;
  if (handoff == "on-chip")
    stats["kv_handoff_cycles"] = handoffCycles;
  if (!handoffNote.empty())
    stats["kv_handoff_note"] = handoffNote;
  stats["kv_token_limit"] = tokenLimit;
  double ttft = prefillStats ? prefillStats->seconds
                             : (decodeStats.empty() ? 0 : decodeStats[0].seconds);
  stats["time_to_first_token_s"] = ttft;
  if (prefillStats)
    stats["prefill"] = rt::statsToJSON(*prefillStats);
  json::Array steps;
  double decodeSeconds = 0;
  // Without a prefill the first decode run yields the first token.
  size_t firstOutputStep = prefillProgram ? 0 : 1;
  int64_t timed = 0;
  for (size_t i = 0; i < decodeStats.size(); ++i) {
    steps.push_back(decodeStats[i].cycles);
    if (i >= firstOutputStep) {
      decodeSeconds += decodeStats[i].seconds;
      ++timed;
    }
  }
  stats["decode_step_cycles"] = std::move(steps);
  if (timed) {
    stats["time_per_output_token_s"] = decodeSeconds / timed;
    stats["tokens_per_second"] = timed / decodeSeconds;
  }
  if (!decodeStats.empty())
    stats["decode"] = rt::statsToJSON(decodeStats.back());
  if (options.check)
    stats["check_max_relative_error"] = worstError;
  stats["run"] = provenance();
  return stats;
}

json::Object Generation::provenance() const {
  json::Object made = toolProvenance("wafer-run generate");
  made["model"] = options.model;
  if (!options.tokenizer.empty())
    made["tokenizer"] = options.tokenizer;
  made["prefill_grid"] = options.prefill.grid;
  made["prefill_heads"] = compileOptionText(options.prefill, "prefill-heads");
  made["decode_grid"] = options.decode.grid;
  made["target"] = options.decode.target;
  for (const char *option : {"dtype", "gemm", "allreduce", "kv"})
    made[option] = compileOptionText(options.decode, option);
  made["ktree_k"] = options.decode.ktreeK;
  made["kv_handoff_on_chip"] = options.handoffOnChip;
  made["temperature"] = options.temperature;
  made["top_k"] = options.topK;
  made["top_p"] = options.topP;
  made["seed"] = int64_t(options.seed);
  made["mode"] = "functional";
  made["threads"] = int64_t(options.emulator.threads);
  return made;
}

void Generation::report() const {
  json::Value value = statsJSON();
  const json::Object &stats = *value.getAsObject();
  raw_ostream &os = errs();
  os << formatv("prompt {0} tokens, generated {1} (stopped: {2})\n",
                prompt.size(), generated.size(), stopReason);
  if (prefillStats)
    os << formatv("prefill on {0}: {1} cycles = {2:e3} s (time to first "
                  "token); max SRAM per core {3} bytes, routes {4}\n",
                  options.prefill.grid, prefillStats->cycles,
                  prefillStats->seconds, prefillStats->maxSramBytesPerCore,
                  prefillStats->maxRoutesPerCore);
  if (!decodeStats.empty()) {
    int64_t sram = 0, routes = 0;
    for (const rt::RunStats &s : decodeStats) {
      sram = std::max(sram, s.maxSramBytesPerCore);
      routes = std::max(routes, s.maxRoutesPerCore);
    }
    os << formatv("decode on {0}: {1} steps, first {2} cycles, last {3} "
                  "cycles; max SRAM per core {4} bytes, routes {5}\n",
                  options.decode.grid, decodeStats.size(),
                  decodeStats.front().cycles, decodeStats.back().cycles, sram,
                  routes);
  }
  if (auto tpot = stats.getNumber("time_per_output_token_s"))
    os << formatv("time per output token {0:e3} s = {1} tokens/s per "
                  "request\n",
                  *tpot, formatRate(*stats.getNumber("tokens_per_second")));
  if (!prefillProgram && !decodeStats.empty())
    os << formatv("time to first token {0:e3} s (no prefill: the prompt's "
                  "one token ran as the first decode step)\n",
                  decodeStats.front().seconds);
  if (handoff == "on-chip")
    os << formatv("KV caches: the prefill handed its keys and values to the "
                  "decode caches on chip ({0} cycles of its time, "
                  "mesh.kv_handoff); ",
                  handoffCycles);
  else if (handoff == "host")
    os << "KV caches: the prefill's moved to the decode grid through the "
          "host" +
              (handoffNote.empty() ? std::string()
                                   : " (on chip failed: " + handoffNote + ")") +
              "; ";
  else
    os << "KV caches: ";
  os << formatv("room for {0} tokens on {1}, kept in SRAM between decode "
                "steps\n",
                tokenLimit, options.decode.grid);
  if (options.check)
    os << formatv("check: every step's logits match the host evaluator "
                  "(largest relative error {0:e2}, tolerance {1:e2})\n",
                  worstError, options.tolerance);
}

Error Generation::run() {
  if (Error e = prepareTokens())
    return e;
  if (Error e = compilePrograms())
    return e;
  if (tokenizer) {
    std::vector<int64_t> promptIds(prompt.begin(), prompt.end());
    Expected<std::string> promptText = tokenizer->decode(promptIds);
    if (!promptText)
      return promptText.takeError();
    outs() << *promptText;
    streamed = true;
    // After an empty prompt (BOS alone) the new text starts the text.
    text.emplace(*tokenizer, /*atStart=*/promptText->empty());
  }
  if (Error e = prefill())
    return e;
  if (Error e = decode())
    return e;
  if (text) {
    std::string rest = text->finish();
    generatedText += rest;
    outs() << rest;
  }
  outs() << "\n";
  outs().flush();
  streamed = false;
  report();
  if (!options.statsPath.empty()) {
    std::error_code ec;
    raw_fd_ostream os(options.statsPath, ec, sys::fs::OF_Text);
    if (ec)
      return generateError(options.statsPath + ": cannot write: " +
                           ec.message());
    os << formatv("{0:2}", statsJSON()) << "\n";
    if (Error error = flushOutput(os, options.statsPath))
      return error;
  }
  if (Error e = writeTrace())
    return e;
  if (options.json) {
    json::Object line{{"prompt_tokens", json::Array(prompt)},
                      {"generated_tokens", json::Array(generated)},
                      {"stats", statsJSON()}};
    if (tokenizer)
      line["text"] = generatedText;
    outs() << formatv("{0}", json::Value(std::move(line))) << "\n";
  }
  if (stopReason == "capacity")
    return generateError(formatv(
        "decode on {0}: the KV caches are full after {1} generated tokens "
        "({2} tokens in all, the most the caches hold on this grid)",
        options.decode.grid, generated.size(), tokenLimit));
  return Error::success();
}

} // namespace

int wafer::runGenerateCommand(const GenerateOptions &options) {
  Generation generation(options);
  if (Error e = generation.run()) {
    if (generation.midLine())
      outs() << "\n";
    outs().flush();
    errs() << "error: " << toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
