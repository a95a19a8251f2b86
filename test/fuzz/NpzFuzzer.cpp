//===- NpzFuzzer.cpp - .npz reader -----------------------------------------===//
#include "FuzzSupport.h"

#include "wafer/Runtime/NDArray.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = wafer::fuzz::writeInput(data, size, ".npz");
  llvm::Expected<wafer::rt::NDArrayMap> arrays = wafer::rt::readNpz(path);
  wafer::fuzz::ignore(arrays);
  return 0;
}
