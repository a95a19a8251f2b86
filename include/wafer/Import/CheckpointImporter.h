//===- CheckpointImporter.h - LLaMA checkpoints to raised tfm ---*- C++ -*-===//
#ifndef WAFER_IMPORT_CHECKPOINTIMPORTER_H
#define WAFER_IMPORT_CHECKPOINTIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace wafer {

struct CheckpointImportOptions {
  /// Prefill of `seqLen` tokens, or (when pastLen > 0) one decode step after
  /// `pastLen` cached tokens.
  int64_t seqLen = 0;
  int64_t pastLen = 0;
  /// Build only the first `layers` decoder layers (0: all of them); the
  /// module then carries `tfm.layers` and `tfm.model_layers` as
  /// tfm-keep-layers sets them.
  int64_t layers = 0;
  /// The RoPE factors of the graph's positions are inputs `rope.cos` and
  /// `rope.sin` [1, 1, L, D] (ropeFactors) rather than constants, so that
  /// one decode program serves every position of a generation.
  bool ropeInputs = false;
};

struct LlamaConfig;

/// cos and sin of rotate-half RoPE at `position` ([D] each), rounded to
/// float at each step as the exporter's graph computes them.
struct RopeFactors {
  std::vector<float> cos, sin;
};
RopeFactors ropeFactors(const LlamaConfig &config, int64_t position);

/// Builds the raised tfm module of a GGUF or safetensors LLaMA checkpoint
/// with the interface of export_llama.py's graphs: prefill takes
/// `input_ids [1, L]` and returns `logits [1, L, V]` and
/// `present.{i}.key/value [1, KVH, L, D]`; decode takes `input_ids [1, 1]`
/// and `past.{i}.key/value [1, KVH, P, D]` and returns logits and presents
/// of length P + 1. Weights are `tfm.weight` references by canonical name
/// ("layers.0.attn_q") into `path`, which the weight store reads with q/k
/// rows in rotate-half order, so the graph uses rotate-half RoPE for both
/// formats.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importCheckpoint(llvm::StringRef path, mlir::MLIRContext *context,
                 const CheckpointImportOptions &options);

} // namespace wafer

#endif // WAFER_IMPORT_CHECKPOINTIMPORTER_H
