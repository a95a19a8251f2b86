//===- wafer-translate.cpp - Import models, emit and dump bundles ---------===//
//
// One translation per run, from the input file (or stdin) to -o. The main is
// wafer's rather than mlirTranslateMain so that opening the input and every
// diagnostic follow the one-line `error:` convention.
//
//===----------------------------------------------------------------------===//
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Support/ToolSupport.h"
#include "wafer/Target/BundleEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::OptionCategory category("wafer-translate options");

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input file>"),
                                                llvm::cl::init("-"),
                                                llvm::cl::cat(category));
static llvm::cl::opt<std::string> outputFilename("o",
                                                 llvm::cl::desc("Output file"),
                                                 llvm::cl::init("-"),
                                                 llvm::cl::cat(category));
static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Static shape for a graph input of --import-onnx, "
                   "NAME=D0xD1x... (binds dynamic dimensions)"),
    llvm::cl::cat(category));

static void registerImportOnnx() {
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
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  wafer::hideForeignOptions({&category});
  registerImportOnnx();
  wafer::registerBundleTranslations();
  llvm::cl::opt<const mlir::Translation *, false, mlir::TranslationParser>
      translation(llvm::cl::desc("Translation to perform"),
                  llvm::cl::cat(category));
  mlir::registerAsmPrinterCLOptions();
  if (!wafer::parseCommandLine(
          argc, argv, "wafer translations: ONNX import, program bundles\n"))
    return 1;
  if (!translation) {
    llvm::errs() << "error: no translation given (--import-onnx, "
                    "--emit-bundle or --dump-bundle)\n";
    return 1;
  }
  auto input = wafer::openInputFile(inputFilename);
  if (!input) {
    llvm::errs() << "error: " << llvm::toString(input.takeError()) << "\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "error: " << outputFilename << ": cannot write: "
                 << llvm::StringRef(error).split('\n').first << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  wafer::OneLineDiagnostics diagnostics(&context);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  if (mlir::failed((*translation)(sourceMgr, output->os(), &context)))
    return 1;
  output->keep();
  return 0;
}
