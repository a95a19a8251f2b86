//===- GgufFuzzer.cpp - GGUF reader, LLaMA config, vocabulary -------------===//
#include "FuzzSupport.h"

#include "wafer/Import/CheckpointTokenizer.h"
#include "wafer/Import/LlamaCheckpoint.h"

using namespace wafer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput(data, size, ".gguf");
  auto gguf = Checkpoint::openGguf(path);
  if (!gguf) {
    llvm::consumeError(gguf.takeError());
    return 0;
  }
  for (const TensorInfo &info : (*gguf)->tensors()) {
    llvm::Expected<WeightData> weight = (*gguf)->read(info.name);
    fuzz::ignore(weight);
  }
  auto model = LlamaCheckpoint::open(path);
  fuzz::ignore(model);
  llvm::Expected<Vocabulary> vocabulary = readGgufVocabulary(**gguf, path);
  if (vocabulary) {
    auto tokenizer = createTokenizer(*vocabulary, path);
    if (tokenizer) {
      auto ids = (*tokenizer)->encode(" Hello wörld 🙂 <0x41>", true);
      if (ids) {
        std::vector<int64_t> wide(ids->begin(), ids->end());
        auto text = (*tokenizer)->decode(wide);
        fuzz::ignore(text);
      }
      fuzz::ignore(ids);
    }
    fuzz::ignore(tokenizer);
  }
  fuzz::ignore(vocabulary);
  return 0;
}
