//===- OnnxImporter.h - ONNX models to tfm ----------------------*- C++ -*-===//
#ifndef WAFER_IMPORT_ONNXIMPORTER_H
#define WAFER_IMPORT_ONNXIMPORTER_H

#include "wafer/Import/Checkpoint.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace wafer {

struct OnnxImportOptions {
  /// Static shapes for graph inputs, by input name; they bind the inputs'
  /// dynamic dimensions (and must agree with their static ones).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Shapes of the arrays the model will run on (wafer-run's --inputs), by
  /// name: they bind an input's dynamic dimensions when inputShapes does
  /// not name it. Names that are not graph inputs are ignored.
  std::map<std::string, std::vector<int64_t>> shapeHints;
  /// Values of named dynamic dimensions (ONNX `dim_param`), by name, for
  /// every graph input that has them (ONNX Runtime's free dimension
  /// overrides). They must agree with inputShapes and shapeHints.
  std::map<std::string, int64_t> dimParams;
};

/// Parses "name=1x16" into `options`; the error says what is wrong.
llvm::Error parseInputShape(llvm::StringRef text, OnnxImportOptions &options);

/// Parses "past=8" (--dim-param) into `options`.
llvm::Error parseDimParam(llvm::StringRef text, OnnxImportOptions &options);

/// Imports an ONNX model as a tfm module with one function @main: graph
/// inputs become arguments (attribute `tfm.name`), large initializers become
/// `tfm.weight` references to `path` (their data, external or not, is never
/// read), small ones `tfm.constant`; the outputs' names are listed in the
/// function's `tfm.output_names`. Node names become locations. The model
/// must pass the ONNX checker. Errors are one line, starting with the file
/// name, naming the node and op where there is one.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context,
               const OnnxImportOptions &options = {});

/// Reads initializers from ONNX files (external data is memory-mapped),
/// parsing each file once.
class OnnxWeightStore {
public:
  OnnxWeightStore();
  ~OnnxWeightStore();
  llvm::Expected<WeightData> load(llvm::StringRef path, llvm::StringRef name);
  /// The initializer's shape, without reading its values.
  llvm::Expected<std::vector<int64_t>> shape(llvm::StringRef path,
                                             llvm::StringRef name);

private:
  struct Model;
  llvm::Expected<const onnx::TensorProto *> initializer(llvm::StringRef path,
                                                        llvm::StringRef name);
  llvm::StringMap<std::unique_ptr<Model>> models;
};

} // namespace wafer

#endif // WAFER_IMPORT_ONNXIMPORTER_H
