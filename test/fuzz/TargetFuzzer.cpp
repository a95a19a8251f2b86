//===- TargetFuzzer.cpp - Target JSON loader and fabric placement ---------===//
#include "FuzzSupport.h"

#include "wafer/Runtime/FabricPlacement.h"
#include "wafer/Runtime/Target.h"

#include <algorithm>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<wafer::rt::Target> target =
      wafer::rt::parseTarget(text, "fuzz.json");
  if (target) {
    wafer::fuzz::ignore(wafer::rt::validateTarget(*target));
    // A placement the compiler chooses must pass the check the emulator
    // makes.
    int64_t h = std::min<int64_t>(target->fabricHeight, 12);
    int64_t w = std::min<int64_t>(target->fabricWidth, 12);
    llvm::Expected<wafer::rt::FabricPlacement> placed =
        wafer::rt::placeAroundDefects(*target, h, w);
    if (placed && wafer::rt::checkFabricPlacement(*target, h, w, placed->rows,
                                                  placed->cols))
      std::abort();
    wafer::fuzz::ignore(placed);
  }
  wafer::fuzz::ignore(target);
  return 0;
}
