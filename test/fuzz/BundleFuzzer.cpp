//===- BundleFuzzer.cpp - Bundle reader, validator and emulator -----------===//
//
// Each input is read as it is (the checksum trailer), then with its
// FlatBuffer sealed again. A bundle that reads and validates is also run (functional and timing) on
// grids of up to 64 cores with every user input zero, under small budgets,
// so corrupt programs reach the scheduler, the network and the kernels.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/Emulator.h"

using namespace wafer;

/// Elements of `shape`, or -1 above `limit`.
static int64_t elementsUpTo(const std::vector<int64_t> &shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d && n > limit / d))
      return -1;
    n *= d;
  }
  return n <= limit ? n : -1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef raw(reinterpret_cast<const char *>(data), size);
  llvm::Expected<rt::Program> asIs = rt::deserializeBundle(raw, "fuzz");
  fuzz::ignore(asIs);
  // Mutations rarely keep the checksum right: seal the FlatBuffer part again
  // so that the verifier, the reader and the emulator see them.
  std::vector<uint8_t> sealed(data, data + size);
  if (size >= rt::kBundleTrailerBytes &&
      raw.substr(size - rt::kBundleTrailerBytes, 4) == rt::kBundleChecksumTag)
    sealed.resize(size - rt::kBundleTrailerBytes);
  rt::sealBundle(sealed);
  llvm::StringRef bytes(reinterpret_cast<const char *>(sealed.data()),
                        sealed.size());
  llvm::Expected<rt::Program> program = rt::deserializeBundle(bytes, "fuzz");
  if (!program) {
    llvm::consumeError(program.takeError());
    return 0;
  }
  if (llvm::Error e = rt::validateProgram(*program)) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  if (program->gridHeight * program->gridWidth > 64)
    return 0;
  rt::NDArrayMap inputs;
  for (const rt::HostTensor &in : program->inputs) {
    rt::NDArray zeros;
    if (!in.gatherIds.empty()) {
      std::vector<int64_t> rows(in.sourceShape.begin(),
                                in.sourceShape.end() -
                                    (in.sourceShape.empty() ? 0 : 1));
      zeros.dtype = "int64";
      zeros.shape = rows;
      int64_t n = elementsUpTo(rows, 1 << 16);
      if (n < 0)
        return 0;
      zeros.data.assign(n, 0.0f);
      inputs[in.gatherIds] = zeros;
    } else if (in.data.empty()) {
      int64_t n = elementsUpTo(in.sourceShape, 1 << 16);
      if (n < 0)
        return 0;
      zeros.shape = in.sourceShape;
      zeros.data.assign(n, 0.0f);
      inputs[in.name] = zeros;
    }
  }
  for (rt::EmulatorMode mode :
       {rt::EmulatorMode::Functional, rt::EmulatorMode::Timing}) {
    rt::EmulatorOptions options;
    options.mode = mode;
    options.maxCycles = 1 << 20;
    options.maxInstructions = 1 << 14;
    llvm::Expected<rt::RunResult> result =
        rt::runProgram(*program, inputs, options);
    fuzz::ignore(result);
  }
  return 0;
}
