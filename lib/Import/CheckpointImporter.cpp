//===- CheckpointImporter.cpp - LLaMA checkpoints to raised tfm -----------===//
//
// Emits directly what tfm-raise-transformer makes of the exporter's graphs
// (tfm.embed, rms_norm, linear, rope, attention, swiglu and the head
// reshapes and transposes between them), so the same planner and bundle
// path run checkpoints and exported ONNX graphs alike.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/CheckpointImporter.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/LlamaCheckpoint.h"
#include "wafer/Import/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace wafer;

RopeFactors wafer::ropeFactors(const LlamaConfig &config, int64_t position) {
  int64_t d = config.headDim, half = d / 2;
  RopeFactors f;
  for (int64_t j = 0; j < d; ++j) {
    float exponent = float(2 * (j % half)) / float(d);
    float inv =
        float(1.0 / double(float(std::pow(config.ropeTheta, exponent))));
    float angle = float(double(inv) * double(position));
    f.cos.push_back(float(std::cos(double(angle))));
    f.sin.push_back(float(std::sin(double(angle))));
  }
  return f;
}

namespace {

class GraphBuilder {
public:
  GraphBuilder(const LlamaConfig &config, StringRef path, MLIRContext *context)
      : c(config), path(absolutePath(path)), b(context) {}

