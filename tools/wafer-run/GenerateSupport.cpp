//===- GenerateSupport.cpp - The host check of generate -------------------===//
#include "GenerateSupport.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Eval/Evaluator.h"
#include "wafer/Import/Tokenizer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using namespace wafer;

static Error supportError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Expected<std::vector<float>> HostReference::logits(GenerateModel &model,
                                                   ArrayRef<int64_t> tokens) {
  auto module = model.prefillGraph(int64_t(tokens.size()));
  if (!module)
    return module.takeError();
  auto main = (**module).lookupSymbol<mlir::func::FuncOp>("main");
  eval::Tensor ids(eval::ElementKind::I64, {1, int64_t(tokens.size())});
  std::copy(tokens.begin(), tokens.end(), ids.data.begin());
  auto loadWeight = [&](mlir::Operation *op) -> Expected<eval::Tensor> {
    auto weight = cast<tfm::WeightOp>(op);
    Expected<WeightData> data =
        store.load(weight.getSource(), weight.getName());
    if (!data)
      return data.takeError();
    eval::Tensor tensor(eval::ElementKind::F32, data->shape);
    std::copy(data->values.begin(), data->values.end(), tensor.data.begin());
    return tensor;
  };
  auto outputs =
      eval::evaluateFunction(main, {{"input_ids", std::move(ids)}}, loadWeight);
  if (!outputs)
    return outputs.takeError();
  const eval::Tensor &all = outputs->at("logits");
  int64_t vocab = all.shape.back();
  return std::vector<float>(all.data.end() - vocab, all.data.end());
}

int64_t wafer::argmax(ArrayRef<float> values) {
  return std::max_element(values.begin(), values.end()) - values.begin();
}

Expected<std::vector<int64_t>> wafer::parseTokenList(StringRef text,
                                             int64_t vocabSize) {
  Expected<std::vector<int64_t>> ids = parseTokenIds(text);
  if (!ids)
    return ids.takeError();
  for (int64_t id : *ids)
    if (id < 0 || id >= vocabSize)
      return supportError(formatv("--tokens: token id {0} is outside the "
                                  "vocabulary (0 .. {1})",
                                  id, vocabSize - 1));
  return ids;
}

