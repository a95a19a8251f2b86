//===- wafer-translate.cpp - Import models, emit and dump bundles ---------===//
//
// One translation per run, from the input file (or stdin) to -o. The main is
// wafer's rather than mlirTranslateMain so that opening the input and every
// diagnostic follow the one-line `error:` convention.
//
//===----------------------------------------------------------------------===//
#include "TokenizeTool.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/CheckpointImporter.h"
#include "wafer/Import/LlamaCheckpoint.h"
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
static llvm::cl::list<std::string> dimParams(
    "dim-param",
    llvm::cl::desc("Value of a named dynamic dimension of --import-onnx's "
                   "graph inputs, NAME=N (every input that has it)"),
    llvm::cl::cat(category));

static llvm::cl::OptionCategory checkpointCategory("Checkpoint options");
static llvm::cl::opt<std::string>
    inspect("inspect-checkpoint",
            llvm::cl::desc("Print a checkpoint's config and tensors"),
            llvm::cl::value_desc("file|dir"),
            llvm::cl::cat(checkpointCategory));
static llvm::cl::opt<std::string>
    gguf("import-gguf",
         llvm::cl::desc("Build the tfm module of a GGUF checkpoint"),
         llvm::cl::value_desc("file"), llvm::cl::cat(checkpointCategory));
static llvm::cl::opt<std::string> safetensors(
    "import-safetensors",
    llvm::cl::desc("Build the tfm module of a safetensors checkpoint (file, "
                   "index json or directory)"),
    llvm::cl::value_desc("path"), llvm::cl::cat(checkpointCategory));
static llvm::cl::opt<int64_t>
    seqLen("seq-len", llvm::cl::desc("Checkpoint import: prefill length"),
           llvm::cl::init(0), llvm::cl::cat(checkpointCategory));
static llvm::cl::opt<int64_t>
    pastLen("past-len",
            llvm::cl::desc("Checkpoint import: decode, cached "
                           "tokens"),
            llvm::cl::init(0), llvm::cl::cat(checkpointCategory));
static llvm::cl::opt<int64_t>
    layers("layers",
           llvm::cl::desc("Checkpoint import: only the first N decoder "
                          "layers"),
           llvm::cl::init(0), llvm::cl::cat(checkpointCategory));

/// The checkpoint commands: `--inspect-checkpoint FILE|DIR` prints the LLaMA
/// config, RoPE row order and tensors; `--import-gguf FILE` and
/// `--import-safetensors FILE|DIR` with `--seq-len N` or `--past-len N`
/// print the raised tfm module. They read no input module: a directory or a
/// pipe must be refused by the checkpoint reader, not read.
static int checkpointMain() {
  auto failWith = [](llvm::Error error) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return 1;
  };
  if (!inspect.empty() + !gguf.empty() + !safetensors.empty() != 1) {
    llvm::errs() << "error: give one of --inspect-checkpoint, --import-gguf "
                    "and --import-safetensors\n";
    return 1;
  }
  if (!inspect.empty()) {
    auto ckpt = wafer::LlamaCheckpoint::open(inspect);
    if (!ckpt)
      return failWith(ckpt.takeError());
    ckpt->print(llvm::outs());
    return 0;
  }
  std::string path = gguf.empty() ? safetensors : gguf;
  // The module reads its weights from the checkpoint.
  if (std::optional<std::string> clash = wafer::clashingFiles(
          {{"-o", outputFilename}}, {{"the checkpoint", path}})) {
    llvm::errs() << "error: " << *clash << "\n";
    return 1;
  }
  auto kind = wafer::Checkpoint::open(path);
  if (!kind)
    return failWith(kind.takeError());
  bool isGguf = (*kind)->format() == wafer::CheckpointFormat::Gguf;
  if (isGguf != !gguf.empty()) {
    llvm::errs() << "error: " << path << ": is "
                 << (isGguf ? "a GGUF file (use --import-gguf)"
                            : "a safetensors checkpoint (use "
                              "--import-safetensors)")
                 << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  if (layers.getNumOccurrences() && layers < 1) {
    llvm::errs() << "error: --layers " << layers
                 << ": give at least 1 decoder layer\n";
    return 1;
  }
  auto module =
      wafer::importCheckpoint(path, &context, {seqLen, pastLen, layers});
  if (!module)
    return failWith(module.takeError());
  std::string message;
  auto file = mlir::openOutputFile(outputFilename, &message);
  if (!file) {
    llvm::errs() << "error: " << outputFilename << ": " << message << "\n";
    return 1;
  }
  (*module)->print(file->os());
  return wafer::keepOutputFile(*file, outputFilename) ? 0 : 1;
}

static void registerImportOnnx() {
  mlir::TranslateToMLIRRegistration importOnnx(
      "import-onnx", "Import an ONNX model as a tfm module",
      [](llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context)
          -> mlir::OwningOpRef<mlir::Operation *> {
        llvm::StringRef path =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                ->getBufferIdentifier();
        wafer::OnnxImportOptions options;
        for (auto [texts, parse] :
             {std::pair(&inputShapes, &wafer::parseInputShape),
              std::pair(&dimParams, &wafer::parseDimParam)})
          for (const std::string &text : *texts)
            if (llvm::Error error = parse(text, options)) {
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
  wafer::keepFreedMemory();
  // MLIR's printer options work but are not listed.
  mlir::registerAsmPrinterCLOptions();
  wafer::hideForeignOptions(
      {&category, &checkpointCategory, &wafer::tokenizerOptions()});
  registerImportOnnx();
  wafer::registerBundleTranslations();
  llvm::cl::opt<const mlir::Translation *, false, mlir::TranslationParser>
      translation(llvm::cl::desc("Translation to perform"),
                  llvm::cl::cat(category));
  if (!wafer::parseCommandLine(
          argc, argv,
          "wafer translations: ONNX and checkpoint import, program bundles, "
          "tokenizers\n"))
    return 1;
  if (wafer::isTokenizerCommand())
    return wafer::exitStatusWithStdout(wafer::runTokenizerCommand());
  if (inspect.getNumOccurrences() || gguf.getNumOccurrences() ||
      safetensors.getNumOccurrences())
    return wafer::exitStatusWithStdout(checkpointMain());
  if (!translation) {
    llvm::errs() << "error: no translation given (--import-onnx, "
                    "--emit-bundle, --dump-bundle, a checkpoint command or "
                    "--tokenize/--detokenize)\n";
    return 1;
  }
  // The output is opened (emptied) before the input is read through.
  if (std::optional<std::string> clash = wafer::clashingFiles(
          {{"-o", outputFilename}}, {{"the input", inputFilename}})) {
    llvm::errs() << "error: " << *clash << "\n";
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
  return wafer::keepOutputFile(*output, outputFilename) ? 0 : 1;
}
