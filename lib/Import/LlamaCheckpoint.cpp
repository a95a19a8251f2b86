//===- LlamaCheckpoint.cpp - LLaMA hyperparameters and tensor roles -------===//
#include "wafer/Import/LlamaCheckpoint.h"
#include "wafer/Runtime/BoundedJson.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace wafer;

namespace {

struct RoleNames {
  LlamaRole role;
  bool perLayer;
  const char *canonical, *gguf, *hf;
};
// Per-layer names are completed with the layer: GGUF "blk.N.<gguf>.weight",
// Hugging Face "model.layers.N.<hf>.weight".
constexpr RoleNames kRoles[] = {
    {LlamaRole::TokenEmbd, false, "token_embd", "token_embd",
     "model.embed_tokens"},
    {LlamaRole::AttnNorm, true, "attn_norm", "attn_norm", "input_layernorm"},
    {LlamaRole::AttnQ, true, "attn_q", "attn_q", "self_attn.q_proj"},
    {LlamaRole::AttnK, true, "attn_k", "attn_k", "self_attn.k_proj"},
    {LlamaRole::AttnV, true, "attn_v", "attn_v", "self_attn.v_proj"},
    {LlamaRole::AttnOutput, true, "attn_output", "attn_output",
     "self_attn.o_proj"},
    {LlamaRole::FfnNorm, true, "ffn_norm", "ffn_norm",
     "post_attention_layernorm"},
    {LlamaRole::FfnGate, true, "ffn_gate", "ffn_gate", "mlp.gate_proj"},
    {LlamaRole::FfnUp, true, "ffn_up", "ffn_up", "mlp.up_proj"},
    {LlamaRole::FfnDown, true, "ffn_down", "ffn_down", "mlp.down_proj"},
    {LlamaRole::OutputNorm, false, "output_norm", "output_norm", "model.norm"},
    {LlamaRole::Output, false, "output", "output", "lm_head"},
};

const RoleNames &namesOf(LlamaRole role) {
  return kRoles[static_cast<int>(role)];
}

std::string shapeText(const std::vector<int64_t> &shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// Checks that make the config usable for the graph (and the shapes).
llvm::Error validate(llvm::StringRef path, LlamaConfig &c) {
  auto bad = [&](const llvm::Twine &what) {
    return checkpointError(path, what);
  };
  if (c.hiddenSize <= 0 || c.numLayers <= 0 || c.numHeads <= 0 ||
      c.numKVHeads <= 0 || c.intermediateSize <= 0 || c.vocabSize <= 0)
    return bad("hidden size, layers, heads, KV heads, intermediate size and "
               "vocabulary size must be positive");
  if (c.numHeads % c.numKVHeads)
    return bad(llvm::formatv("{0} attention heads are not a multiple of {1} "
                             "KV heads",
                             c.numHeads, c.numKVHeads)
                   .str());
  if (c.headDim == 0) {
    if (c.hiddenSize % c.numHeads)
      return bad(llvm::formatv("hidden size {0} is not a multiple of {1} "
                               "heads",
                               c.hiddenSize, c.numHeads)
                     .str());
    c.headDim = c.hiddenSize / c.numHeads;
  }
  if (c.headDim <= 0 || c.headDim % 2)
    return bad("head dimension " + llvm::Twine(c.headDim) +
               " must be positive and even for RoPE");
  if (!(c.rmsEps > 0) || !(c.ropeTheta > 0) || !std::isfinite(c.rmsEps) ||
      !std::isfinite(c.ropeTheta))
    return bad("rms epsilon and rope theta must be positive and finite");
  if (c.maxContext && *c.maxContext <= 0)
    return bad("context length " + llvm::Twine(*c.maxContext) +
               " must be positive");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<LlamaConfig> wafer::readGgufConfig(const Checkpoint &gguf) {
  llvm::StringRef path = gguf.path();
  const GgufValue *arch = gguf.metadataValue("general.architecture");
  if (!arch || !arch->asString())
    return checkpointError(path, "has no general.architecture string");
  if (*arch->asString() != "llama")
    return checkpointError(path, "general.architecture is '" +
                                     printable(*arch->asString()) +
                                     "', not 'llama'");
  auto integer =
      [&](llvm::StringRef key,
          std::optional<int64_t> fallback) -> llvm::Expected<int64_t> {
    const GgufValue *v = gguf.metadataValue(key);
    if (!v && fallback)
      return *fallback;
    if (!v || !v->asInt())
      return checkpointError(path, "metadata '" + key + "' is " +
                                       (v ? "not an integer" : "missing"));
    return *v->asInt();
  };
  auto real = [&](llvm::StringRef key,
                  double fallback) -> llvm::Expected<double> {
    const GgufValue *v = gguf.metadataValue(key);
    if (!v)
      return fallback;
    if (!v->asFloat())
      return checkpointError(path, "metadata '" + key + "' is not a float");
    return *v->asFloat();
  };
  LlamaConfig c;
  auto read = [&](int64_t &out, llvm::StringRef key,
                  std::optional<int64_t> fallback) -> llvm::Error {
    auto v = integer(key, fallback);
    if (!v)
      return v.takeError();
    out = *v;
    return llvm::Error::success();
  };
  if (auto e = read(c.hiddenSize, "llama.embedding_length", {}))
    return std::move(e);
  if (auto e = read(c.numLayers, "llama.block_count", {}))
    return std::move(e);
  if (auto e = read(c.numHeads, "llama.attention.head_count", {}))
    return std::move(e);
  if (auto e = read(c.numKVHeads, "llama.attention.head_count_kv", c.numHeads))
    return std::move(e);
  if (auto e = read(c.intermediateSize, "llama.feed_forward_length", {}))
    return std::move(e);
  if (auto e = read(c.headDim, "llama.rope.dimension_count", 0))
    return std::move(e);
  // 0 stands for "not given" (the head dimension is then derived).
  if (c.headDim == 0 && gguf.metadataValue("llama.rope.dimension_count"))
    return checkpointError(path, "metadata 'llama.rope.dimension_count' is 0");
  auto eps = real("llama.attention.layer_norm_rms_epsilon", 1e-5);
  auto theta = real("llama.rope.freq_base", 10000.0);
  if (!eps)
    return eps.takeError();
  if (!theta)
    return theta.takeError();
  c.rmsEps = *eps;
  c.ropeTheta = *theta;
  if (const GgufValue *tokens = gguf.metadataValue("tokenizer.ggml.tokens");
      tokens && tokens->asArray()) {
    c.vocabSize = tokens->asArray()->size();
    if (const GgufValue *size = gguf.metadataValue("llama.vocab_size");
        size && size->asInt() != c.vocabSize)
      return checkpointError(
          path, size->asInt()
                    ? llvm::formatv("metadata 'llama.vocab_size' ({0}) "
                                    "differs from the {1} tokens of "
                                    "tokenizer.ggml.tokens",
                                    *size->asInt(), c.vocabSize)
                          .str()
                    : "metadata 'llama.vocab_size' is not an integer");
  } else if (auto e = read(c.vocabSize, "llama.vocab_size", {}))
    return checkpointError(path, "has neither tokenizer.ggml.tokens nor "
                                 "llama.vocab_size (" +
                                     llvm::toString(std::move(e)) + ")");
  if (const GgufValue *v = gguf.metadataValue("llama.context_length")) {
    if (!v->asInt())
      return checkpointError(path, "llama.context_length is not an integer");
    c.maxContext = v->asInt();
  }
  if (const GgufValue *v = gguf.metadataValue("tokenizer.ggml.bos_token_id"))
    c.bosId = v->asInt();
  if (const GgufValue *v = gguf.metadataValue("tokenizer.ggml.eos_token_id"))
    if (v->asInt())
      c.eosIds.push_back(*v->asInt());
  // llama.cpp uses the embedding as the output projection when there is no
  // output.weight; GGUF has no other flag for it.
  c.tiedEmbeddings = !gguf.find("output.weight");
  if (llvm::Error e = validate(path, c))
    return std::move(e);
  return c;
}

llvm::Expected<LlamaConfig> wafer::readHfConfig(llvm::StringRef path,
                                                llvm::StringRef text) {
  auto parsed = parseBoundedJson(text);
  if (!parsed)
    return checkpointError(path, "not valid JSON: " +
                                     llvm::toString(parsed.takeError()));
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o)
    return checkpointError(path, "is not a JSON object");
  bool llama =
      o->getString("model_type") == std::optional<llvm::StringRef>("llama");
  if (const llvm::json::Array *archs = o->getArray("architectures"))
    for (const llvm::json::Value &a : *archs)
      llama |=
          a.getAsString() == std::optional<llvm::StringRef>("LlamaForCausalLM");
  if (!llama)
    return checkpointError(
        path, "model_type is '" +
                  printable(o->getString("model_type").value_or("")) +
                  "' and architectures has no LlamaForCausalLM: not a llama "
                  "model");
  for (llvm::StringRef key : {"attention_bias", "mlp_bias"})
    if (o->getBoolean(key).value_or(false))
      return checkpointError(path, key + " is true; biases are not supported");
  if (const llvm::json::Value *scaling = o->get("rope_scaling");
      scaling && scaling->kind() != llvm::json::Value::Null)
    return checkpointError(path, "rope_scaling is set; only plain RoPE is "
                                 "supported");
  // Keys that change the maths from LLaMA's: the MLP's activation, and
  // attention over a window shorter than the context.
  for (llvm::StringRef key : {"hidden_act", "hidden_activation"})
    if (const llvm::json::Value *act = o->get(key);
        act && act->kind() != llvm::json::Value::Null &&
        !llvm::is_contained({"silu", "swish"}, act->getAsString().value_or("")))
      return checkpointError(path, key + " is neither \"silu\" nor "
                                         "\"swish\"; LLaMA's SwiGLU MLP is "
                                         "the only one supported");
  if (const llvm::json::Value *window = o->get("sliding_window");
      window && window->kind() != llvm::json::Value::Null &&
      o->getBoolean("use_sliding_window") != std::optional<bool>(false) &&
      !(window->getAsInteger() && o->getInteger("max_position_embeddings") &&
        *window->getAsInteger() >= *o->getInteger("max_position_embeddings")))
    return checkpointError(path, "sliding_window is shorter than the "
                                 "context; only attention over the whole "
                                 "context is supported");
  LlamaConfig c;
  auto integer = [&](int64_t &out, llvm::StringRef key,
                     std::optional<int64_t> fallback) -> llvm::Error {
    const llvm::json::Value *v = o->get(key);
    if ((!v || v->kind() == llvm::json::Value::Null) && fallback) {
      out = *fallback;
      return llvm::Error::success();
    }
    if (!v || !v->getAsInteger())
      return checkpointError(path,
                             key + " is " + (v ? "not an integer" : "missing"));
    out = *v->getAsInteger();
    return llvm::Error::success();
  };
  if (auto e = integer(c.hiddenSize, "hidden_size", {}))
    return std::move(e);
  if (auto e = integer(c.numLayers, "num_hidden_layers", {}))
    return std::move(e);
  if (auto e = integer(c.numHeads, "num_attention_heads", {}))
    return std::move(e);
  if (auto e = integer(c.numKVHeads, "num_key_value_heads", c.numHeads))
    return std::move(e);
  if (auto e = integer(c.intermediateSize, "intermediate_size", {}))
    return std::move(e);
  if (auto e = integer(c.vocabSize, "vocab_size", {}))
    return std::move(e);
  if (auto e = integer(c.headDim, "head_dim", 0))
    return std::move(e);
  if (const llvm::json::Value *v = o->get("head_dim");
      c.headDim == 0 && v && v->kind() != llvm::json::Value::Null)
    return checkpointError(path, "head_dim is 0");
  c.rmsEps = o->getNumber("rms_norm_eps").value_or(1e-6);
  c.ropeTheta = o->getNumber("rope_theta").value_or(10000.0);
  c.tiedEmbeddings = o->getBoolean("tie_word_embeddings").value_or(false);
  c.bosId = o->getInteger("bos_token_id");
  // Optional, but a value that is not a count would lift the limit.
  if (const llvm::json::Value *v = o->get("max_position_embeddings");
      v && v->kind() != llvm::json::Value::Null) {
    if (!v->getAsInteger())
      return checkpointError(path, "max_position_embeddings is not an integer");
    c.maxContext = *v->getAsInteger();
  }
  if (std::optional<int64_t> eos = o->getInteger("eos_token_id"))
    c.eosIds.push_back(*eos);
  else if (const llvm::json::Array *eos = o->getArray("eos_token_id"))
    for (const llvm::json::Value &id : *eos)
      if (id.getAsInteger())
        c.eosIds.push_back(*id.getAsInteger());
  if (llvm::Error e = validate(path, c))
    return std::move(e);
  return c;
}

std::string wafer::canonicalName(LlamaTensorName name) {
  const RoleNames &names = namesOf(name.role);
  if (!names.perLayer)
    return names.canonical;
  return "layers." + std::to_string(name.layer) + "." + names.canonical;
}

std::string wafer::storedName(CheckpointFormat format, LlamaTensorName name) {
  const RoleNames &names = namesOf(name.role);
  bool gguf = format == CheckpointFormat::Gguf;
  std::string base = gguf ? names.gguf : names.hf;
  if (names.perLayer)
    base = (gguf ? "blk." : "model.layers.") + std::to_string(name.layer) +
           "." + base;
  return base + ".weight";
}

std::optional<LlamaTensorName> wafer::parseTensorName(CheckpointFormat format,
                                                      llvm::StringRef stored) {
  if (!stored.consume_back(".weight"))
    return std::nullopt;
  bool gguf = format == CheckpointFormat::Gguf;
  int64_t layer = -1;
  if (stored.consume_front(gguf ? "blk." : "model.layers.")) {
    auto [number, rest] = stored.split('.');
    if (number.getAsInteger(10, layer) || layer < 0)
      return std::nullopt;
    stored = rest;
  }
  for (const RoleNames &names : kRoles)
    if (names.perLayer == (layer >= 0) &&
        stored == (gguf ? names.gguf : names.hf))
      return LlamaTensorName{names.role, layer};
  return std::nullopt;
}

std::optional<LlamaTensorName> wafer::parseCanonicalName(llvm::StringRef name) {
  int64_t layer = -1;
  if (name.consume_front("layers.")) {
    auto [number, rest] = name.split('.');
    if (number.getAsInteger(10, layer) || layer < 0)
      return std::nullopt;
    name = rest;
  }
  for (const RoleNames &names : kRoles)
    if (names.perLayer == (layer >= 0) && name == names.canonical)
      return LlamaTensorName{names.role, layer};
  return std::nullopt;
}

std::vector<int64_t> wafer::expectedShape(const LlamaConfig &c,
                                          LlamaRole role) {
  int64_t e = c.hiddenSize, q = c.numHeads * c.headDim,
          kv = c.numKVHeads * c.headDim, f = c.intermediateSize;
  switch (role) {
  case LlamaRole::TokenEmbd:
  case LlamaRole::Output:
    return {c.vocabSize, e};
  case LlamaRole::AttnNorm:
  case LlamaRole::FfnNorm:
  case LlamaRole::OutputNorm:
    return {e};
  case LlamaRole::AttnQ:
    return {q, e};
  case LlamaRole::AttnK:
  case LlamaRole::AttnV:
    return {kv, e};
  case LlamaRole::AttnOutput:
    return {e, q};
  case LlamaRole::FfnGate:
  case LlamaRole::FfnUp:
    return {f, e};
  case LlamaRole::FfnDown:
    return {e, f};
  }
  llvm_unreachable("unknown role");
}

/// Row r of head h moves to `target(r)`; `toHalf` picks the direction.
static void permuteRows(std::vector<float> &values, int64_t heads,
                        int64_t headDim, int64_t cols, bool toHalf) {
  std::vector<float> out(values.size());
  int64_t half = headDim / 2;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t s = 0; s < 2; ++s) {
        int64_t pairRow = h * headDim + 2 * i + s;
        int64_t halfRow = h * headDim + s * half + i;
        int64_t from = toHalf ? pairRow : halfRow;
        int64_t to = toHalf ? halfRow : pairRow;
        std::copy_n(values.begin() + from * cols, cols,
                    out.begin() + to * cols);
      }
  values = std::move(out);
}

void wafer::permutePairsToRotateHalf(std::vector<float> &values, int64_t heads,
                                     int64_t headDim, int64_t cols) {
  permuteRows(values, heads, headDim, cols, /*toHalf=*/true);
}

void wafer::permuteRotateHalfToPairs(std::vector<float> &values, int64_t heads,
                                     int64_t headDim, int64_t cols) {
  permuteRows(values, heads, headDim, cols, /*toHalf=*/false);
}

llvm::Expected<LlamaCheckpoint> LlamaCheckpoint::open(llvm::StringRef path) {
  LlamaCheckpoint result;
  auto ckpt = Checkpoint::open(path);
  if (!ckpt)
    return ckpt.takeError();
  result.ckpt = std::move(*ckpt);
  const Checkpoint &c = *result.ckpt;
  llvm::Expected<LlamaConfig> config = LlamaConfig();
  if (c.format() == CheckpointFormat::Gguf) {
    result.configPath = c.path().str();
    config = readGgufConfig(c);
  } else {
    if (c.hfConfigPath().empty())
      return checkpointError(path, "has no config.json next to the weights "
                                   "(needed for the hyperparameters)");
    result.configPath = c.hfConfigPath().str();
    config = readHfConfig(c.hfConfigPath(), c.hfConfigText());
  }
  if (!config)
    return config.takeError();
  result.cfg = *config;
  const LlamaConfig &cfg = result.cfg;

  for (const TensorInfo &info : c.tensors()) {
    std::optional<LlamaTensorName> name =
        parseTensorName(c.format(), info.name);
    // A tensor wafer would ignore may change the maths (a bias, GGUF's
    // rope_freqs); only RoPE's inverse frequencies (Hugging Face's
    // rotary_emb.inv_freq, GGUF's attn_rot_embd), which rope_theta gives,
    // are left out silently.
    if (!name && !llvm::StringRef(info.name).ends_with("rotary_emb.inv_freq") &&
        !llvm::StringRef(info.name).ends_with("attn_rot_embd"))
      return checkpointError(c.filePaths[info.file],
                             "tensor '" + printable(info.name) +
                                 "' is not one of a LLaMA model's");
    if (name && name->layer >= cfg.numLayers)
      return checkpointError(c.filePaths[info.file],
                             llvm::formatv("tensor '{0}' is for layer {1}, but "
                                           "{2} has {3} layers",
                                           printable(info.name), name->layer,
                                           result.configPath, cfg.numLayers)
                                 .str());
  }
  auto add = [&](LlamaTensorName name) -> llvm::Error {
    std::string stored = storedName(c.format(), name);
    const TensorInfo *info = c.find(stored);
    if (!info)
      return checkpointError(path, "missing tensor '" + stored + "' (" +
                                       canonicalName(name) + ")");
    std::vector<int64_t> expected = expectedShape(cfg, name.role);
    if (info->shape != expected)
      return checkpointError(
          c.filePaths[info->file],
          "tensor '" + stored + "' has shape " + shapeText(info->shape) +
              ", but " + result.configPath + " implies " + shapeText(expected));
    result.roles.push_back({name, info});
    return llvm::Error::success();
  };
  if (auto e = add({LlamaRole::TokenEmbd}))
    return std::move(e);
  for (int64_t layer = 0; layer < cfg.numLayers; ++layer)
    for (LlamaRole role :
         {LlamaRole::AttnNorm, LlamaRole::AttnQ, LlamaRole::AttnK,
          LlamaRole::AttnV, LlamaRole::AttnOutput, LlamaRole::FfnNorm,
          LlamaRole::FfnGate, LlamaRole::FfnUp, LlamaRole::FfnDown})
      if (auto e = add({role, layer}))
        return std::move(e);
  if (auto e = add({LlamaRole::OutputNorm}))
    return std::move(e);
  if (!cfg.tiedEmbeddings)
    if (auto e = add({LlamaRole::Output}))
      return std::move(e);
  return std::move(result);
}

const LlamaCheckpoint::Tensor *
LlamaCheckpoint::find(LlamaTensorName name) const {
  if (name.role == LlamaRole::Output && cfg.tiedEmbeddings)
    name = {LlamaRole::TokenEmbd};
  auto it =
      llvm::find_if(roles, [&](const Tensor &t) { return t.name == name; });
  return it == roles.end() ? nullptr : &*it;
}

llvm::Expected<WeightData> LlamaCheckpoint::read(LlamaTensorName name,
                                                 RopeOrder order) const {
  const Tensor *tensor = find(name);
  if (!tensor)
    return checkpointError(ckpt->path(),
                           "has no tensor for " + canonicalName(name));
  auto data = ckpt->read(tensor->info->name);
  if (!data)
    return data.takeError();
  bool rotates = name.role == LlamaRole::AttnQ || name.role == LlamaRole::AttnK;
  if (rotates && order != ropeOrder()) {
    int64_t heads =
        name.role == LlamaRole::AttnQ ? cfg.numHeads : cfg.numKVHeads;
    if (order == RopeOrder::RotateHalf)
      permutePairsToRotateHalf(data->values, heads, cfg.headDim,
                               cfg.hiddenSize);
    else
      permuteRotateHalfToPairs(data->values, heads, cfg.headDim,
                               cfg.hiddenSize);
  }
  return data;
}

void LlamaCheckpoint::print(llvm::raw_ostream &os) const {
  const LlamaConfig &c = cfg;
  os << "format: "
     << (ckpt->format() == CheckpointFormat::Gguf ? "gguf" : "safetensors")
     << " (" << ckpt->files.size() << " file"
     << (ckpt->files.size() == 1 ? "" : "s") << ")\n";
  os << "rope order: " << ropeOrderName(ropeOrder()) << "\n";
  os << llvm::formatv("config: hidden_size {0}, layers {1}, heads {2}, "
                      "kv_heads {3}, head_dim {4}, intermediate_size {5}, "
                      "vocab_size {6}, ",
                      c.hiddenSize, c.numLayers, c.numHeads, c.numKVHeads,
                      c.headDim, c.intermediateSize, c.vocabSize)
     << llvm::format("rms_eps %g, rope_theta %g", c.rmsEps, c.ropeTheta)
     << ", tied_embeddings " << (c.tiedEmbeddings ? "true" : "false");
  if (c.bosId)
    os << ", bos " << *c.bosId;
  if (!c.eosIds.empty())
    os << ", eos "
       << llvm::join(
              llvm::map_range(c.eosIds,
                              [](int64_t id) { return std::to_string(id); }),
              " ");
  if (c.maxContext)
    os << ", max_context " << *c.maxContext;
  os << "\n";
  for (const Tensor &t : roles)
    os << "tensor " << canonicalName(t.name) << " '" << printable(t.info->name)
       << "' " << shapeText(t.info->shape) << " " << typeName(t.info->type)
       << "\n";
}
