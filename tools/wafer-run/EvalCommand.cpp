//===- EvalCommand.cpp - wafer-run eval: the host reference ---------------===//
//
//   wafer-run eval MODULE.mlir|MODEL.onnx --inputs in.npz --outputs out.npz
//                  [--input-shape NAME=1x16 ...] [--dim-param NAME=N ...]
//
// Evaluates a tfm module (imported, folded, raised or not) on the host with
// the reference kernels: the golden model later stages are checked against.
//
//===----------------------------------------------------------------------===//
#include "EvalCommand.h"
#include "wafer/Support/RegularFile.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Eval/Evaluator.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Import/WeightStore.h"
#include "wafer/Runtime/NDArray.h"
#include "wafer/Support/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;
using namespace wafer;

static Error evalError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Expected<OnnxImportOptions>
wafer::importOptions(ArrayRef<std::string> inputShapes,
                     ArrayRef<std::string> dimParams, StringRef inputsPath) {
  OnnxImportOptions options;
  for (const std::string &text : inputShapes)
    if (Error error = parseInputShape(text, options))
      return std::move(error);
  for (const std::string &text : dimParams)
    if (Error error = parseDimParam(text, options))
      return std::move(error);
  if (!inputsPath.empty()) {
    Expected<rt::NDArrayMap> arrays = rt::readNpz(inputsPath);
    if (!arrays)
      return arrays.takeError();
    for (const auto &[name, array] : *arrays)
      options.shapeHints[name] = array.shape;
  }
  return options;
}

bool wafer::isCheckpointPath(StringRef path) {
  char magic[4] = {};
  if (auto file = sys::fs::openNativeFileForRead(path)) {
    (void)sys::fs::readNativeFile(*file, MutableArrayRef<char>(magic));
    sys::fs::closeFile(*file);
  } else {
    consumeError(file.takeError());
  }
  return sys::fs::is_directory(path) || StringRef(magic, 4) == "GGUF" ||
         path.ends_with(".gguf") || path.ends_with(".safetensors");
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
wafer::loadModule(StringRef path, ArrayRef<std::string> inputShapes,
                  ArrayRef<std::string> dimParams, StringRef inputsPath,
                  mlir::MLIRContext &context, bool checkWeightShapes) {
  // Before the format is sniffed (a device never ends); a directory is a
  // checkpoint's, or said to be neither below.
  if (!sys::fs::is_directory(path))
    if (Error special = refuseSpecialFile(path))
      return std::move(special);
  // Said plainly rather than as a bad ONNX file.
  if (isCheckpointPath(path))
    return evalError(path + ": is a checkpoint or a directory; this command "
                            "takes an ONNX model or an MLIR module "
                            "(checkpoints run with `wafer-run generate`)");
  if (!path.ends_with(".mlir")) {
    Expected<OnnxImportOptions> options =
        importOptions(inputShapes, dimParams, inputsPath);
    if (!options)
      return options.takeError();
    return importOnnxFile(path, &context, *options);
  }
  if (!inputShapes.empty() || !dimParams.empty())
    return evalError(path + ": --input-shape and --dim-param apply to ONNX "
                            "models (an MLIR module has static shapes)");
  auto module = parseMlirFile(path, context);
  if (!module)
    return module;
  WeightStore store;
  Error mismatch = Error::success();
  (*module)->walk([&](tfm::WeightOp weight) {
    weight.setSource(resolveWeightSource(weight.getSource(), path));
    if (!checkWeightShapes || mismatch)
      return;
    Expected<std::vector<int64_t>> stored =
        store.shape(weight.getSource(), weight.getName());
    mismatch =
        stored ? checkDeclaredShape(weight, *stored, path) : stored.takeError();
  });
  if (mismatch)
    return std::move(mismatch);
  return module;
}

Error wafer::checkDeclaredShape(tfm::WeightOp weight, ArrayRef<int64_t> stored,
                                StringRef modulePath) {
  ArrayRef<int64_t> declared = weight.getType().getShape();
  if (stored == declared)
    return Error::success();
  return evalError(formatv("{0}: tensor '{1}' has shape [{2}], but {3} "
                           "declares [{4}]",
                           weight.getSource(), weight.getName(),
                           make_range(stored.begin(), stored.end()), modulePath,
                           make_range(declared.begin(), declared.end()))
                       .str());
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
wafer::parseMlirFile(StringRef path, mlir::MLIRContext &context) {
  // The parser's first error, with its place, is the error.
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
        firstError.empty()) {
      std::string where;
      if (auto loc = dyn_cast<mlir::FileLineColLoc>(diag.getLocation()))
        where = (loc.getFilename().str() + ":" + Twine(loc.getLine()) + ":" +
                 Twine(loc.getColumn()) + ": ")
                    .str();
      firstError = where + StringRef(diag.str()).split('\n').first.str();
    }
    return mlir::success();
  });
  auto input = openInputFile(path);
  if (!input)
    return input.takeError();
  // MLIR's parser recurses per nesting level: bound it first.
  if (Error error = checkNestingDepth(**input))
    return std::move(error);
  auto sourceMgr = std::make_shared<SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(*input), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr,
                                            mlir::ParserConfig(&context));
  if (!module)
    return evalError(firstError.empty() ? path + ": cannot parse" : firstError);
  return std::move(module);
}

