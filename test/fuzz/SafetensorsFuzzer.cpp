//===- SafetensorsFuzzer.cpp - safetensors reader -------------------------===//
#include "FuzzSupport.h"

#include "wafer/Import/Checkpoint.h"

using namespace wafer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput(data, size, ".safetensors");
  auto file = Checkpoint::openSafetensors(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  for (const TensorInfo &info : (*file)->tensors()) {
    llvm::Expected<WeightData> weight = (*file)->read(info.name);
    fuzz::ignore(weight);
  }
  return 0;
}
