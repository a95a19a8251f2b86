//===- TargetFuzzer.cpp - Target JSON loader ------------------------------===//
#include "FuzzSupport.h"

#include "wafer/Runtime/Target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<wafer::rt::Target> target =
      wafer::rt::parseTarget(text, "fuzz.json");
  if (target)
    wafer::fuzz::ignore(wafer::rt::validateTarget(*target));
  wafer::fuzz::ignore(target);
  return 0;
}
