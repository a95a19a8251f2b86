//===- wafer-opt.cpp - wafer's pass driver --------------------------------===//
//
// MLIR's opt driver, with wafer's error conventions: input read and bounded
// before the parser sees it, and every error one line. The test modes
// (--verify-diagnostics, --split-input-file) and the listings go to
// MlirOptMain unchanged.
//
//===----------------------------------------------------------------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/ToolSupport.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"


static llvm::cl::OptionCategory category("wafer-opt options");
static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input file>"),
                                                llvm::cl::init("-"),
                                                llvm::cl::cat(category));
static llvm::cl::opt<std::string> outputFilename("o",
                                                 llvm::cl::desc("Output file"),
                                                 llvm::cl::init("-"),
                                                 llvm::cl::cat(category));

/// Builds the pass pipeline; MLIR prints pass-option errors straight to
/// stderr over several lines, so they are caught there and joined into one.
static mlir::LogicalResult setupPipeline(const mlir::MlirOptMainConfig &config,
                                         mlir::PassManager &pm) {
  std::string diagnostic;
  mlir::LogicalResult result = mlir::success();
  std::string captured = wafer::captureStderr([&] {
    mlir::ScopedDiagnosticHandler handler(
        pm.getContext(), [&](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
              diagnostic.empty())
            diagnostic = diag.str();
          return mlir::success();
        });
    result = config.setupPassPipeline(pm);
  });
  if (mlir::succeeded(result))
    return result;
  // "<Pass-Options-Parser>: no such option x" or "wafer-opt: for the --kv
  // option: ..." explain the diagnostic "failed to add `p` with options".
  std::string text = llvm::StringRef(diagnostic).split('\n').first.str();
  // "MLIR Textual PassPipeline Parser:1:5: error: x" points into the option.
  if (size_t at = text.find(": error: "); at != std::string::npos)
    text = "--pass-pipeline: " + text.substr(at + 9);
  {
    llvm::StringRef detail = llvm::StringRef(captured).split('\n').first.trim();
    detail = detail.substr(detail.find(": ") == llvm::StringRef::npos
                               ? 0
                               : detail.find(": ") + 2);
    detail = detail.rtrim(".!");
    if (!detail.empty())
      text += (text.empty() ? "" : ": ") + detail.str();
  }
  llvm::errs() << "error: " << text << "\n";
  return mlir::failure();
}

static int runOpt(mlir::DialectRegistry &registry,
                  const mlir::MlirOptMainConfig &config,
                  std::unique_ptr<llvm::MemoryBuffer> input) {
  mlir::MLIRContext context(registry);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  wafer::OneLineDiagnostics diagnostics(&context);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::ParserConfig parserConfig(&context);
  mlir::OwningOpRef<mlir::Operation *> module =
      mlir::parseSourceFileForTool(sourceMgr, parserConfig,
                                   !config.shouldUseExplicitModule());
  if (!module)
    return 1;
  mlir::PassManager pm(module.get()->getName(),
                       mlir::OpPassManager::Nesting::Implicit);
  pm.getContext()->printOpOnDiagnostic(false);
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  if (mlir::failed(setupPipeline(config, pm)))
    return 1;
  if (config.shouldDumpPassPipeline())
    pm.dump();
  if (mlir::failed(pm.run(*module)))
    return 1;
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "error: " << outputFilename << ": cannot write: "
                 << llvm::StringRef(error).split('\n').first << "\n";
    return 1;
  }
  if (config.shouldEmitBytecode()) {
    mlir::BytecodeWriterConfig writerConfig;
    if (auto version = config.bytecodeVersionToEmit())
      writerConfig.setDesiredBytecodeVersion(*version);
    if (mlir::failed(
            mlir::writeBytecodeToFile(module.get(), output->os(), writerConfig)))
      return 1;
  } else {
    module->print(output->os());
    output->os() << "\n";
  }
  return wafer::keepOutputFile(*output, outputFilename) ? 0 : 1;
}

/// MLIR's driver options (printing, bytecode, plugins, diagnostics
/// checks) keep working but --help lists only wafer's: -o, the passes and
/// pipelines, and --pass-pipeline. (--help-hidden lists them all.)
static void listOnlyWaferOptions() {
  llvm::StringMap<llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  // The pass list is one option, registered under every pass's name.
  const llvm::cl::Option *passList = options.lookup("wafer-compile");
  const llvm::cl::Option *pipeline = options.lookup("pass-pipeline");
  for (auto &entry : options) {
    llvm::cl::Option *option = entry.second;
    // MLIR registers its options in LLVM's general category.
    bool mlirs =
        llvm::is_contained(option->Categories, &llvm::cl::getGeneralCategory());
    if (mlirs && option != passList && option != pipeline)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  wafer::keepFreedMemory();
  wafer::hideForeignOptions({&category});
  wafer::registerTfmPasses();
  wafer::registerMeshPasses();
  wafer::registerConversionPasses();
  wafer::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<wafer::tfm::TfmDialect, wafer::mesh::MeshDialect,
                  wafer::core::CoreDialect, mlir::func::FuncDialect>();
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::tracing::DebugCounter::registerCLOptions();
  listOnlyWaferOptions();
  if (!wafer::parseCommandLine(argc, argv, "wafer pass driver\n"))
    return 1;
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  auto input = wafer::openInputFile(inputFilename);
  if (!input) {
    llvm::errs() << "error: " << llvm::toString(input.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error error = wafer::checkNestingDepth(**input)) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  if (!config.shouldVerifyDiagnostics() && config.inputSplitMarker().empty() &&
      !config.shouldShowDialects())
    return runOpt(registry, config, std::move(*input));
  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(*input), registry,
                                     config)))
    return 1;
  return wafer::keepOutputFile(*output, outputFilename) ? 0 : 1;
}
