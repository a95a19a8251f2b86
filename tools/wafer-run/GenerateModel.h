//===- GenerateModel.h - The graphs wafer-run generate runs -----*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_GENERATEMODEL_H
#define WAFER_TOOLS_WAFER_RUN_GENERATEMODEL_H

#include "wafer/Import/CheckpointImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <vector>

namespace wafer {

/// Where generate's graphs come from: a GGUF or safetensors checkpoint (the
/// graphs built from its config, lib/Import/CheckpointImporter) or an
/// exported ONNX directory (prefill.onnx and decode.onnx as
/// python/wafer/export_llama.py writes them). Both give the interface of the
/// exporter's graphs: prefill takes `input_ids [1, L]` and returns `logits`
/// and `present.{i}.key/value`; decode takes `input_ids [1, 1]` and
/// `past.{i}.key/value`.
class GenerateModel {
public:
  /// A directory holding decode.onnx is an exported ONNX directory;
  /// anything else is opened as a checkpoint.
  static llvm::Expected<std::unique_ptr<GenerateModel>>
  open(llvm::StringRef path, mlir::MLIRContext &context);
  virtual ~GenerateModel() = default;

  int64_t vocabSize() const { return vocab; }
  /// End-of-sequence ids the model names (the tokenizer may add its own).
  const std::vector<int64_t> &eosIds() const { return eos; }
  /// The longest sequence the model supports, when it says.
  std::optional<int64_t> maxContext() const { return context; }

  /// The prefill graph of `seqLen` tokens.
  virtual llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  prefillGraph(int64_t seqLen) = 0;
  /// One decode step compiled for a past of `past` tokens, raised, with its
  /// RoPE factors the inputs `rope.cos` and `rope.sin`, so one program
  /// serves every position.
  virtual llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  decodeGraph(int64_t past) = 0;
  /// The values of `rope.cos` and `rope.sin` at `position`, in the order of
  /// the inputs' elements.
  virtual RopeFactors ropeFactors(int64_t position) const = 0;

protected:
  int64_t vocab = 0;
  std::vector<int64_t> eos;
  std::optional<int64_t> context;
};

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_GENERATEMODEL_H
