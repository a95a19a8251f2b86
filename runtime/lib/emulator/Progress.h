//===- Progress.h - Progress of long runs on stderr -------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_EMULATOR_PROGRESS_H
#define WAFER_RUNTIME_EMULATOR_PROGRESS_H

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace wafer::rt::emulator {

/// A line on stderr for runs longer than `after`, rewritten in place;
/// silent when stderr is not a terminal or when not `enabled` (--quiet).
class Progress {
public:
  Progress(int64_t cores, bool enabled, std::chrono::milliseconds after)
      : cores(cores),
        shown(enabled && llvm::sys::Process::StandardErrIsDisplayed()),
        after(after), start(std::chrono::steady_clock::now()), last(start) {}
  ~Progress() {
    if (printed)
      llvm::errs() << "\r" << std::string(60, ' ') << "\r";
  }
  void update(int64_t cycle, int64_t done) {
    // The clock is read at the first call and every 1024th.
    if (!shown || calls++ % 1024 != 0)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now - start < after ||
        (printed && now - last < std::chrono::milliseconds(250)))
      return;
    last = now;
    printed = true;
    llvm::errs() << llvm::formatv(
        "\remulating: cycle {0}, {1} of {2} cores done", cycle, done, cores);
    llvm::errs().flush();
  }

private:
  int64_t cores, calls = 0;
  bool shown, printed = false;
  std::chrono::milliseconds after;
  std::chrono::steady_clock::time_point start, last;
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_PROGRESS_H
