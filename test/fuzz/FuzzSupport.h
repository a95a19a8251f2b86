//===- FuzzSupport.h - Shared pieces of the fuzz targets --------*- C++ -*-===//
//
// Every target is a libFuzzer entry point (LLVMFuzzerTestOneInput) that
// feeds the bytes to one reader of untrusted input and must return without
// crashing whatever the bytes: errors are expected, crashes, hangs and
// sanitizer reports are findings. With WAFER_FUZZ the entry points link
// with libFuzzer; otherwise with ReplayMain.cpp, which runs them over a
// corpus as a regression test.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_TEST_FUZZ_FUZZSUPPORT_H
#define WAFER_TEST_FUZZ_FUZZSUPPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace wafer::fuzz {

/// Writes the input to a file of this process (readers that take a path
/// get one) and returns its path; `suffix` picks the reader by name.
inline std::string writeInput(const uint8_t *data, size_t size,
                              llvm::StringRef suffix) {
  std::string path = "/tmp/wafer-fuzz-" + std::to_string(getpid()) +
                     suffix.str();
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

/// Drops an expected error; findings are crashes, not errors.
template <typename T> void ignore(llvm::Expected<T> &value) {
  if (!value)
    llvm::consumeError(value.takeError());
}
inline void ignore(llvm::Error error) { llvm::consumeError(std::move(error)); }

} // namespace wafer::fuzz

#endif // WAFER_TEST_FUZZ_FUZZSUPPORT_H