  OwningOpRef<ModuleOp> build(int64_t seqLen, int64_t pastLen, int64_t layers,
                              bool ropeInputs);

private:
  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  Value weight(LlamaTensorName name) {
    std::vector<int64_t> shape = expectedShape(c, name.role);
    return b.create<tfm::WeightOp>(loc, f32(shape), canonicalName(name), path);
  }
  /// x [1, L, E] times the [out, in] weight of `role`.
  Value linear(Value x, LlamaTensorName name) {
    auto shape = cast<RankedTensorType>(x.getType()).getShape();
    int64_t out = expectedShape(c, name.role)[0];
    auto op = b.create<tfm::LinearOp>(loc, f32({shape[0], shape[1], out}), x,
                                      weight(name));
    op.setTransposeWeight(true);
    return op;
  }
  Value rmsNorm(Value x, LlamaTensorName name) {
    return b.create<tfm::RmsNormOp>(loc, x.getType(), x, weight(name),
                                    b.getF64FloatAttr(c.rmsEps));
  }
  /// [1, L, H * D] -> [1, H, L, D].
  Value heads(Value x, int64_t h, int64_t len) {
    Value r = b.create<tfm::ReshapeOp>(loc, f32({1, len, h, c.headDim}), x);
    return b.create<tfm::TransposeOp>(loc, f32({1, h, len, c.headDim}), r,
                                      b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  }
  /// cos or sin of positions [start, start + len) in rotate-half layout,
  /// [1, 1, len, D], rounded to float at each step as the exporter's graph.
  Value ropeTable(int64_t start, int64_t len, bool sine);

  const LlamaConfig &c;
  std::string path;
  OpBuilder b;
  Location loc = b.getUnknownLoc();
};

Value GraphBuilder::ropeTable(int64_t start, int64_t len, bool sine) {
  std::vector<float> values;
  for (int64_t p = start; p < start + len; ++p) {
    RopeFactors f = ropeFactors(c, p);
    llvm::append_range(values, sine ? f.sin : f.cos);
  }
  auto type = f32({1, 1, len, c.headDim});
  return b.create<tfm::ConstantOp>(
      loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

OwningOpRef<ModuleOp> GraphBuilder::build(int64_t seqLen, int64_t pastLen,
                                          int64_t layers, bool ropeInputs) {
  bool decode = pastLen > 0;
  int64_t len = decode ? 1 : seqLen, total = decode ? pastLen + 1 : seqLen;
  int64_t e = c.hiddenSize, d = c.headDim, kvh = c.numKVHeads;
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  SmallVector<Type> inputs{RankedTensorType::get({1, len}, b.getI64Type())};
  SmallVector<std::string> inputNames{"input_ids"}, outputNames{"logits"};
  SmallVector<Type> outputs{f32({1, len, c.vocabSize})};
  if (ropeInputs)
    for (const char *name : {"rope.cos", "rope.sin"}) {
      inputs.push_back(f32({1, 1, len, d}));
      inputNames.push_back(name);
    }
  // Past caches follow input_ids (and the RoPE factors).
  int64_t firstPast = inputs.size();
  for (int64_t i = 0; i < layers; ++i)
    for (const char *kv : {"key", "value"}) {
      if (decode) {
        inputs.push_back(f32({1, kvh, pastLen, d}));
        inputNames.push_back("past." + std::to_string(i) + "." + kv);
      }
      outputs.push_back(f32({1, kvh, total, d}));
      outputNames.push_back("present." + std::to_string(i) + "." + kv);
    }
  auto func =
      b.create<func::FuncOp>(loc, "main", b.getFunctionType(inputs, outputs));
  for (auto [i, name] : llvm::enumerate(inputNames))
    func.setArgAttr(i, "tfm.name", b.getStringAttr(name));
  SmallVector<Attribute> names;
  for (const std::string &name : outputNames)
    names.push_back(b.getStringAttr(name));
  func->setAttr("tfm.output_names", b.getArrayAttr(names));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);

  Value ids = body->getArgument(0);
  Value table = weight({LlamaRole::TokenEmbd});
  Value h = b.create<tfm::EmbedOp>(loc, f32({1, len, e}), table, ids);
  Value cos = ropeInputs ? body->getArgument(1)
                         : ropeTable(decode ? pastLen : 0, len, false);
  Value sin = ropeInputs ? body->getArgument(2)
                         : ropeTable(decode ? pastLen : 0, len, true);
  SmallVector<Value> results{Value()};
  for (int64_t i = 0; i < layers; ++i) {
    loc = NameLoc::get(b.getStringAttr("layers." + std::to_string(i)));
    Value x = rmsNorm(h, {LlamaRole::AttnNorm, i});
    Value q = heads(linear(x, {LlamaRole::AttnQ, i}), c.numHeads, len);
    Value k = heads(linear(x, {LlamaRole::AttnK, i}), kvh, len);
    Value v = heads(linear(x, {LlamaRole::AttnV, i}), kvh, len);
    q = b.create<tfm::RopeOp>(loc, q.getType(), q, cos, sin);
    k = b.create<tfm::RopeOp>(loc, k.getType(), k, cos, sin);
    if (decode) {
      auto cacheType = f32({1, kvh, total, d});
      k = b.create<tfm::ConcatOp>(loc, cacheType,
                                  ValueRange{body->getArgument(firstPast + 2 * i), k},
                                  b.getI64IntegerAttr(2));
      v = b.create<tfm::ConcatOp>(loc, cacheType,
                                  ValueRange{body->getArgument(firstPast + 1 + 2 * i), v},
                                  b.getI64IntegerAttr(2));
    }
    results.append({k, v});
    Value a = b.create<tfm::AttentionOp>(
        loc, q.getType(), q, k, v, b.getI64IntegerAttr(c.numHeads),
        b.getI64IntegerAttr(kvh), b.getF64FloatAttr(1.0 / std::sqrt(double(d))),
        b.getUnitAttr());
    a = b.create<tfm::TransposeOp>(loc, f32({1, len, c.numHeads, d}), a,
                                   b.getDenseI64ArrayAttr({0, 2, 1, 3}));
    a = b.create<tfm::ReshapeOp>(loc, f32({1, len, c.numHeads * d}), a);
    h = b.create<tfm::AddOp>(loc, h.getType(), h,
                             linear(a, {LlamaRole::AttnOutput, i}));
    x = rmsNorm(h, {LlamaRole::FfnNorm, i});
    Value gate = linear(x, {LlamaRole::FfnGate, i});
    Value up = linear(x, {LlamaRole::FfnUp, i});
    Value m = b.create<tfm::SwigluOp>(loc, gate.getType(), gate, up);
    h = b.create<tfm::AddOp>(loc, h.getType(), h,
                             linear(m, {LlamaRole::FfnDown, i}));
  }
  loc = NameLoc::get(b.getStringAttr("output"));
  results[0] = linear(rmsNorm(h, {LlamaRole::OutputNorm}), {LlamaRole::Output});
  b.create<func::ReturnOp>(loc, results);
  return module;
}

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>>
wafer::importCheckpoint(llvm::StringRef path, MLIRContext *context,
                        const CheckpointImportOptions &options) {
  context->loadDialect<tfm::TfmDialect, func::FuncDialect>();
  auto model = LlamaCheckpoint::open(path);
  if (!model)
    return model.takeError();
  bool decode = options.pastLen > 0;
  if (decode == (options.seqLen > 0))
    return checkpointError(path, "give either a prefill length (--seq-len "
                                 "N) or a decode past (--past-len N), both "
                                 "at least 1");
  // The past and the new token: past + 1 would wrap to a dynamic size.
  if (decode && options.pastLen == std::numeric_limits<int64_t>::max())
    return checkpointError(path, "--past-len " + llvm::Twine(options.pastLen) +
                                     " leaves no room for the new token");
  int64_t tokens = decode ? options.pastLen + 1 : options.seqLen;
  if (std::optional<int64_t> context = model->config().maxContext;
      context && tokens > *context)
    return checkpointError(path, llvm::Twine(tokens) +
                                     " tokens exceed the model's context "
                                     "length " +
                                     llvm::Twine(*context));
  int64_t modelLayers = model->config().numLayers;
  if (options.layers < 0 || options.layers > modelLayers)
    return checkpointError(path, "--layers " + llvm::Twine(options.layers) +
                                     ": the model has " +
                                     llvm::Twine(modelLayers) +
                                     " decoder layers (give 1 to " +
                                     llvm::Twine(modelLayers) + ")");
  int64_t layers = options.layers ? options.layers : modelLayers;
  OwningOpRef<ModuleOp> module =
      GraphBuilder(model->config(), path, context)
          .build(options.seqLen, options.pastLen, layers, options.ropeInputs);
  if (options.layers) {
    Builder attrs(context);
    (*module)->setAttr("tfm.layers", attrs.getI64IntegerAttr(layers));
    (*module)->setAttr("tfm.model_layers",
                       attrs.getI64IntegerAttr(modelLayers));
  }
  if (failed(verify(*module)))
    return checkpointError(path, "the built tfm module does not verify");
  return std::move(module);
}
