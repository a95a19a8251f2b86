//===- TokenizerJsonFuzzer.cpp - Hugging Face tokenizer.json --------------===//
#include "FuzzSupport.h"

#include "wafer/Import/Tokenizer.h"

using namespace wafer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput(data, size, "-tokenizer.json");
  llvm::Expected<Vocabulary> vocabulary = readTokenizerJson(path);
  if (!vocabulary) {
    llvm::consumeError(vocabulary.takeError());
    return 0;
  }
  auto tokenizer = createTokenizer(*vocabulary, path);
  if (tokenizer) {
    auto ids = (*tokenizer)->encode("Hello wörld 龘 🙂  x", true);
    if (ids) {
      std::vector<int64_t> wide(ids->begin(), ids->end());
      auto text = (*tokenizer)->decode(wide);
      fuzz::ignore(text);
    }
    fuzz::ignore(ids);
  }
  fuzz::ignore(tokenizer);
  return 0;
}