static Expected<eval::Tensor> toTensor(StringRef name, const rt::NDArray &array,
                                       mlir::Type element) {
  bool wantsInt = element.isInteger(64), wantsBool = element.isInteger(1);
  bool isInt = array.dtype == "int64" || array.dtype == "int32";
  StringRef wanted = wantsInt ? "int64" : wantsBool ? "bool" : "float32";
  bool exact = wantsInt ? isInt
                        : array.dtype == wanted ||
                              (wanted == "float32" && array.dtype == "float16");
  if (!exact)
    return evalError("input '" + name + "' has dtype " + array.dtype +
                     ", the model expects " + wanted);
  eval::Tensor tensor(wantsInt    ? eval::ElementKind::I64
                      : wantsBool ? eval::ElementKind::Bool
                                  : eval::ElementKind::F32,
                      array.shape);
  std::copy(array.data.begin(), array.data.end(), tensor.data.begin());
  return tensor;
}

Expected<rt::NDArrayMap> wafer::evaluateOnHost(mlir::ModuleOp module,
                                               StringRef modelPath,
                                               const rt::NDArrayMap &given,
                                               StringRef inputsPath) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return evalError(modelPath + ": has no func.func @main");
  auto inputError = [&](Error error) {
    return inputsPath.empty()
               ? std::move(error)
               : evalError(inputsPath + ": " + toString(std::move(error)));
  };
  std::map<std::string, eval::Tensor> inputs;
  for (mlir::BlockArgument arg : main.getArguments()) {
    std::string name = tfm::inputName(main, arg.getArgNumber());
    auto it = given.find(name);
    if (it == given.end())
      return inputError(evalError("input '" + name + "' is missing"));
    auto element =
        cast<mlir::RankedTensorType>(arg.getType()).getElementType();
    auto tensor = toTensor(name, it->second, element);
    if (!tensor)
      return inputError(tensor.takeError());
    inputs[name] = std::move(*tensor);
  }
  WeightStore store;
  auto loadWeight = [&](mlir::Operation *op) -> Expected<eval::Tensor> {
    auto weight = cast<tfm::WeightOp>(op);
    std::string source = resolveWeightSource(weight.getSource(), modelPath);
    Expected<WeightData> data = store.load(source, weight.getName());
    if (!data)
      return data.takeError();
    if (Error mismatch = checkDeclaredShape(weight, data->shape, modelPath))
      return std::move(mismatch);
    eval::Tensor tensor(eval::ElementKind::F32, data->shape);
    std::copy(data->values.begin(), data->values.end(), tensor.data.begin());
    return tensor;
  };
  auto outputs = eval::evaluateFunction(main, inputs, loadWeight);
  if (!outputs)
    // Evaluating is the model's work on the arrays: either may be at fault
    // (an index out of range, an Expand too large to hold).
    return evalError(modelPath +
                     (inputsPath.empty() ? Twine() : " on " + inputsPath) +
                     ": " + toString(outputs.takeError()));
  rt::NDArrayMap arrays;
  for (auto &[name, tensor] : *outputs) {
    rt::NDArray array;
    array.shape = tensor.shape;
    array.data.assign(tensor.data.begin(), tensor.data.end());
    arrays[name] = std::move(array);
  }
  return arrays;
}

int wafer::runEvalCommand(StringRef modelPath, ArrayRef<std::string> inputShapes,
                          ArrayRef<std::string> dimParams, StringRef inputsPath, StringRef outputsPath) {
  auto fail = [](const Twine &message) {
    errs() << "error: " << message << "\n";
    return 1;
  };
  mlir::MLIRContext context;
  context.loadDialect<tfm::TfmDialect, mlir::func::FuncDialect>();
  // Errors are returned, not printed as diagnostics.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // evaluateOnHost checks each weight's shape as it reads it.
  auto module = loadModule(modelPath, inputShapes, dimParams, inputsPath,
                           context, /*checkWeightShapes=*/false);
  if (!module)
    return fail(toString(module.takeError()));
  auto main = (*module)->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return fail(modelPath + ": has no func.func @main");
  if (inputsPath.empty() && main.getNumArguments() > 0)
    return fail("--inputs in.npz is required: the model has inputs");

  rt::NDArrayMap given;
  if (!inputsPath.empty()) {
    Expected<rt::NDArrayMap> arrays = rt::readNpz(inputsPath);
    if (!arrays)
      return fail(toString(arrays.takeError()));
    given = std::move(*arrays);
  }
  Expected<rt::NDArrayMap> evaluated =
      evaluateOnHost(**module, modelPath, given, inputsPath);
  if (!evaluated)
    return fail(toString(evaluated.takeError()));
  rt::NDArrayMap &arrays = *evaluated;
  if (!outputsPath.empty())
    if (Error error = rt::writeNpz(outputsPath, arrays))
      return fail(toString(std::move(error)));
  for (auto &[name, array] : arrays) {
    outs() << name << ": [";
    llvm::interleave(array.shape, outs(), ", ");
    outs() << "]\n";
  }
  return 0;
}
