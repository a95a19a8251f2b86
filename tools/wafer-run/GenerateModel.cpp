//===- GenerateModel.cpp - The graphs wafer-run generate runs -------------===//
#include "GenerateModel.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/LlamaCheckpoint.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace llvm;
using namespace wafer;

namespace {

Error modelError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// A GGUF or safetensors checkpoint: graphs built from its config.
class CheckpointModel : public GenerateModel {
public:
  CheckpointModel(LlamaCheckpoint checkpoint, StringRef path,
                  mlir::MLIRContext &ctx)
      : checkpoint(std::move(checkpoint)), path(path.str()), ctx(ctx) {
    const LlamaConfig &config = this->checkpoint.config();
    vocab = config.vocabSize;
    eos = config.eosIds;
    context = config.maxContext;
  }

  Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  prefillGraph(int64_t seqLen) override {
    CheckpointImportOptions build;
    build.seqLen = seqLen;
    return importCheckpoint(path, &ctx, build);
  }

  Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  decodeGraph(int64_t past) override {
    CheckpointImportOptions build;
    build.pastLen = past;
    build.ropeInputs = true;
    return importCheckpoint(path, &ctx, build);
  }

  RopeFactors ropeFactors(int64_t position) const override {
    return wafer::ropeFactors(checkpoint.config(), position);
  }

private:
  LlamaCheckpoint checkpoint;
  std::string path;
  mlir::MLIRContext &ctx;
};

/// An exported ONNX directory. The decode graph computes its rotary tables
/// from the past's length, so folded at past P they hold position P's
/// factors; the factors of any position come from the angles of position
/// 1 (cos and sin of one angle per element), checked against the tables of
/// every position the decode graph is compiled for.
class OnnxDirectoryModel : public GenerateModel {
public:
  OnnxDirectoryModel(StringRef dir, mlir::MLIRContext &ctx)
      : ctx(ctx) {
    SmallString<256> p(dir);
    sys::path::append(p, "prefill.onnx");
    prefillPath = p.str().str();
    p = dir;
    sys::path::append(p, "decode.onnx");
    decodePath = p.str().str();
  }

  Error load() {
    if (!sys::fs::is_regular_file(prefillPath))
      return modelError(prefillPath + ": an exported ONNX directory holds "
                        "prefill.onnx next to decode.onnx");
    Expected<RaisedDecode> probe = raisedDecode(1);
    if (!probe)
      return probe.takeError();
    for (auto [c, s] : llvm::zip_equal(probe->cos, probe->sin))
      angles.push_back(float(std::atan2(double(s), double(c))));
    auto main = probe->module->lookupSymbol<mlir::func::FuncOp>("main");
    auto names = main->getAttrOfType<mlir::ArrayAttr>("tfm.output_names");
    for (auto [i, name] : llvm::enumerate(names ? names.getValue()
                                                : ArrayRef<mlir::Attribute>()))
      if (cast<mlir::StringAttr>(name).getValue() == "logits")
        vocab = cast<mlir::RankedTensorType>(main.getResultTypes()[i])
                    .getShape()
                    .back();
    if (!vocab)
      return modelError(decodePath + ": the decode graph has no output "
                        "'logits'");
    return Error::success();
  }

  Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  prefillGraph(int64_t seqLen) override {
    OnnxImportOptions options;
    options.inputShapes["input_ids"] = {1, seqLen};
    hintPositionInputs(options, 0, seqLen);
    Expected<mlir::OwningOpRef<mlir::ModuleOp>> module =
        explained(importOnnxFile(prefillPath, &ctx, options), prefillPath,
                  "the exporter's prefill graph (input_ids [1, seq])");
    // Bound here, not only in the compile pipeline: the host check
    // evaluates this module on the token ids alone.
    if (module)
      if (Error e = runPasses(**module, prefillPath, [](mlir::PassManager &pm) {
            pm.addPass(createTfmBindPositionInputs());
          }))
        return std::move(e);
    return module;
  }

  Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  decodeGraph(int64_t past) override {
    Expected<RaisedDecode> raised = raisedDecode(past);
    if (!raised)
      return raised.takeError();
    // The angles of position 1 must give the tables of position P: a RoPE
    // linear in the position (a scaled or windowed one is not).
    RopeFactors want = ropeFactors(past);
    if (raised->cos.size() != angles.size())
      return modelError(formatv("{0}: the rotary tables at position {1} have "
                                "{2} elements, at position 1 {3}",
                                decodePath, past, raised->cos.size(),
                                angles.size()));
    for (size_t i = 0; i < angles.size(); ++i)
      if (std::abs(want.cos[i] - raised->cos[i]) > 1e-3f ||
          std::abs(want.sin[i] - raised->sin[i]) > 1e-3f)
        return modelError(formatv(
            "{0}: the rotary factors at position {1} are not those of "
            "position 1 scaled by {1} (element {2}: cos {3}, expected {4}); "
            "generate needs a RoPE linear in the position",
            decodePath, past, i, raised->cos[i], want.cos[i]));
    if (Error e =
            runPasses(*raised->module, decodePath, [](mlir::PassManager &pm) {
              pm.addPass(createTfmRopeTablesToInputs());
            }))
      return std::move(e);
    return std::move(raised->module);
  }

