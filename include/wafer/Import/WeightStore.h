//===- WeightStore.h - Weights from any checkpoint --------------*- C++ -*-===//
//
// What `tfm.weight "name" from "file"` refers to: an ONNX initializer, a GGUF
// tensor or a safetensors tensor (a file, an index json or a Hugging Face
// directory). The kind is decided by the file: a directory, .json or
// .safetensors is safetensors, the 'GGUF' magic is GGUF, anything else ONNX.
// Each file is opened once and kept mapped.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_IMPORT_WEIGHTSTORE_H
#define WAFER_IMPORT_WEIGHTSTORE_H

#include "wafer/Import/Checkpoint.h"

namespace wafer {

/// `path` made absolute (against the working directory, once, when a
/// module is written): what importers record as a weight's file.
std::string absolutePath(llvm::StringRef path);

/// Where the weight file `source`, named by a module read from
/// `modulePath`, is: an absolute path as it is; a relative one (written by
/// hand) relative to the module's directory, or else the file of that name
/// next to the module. Never the working directory.
std::string resolveWeightSource(llvm::StringRef source,
                                llvm::StringRef modulePath);

class WeightStore {
public:
  WeightStore();
  ~WeightStore();
  /// The tensor `name` as stored (GGUF q/k rows stay in pair order),
  /// dequantised to float in row-major order. In a checkpoint, a canonical
  /// LLaMA name ("layers.0.attn_q", "output", ...) that is not a stored name
  /// reads that role through LlamaCheckpoint: q/k rows in rotate-half order
  /// whatever the format, "output" falling back to the tied embedding.
  llvm::Expected<WeightData> load(llvm::StringRef file, llvm::StringRef name);
  /// The shape load would give, from the file's metadata alone.
  llvm::Expected<std::vector<int64_t>> shape(llvm::StringRef file,
                                             llvm::StringRef name);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace wafer

#endif // WAFER_IMPORT_WEIGHTSTORE_H
