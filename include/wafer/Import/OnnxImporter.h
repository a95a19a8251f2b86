//===- OnnxImporter.h - ONNX models to tfm ----------------------*- C++ -*-===//
#ifndef WAFER_IMPORT_ONNXIMPORTER_H
#define WAFER_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace wafer {

/// Imports an ONNX model as a tfm module with one function @main: graph
/// inputs become arguments (attribute `tfm.name`), initializers become
/// `tfm.weight` references to `path`, the outputs' names are listed in the
/// function's `tfm.output_names`. Node names become locations. Errors are
/// one line, starting with the file name.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context);

/// A weight read from its store.
struct WeightData {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// Reads initializers from ONNX files, parsing each file once.
class OnnxWeightStore {
public:
  OnnxWeightStore();
  ~OnnxWeightStore();
  llvm::Expected<WeightData> load(llvm::StringRef path, llvm::StringRef name);

private:
  struct Model;
  llvm::StringMap<std::unique_ptr<Model>> models;
};

} // namespace wafer

#endif // WAFER_IMPORT_ONNXIMPORTER_H
