//===- LlamaCheckpoint.h - LLaMA config and tensor roles --------*- C++ -*-===//
//
// A LLaMA model on top of a Checkpoint: hyperparameters from GGUF metadata or
// a Hugging Face config.json, every tensor mapped from either naming scheme
// to one canonical role, shapes checked against the config, and q/k rows
// delivered in the RoPE row order the caller asks for.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_IMPORT_LLAMACHECKPOINT_H
#define WAFER_IMPORT_LLAMACHECKPOINT_H

#include "wafer/Import/Checkpoint.h"

#include "llvm/Support/raw_ostream.h"

namespace wafer {

struct LlamaConfig {
  int64_t hiddenSize = 0, numLayers = 0, numHeads = 0, numKVHeads = 0,
          headDim = 0, intermediateSize = 0, vocabSize = 0;
  double rmsEps = 1e-6, ropeTheta = 10000.0;
  bool tiedEmbeddings = false;
  std::optional<int64_t> bosId, maxContext;
  /// Hugging Face configs may list several end-of-sequence ids.
  std::vector<int64_t> eosIds;
};

/// From GGUF metadata (general.architecture must be "llama").
llvm::Expected<LlamaConfig> readGgufConfig(const Checkpoint &gguf);
/// From the text of a Hugging Face config.json (model_type or architectures
/// must say llama); `path` is for messages.
llvm::Expected<LlamaConfig> readHfConfig(llvm::StringRef path,
                                         llvm::StringRef text);

enum class LlamaRole {
  TokenEmbd,
  AttnNorm,
  AttnQ,
  AttnK,
  AttnV,
  AttnOutput,
  FfnNorm,
  FfnGate,
  FfnUp,
  FfnDown,
  OutputNorm,
  Output
};

/// A role, and its layer for per-layer roles (-1 otherwise).
struct LlamaTensorName {
  LlamaRole role;
  int64_t layer = -1;
  bool operator==(const LlamaTensorName &o) const {
    return role == o.role && layer == o.layer;
  }
};

/// "token_embd", "layers.3.attn_q", ..., "output_norm", "output".
std::string canonicalName(LlamaTensorName name);
/// The inverse of canonicalName; nullopt for other names.
std::optional<LlamaTensorName> parseCanonicalName(llvm::StringRef name);
/// The role of a stored tensor name (GGUF "blk.3.attn_q.weight", Hugging
/// Face "model.layers.3.self_attn.q_proj.weight"); nullopt for others.
std::optional<LlamaTensorName> parseTensorName(CheckpointFormat format,
                                               llvm::StringRef stored);
std::string storedName(CheckpointFormat format, LlamaTensorName name);
/// The row-major shape a role has under `config` (linear weights are
/// [out, in] in both formats once GGUF's dims are reversed).
std::vector<int64_t> expectedShape(const LlamaConfig &config, LlamaRole role);

/// Reorders the rows of a q or k projection [heads * headDim, cols] within
/// each head: from adjacent pairs (2i, 2i+1) to rotate-half (i, i + D/2), the
/// inverse of llama.cpp's permute (reshape(heads, 2, D/2, cols).swapaxes(1,
/// 2)); and back.
void permutePairsToRotateHalf(std::vector<float> &values, int64_t heads,
                              int64_t headDim, int64_t cols);
void permuteRotateHalfToPairs(std::vector<float> &values, int64_t heads,
                              int64_t headDim, int64_t cols);

class LlamaCheckpoint {
public:
  struct Tensor {
    LlamaTensorName name;
    const TensorInfo *info;
  };

  /// Opens a GGUF file or a safetensors file / index / directory (which
  /// needs config.json next to it), maps every tensor to its role and checks
  /// its shape; a missing tensor is an error.
  static llvm::Expected<LlamaCheckpoint> open(llvm::StringRef path);

  const Checkpoint &checkpoint() const { return *ckpt; }
  const LlamaConfig &config() const { return cfg; }
  /// Where the config came from (the GGUF file or config.json), for messages.
  llvm::StringRef configSource() const { return configPath; }
  /// Every role of the model in order (no Output when embeddings are tied).
  const std::vector<Tensor> &tensors() const { return roles; }
  const Tensor *find(LlamaTensorName name) const;
  /// Reads a role's tensor; q and k rows come in `order` (the checkpoint's
  /// own order is ropeOrder()). A tied Output reads the embedding.
  llvm::Expected<WeightData>
  read(LlamaTensorName name, RopeOrder order = RopeOrder::RotateHalf) const;
  RopeOrder ropeOrder() const { return ckpt->ropeOrder(); }

  /// The config, RoPE order and every role (canonical name, stored name,
  /// shape, type), one per line.
  void print(llvm::raw_ostream &os) const;

private:
  std::unique_ptr<Checkpoint> ckpt;
  LlamaConfig cfg;
  std::string configPath;
  std::vector<Tensor> roles;
};

} // namespace wafer

#endif // WAFER_IMPORT_LLAMACHECKPOINT_H
