//===- EvalCommand.h - wafer-run eval ---------------------------*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_EVALCOMMAND_H
#define WAFER_TOOLS_WAFER_RUN_EVALCOMMAND_H

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Runtime/NDArray.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace wafer {
/// The import options of an ONNX model run on `inputsPath` (may be empty):
/// --input-shape and --dim-param bindings, and the .npz arrays' shapes as
/// hints for the dynamic dimensions the bindings leave open.
llvm::Expected<OnnxImportOptions>
importOptions(llvm::ArrayRef<std::string> inputShapes,
              llvm::ArrayRef<std::string> dimParams,
              llvm::StringRef inputsPath);

/// Whether `path` is a checkpoint (a GGUF file, by its magic or name, a
/// safetensors file, or a directory): wafer-run generate's input, not a
/// model the other commands compile.
bool isCheckpointPath(llvm::StringRef path);

/// The module a model file holds: an MLIR module (`.mlir`), its relative
/// weight files resolved (resolveWeightSource) and, with
/// `checkWeightShapes` (whenever the weights will be read), each
/// tfm.weight's declared shape checked against its file's metadata; or
/// else an ONNX model imported with --input-shape / --dim-param bindings
/// (importOptions).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
loadModule(llvm::StringRef path, llvm::ArrayRef<std::string> inputShapes,
           llvm::ArrayRef<std::string> dimParams, llvm::StringRef inputsPath,
           mlir::MLIRContext &context, bool checkWeightShapes);

/// An error unless `weight` declares the shape its file stores (`stored`):
/// a weight read in another shape of the same size would run with its
/// values reinterpreted.
llvm::Error checkDeclaredShape(tfm::WeightOp weight,
                               llvm::ArrayRef<int64_t> stored,
                               llvm::StringRef modulePath);

/// Parses an MLIR source file (a tfm, mesh or core module); a file that
/// does not parse is an error with the parser's first diagnostic and its
/// place.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseMlirFile(llvm::StringRef path, mlir::MLIRContext &context);

/// Evaluates `module` (a tfm module from `modelPath`, whose directory
/// resolves relative weight files) on the host reference with the arrays in
/// `inputs` (by the arguments' tfm.name). An error about the arrays starts
/// with `inputsPath` when one is given, one in evaluating with `modelPath`
/// (and "on `inputsPath`").
llvm::Expected<rt::NDArrayMap> evaluateOnHost(mlir::ModuleOp module,
                                              llvm::StringRef modelPath,
                                              const rt::NDArrayMap &inputs,
                                              llvm::StringRef inputsPath = "");

/// Runs `wafer-run eval`; returns the exit code (errors printed as one line).
int runEvalCommand(llvm::StringRef modelPath,
                   llvm::ArrayRef<std::string> inputShapes,
                   llvm::ArrayRef<std::string> dimParams,
                   llvm::StringRef inputsPath, llvm::StringRef outputsPath);
} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_EVALCOMMAND_H
