//===- OnnxFuzzer.cpp - ONNX importer --------------------------------------===//
#include "FuzzSupport.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

using namespace wafer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput(data, size, ".onnx");
  mlir::MLIRContext context;
  context.loadDialect<tfm::TfmDialect, mlir::func::FuncDialect>();
  // Diagnostics are the expected outcome; keep them off stderr.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  auto module = importOnnxFile(path, &context);
  fuzz::ignore(module);
  return 0;
}