  RopeFactors ropeFactors(int64_t position) const override {
    // As the exporter's graph computes them: the angle in float, then its
    // cosine and sine rounded to float.
    RopeFactors f;
    for (float angle : angles) {
      float theta = float(position) * angle;
      f.cos.push_back(float(std::cos(double(theta))));
      f.sin.push_back(float(std::sin(double(theta))));
    }
    return f;
  }

private:
  /// An import error of one of the directory's graphs, saying what the
  /// graph was expected to be (the importer's words speak of options the
  /// user of generate never gave).
  static Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  explained(Expected<mlir::OwningOpRef<mlir::ModuleOp>> module,
            StringRef path, StringRef expected) {
    if (module)
      return module;
    std::string message = toString(module.takeError());
    StringRef detail(message);
    detail.consume_front(path);
    detail.consume_front(": ");
    return modelError(path + ": not " + expected + ": " + detail);
  }

  /// The shapes of Hugging Face's position_ids and attention_mask inputs,
  /// for graphs that have them (tfm-bind-position-inputs binds their
  /// values).
  static void hintPositionInputs(OnnxImportOptions &options, int64_t past,
                                 int64_t tokens) {
    options.shapeHints["position_ids"] = {1, tokens};
    options.shapeHints["attention_mask"] = {1, past + tokens};
  }

  /// Runs passes on the module; the first error diagnostic is the error.
  Error runPasses(mlir::ModuleOp module, StringRef path,
                  function_ref<void(mlir::PassManager &)> build) {
    std::string first;
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Error && first.empty())
        first = d.str();
      return mlir::success();
    });
    mlir::PassManager pm(&ctx);
    build(pm);
    if (mlir::failed(pm.run(module)))
      return modelError(path + ": " +
                        (first.empty() ? "compilation failed" : first));
    return Error::success();
  }

  /// decode.onnx for a past of `past` tokens, shapes folded and raised,
  /// with the constant cos and sin tables of its first rope (one row of D
  /// values each).
  struct RaisedDecode {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::vector<float> cos, sin;
  };
  Expected<RaisedDecode> raisedDecode(int64_t past) {
    OnnxImportOptions options;
    options.inputShapes["input_ids"] = {1, 1};
    options.dimParams["past"] = past;
    hintPositionInputs(options, past, 1);
    Expected<mlir::OwningOpRef<mlir::ModuleOp>> module = explained(
        importOnnxFile(decodePath, &ctx, options), decodePath,
        "the exporter's decode graph (input_ids [1, 1], past.{i}.key/value "
        "with a dimension named 'past')");
    if (!module)
      return module.takeError();
    if (Error e = runPasses(**module, decodePath, [](mlir::PassManager &pm) {
          pm.addPass(createTfmBindPositionInputs());
          pm.addNestedPass<mlir::func::FuncOp>(createTfmFoldShapes());
          pm.addNestedPass<mlir::func::FuncOp>(createTfmRaiseTransformer());
        }))
      return std::move(e);
    auto main = (*module)->lookupSymbol<mlir::func::FuncOp>("main");
    tfm::RopeOp rope;
    if (main)
      main.walk([&](tfm::RopeOp op) {
        rope = op;
        return mlir::WalkResult::interrupt();
      });
    if (!rope)
      return modelError(decodePath + ": no rotary embedding was recognised "
                        "in the decode graph (tfm-raise-transformer found no "
                        "tfm.rope)");
    std::vector<float> values[2];
    for (int which = 0; which < 2; ++which) {
      mlir::Value table = which ? rope.getSin() : rope.getCos();
      auto constant = table.getDefiningOp<tfm::ConstantOp>();
      auto type = cast<mlir::RankedTensorType>(table.getType());
      if (!constant || type.getNumElements() != type.getShape().back())
        return modelError(decodePath + ": the decode graph's rotary tables "
                          "are not constants of one position once folded");
      auto dense = cast<mlir::DenseElementsAttr>(constant.getValue());
      values[which].assign(dense.getValues<float>().begin(),
                           dense.getValues<float>().end());
    }
    return RaisedDecode{std::move(*module), std::move(values[0]),
                        std::move(values[1])};
  }

  mlir::MLIRContext &ctx;
  std::string prefillPath, decodePath;
  /// The rotary angle of each table element at position 1.
  std::vector<float> angles;
};

} // namespace

Expected<std::unique_ptr<GenerateModel>>
GenerateModel::open(StringRef path, mlir::MLIRContext &context) {
  SmallString<256> decode(path);
  sys::path::append(decode, "decode.onnx");
  if (sys::fs::is_directory(path) && sys::fs::exists(decode)) {
    auto model = std::make_unique<OnnxDirectoryModel>(path, context);
    if (Error e = model->load())
      return std::move(e);
    return std::unique_ptr<GenerateModel>(std::move(model));
  }
  Expected<LlamaCheckpoint> checkpoint = LlamaCheckpoint::open(path);
  if (!checkpoint)
    return checkpoint.takeError();
  return std::unique_ptr<GenerateModel>(
      std::make_unique<CheckpointModel>(std::move(*checkpoint), path, context));
}
