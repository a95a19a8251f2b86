//===- wafer-translate.cpp - Import models, emit and dump bundles ---------===//
#include "TokenizeTool.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Target/BundleEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Static shape for a graph input of --import-onnx, "
                   "NAME=D0xD1x... (binds dynamic dimensions)"));

int main(int argc, char **argv) {
  if (wafer::isTokenizerCommand(argc, argv))
    return wafer::runTokenizerCommand(argc, argv);
  mlir::TranslateToMLIRRegistration importOnnx(
      "import-onnx", "Import an ONNX model as a tfm module",
      [](llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context)
          -> mlir::OwningOpRef<mlir::Operation *> {
        llvm::StringRef path =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                ->getBufferIdentifier();
        wafer::OnnxImportOptions options;
        for (const std::string &text : inputShapes)
          if (llvm::Error error = wafer::parseInputShape(text, options)) {
            llvm::errs() << "error: " << llvm::toString(std::move(error))
                         << "\n";
            return nullptr;
          }
        auto module = wafer::importOnnxFile(path, context, options);
        if (!module) {
          // The message already names the file and node: print it as is.
          llvm::errs() << "error: " << llvm::toString(module.takeError())
                       << "\n";
          return nullptr;
        }
        return mlir::OwningOpRef<mlir::Operation *>(module->release());
      },
      [](mlir::DialectRegistry &registry) {
        registry.insert<wafer::tfm::TfmDialect, mlir::func::FuncDialect>();
      });
  wafer::registerBundleTranslations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "wafer translations: ONNX import, program bundles\n"));
}
