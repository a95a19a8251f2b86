//===- SpinTeam.h - Threads that wait for work by spinning ------*- C++ -*-===//
//
// The scheduler hands its threads a few hundred microseconds of work per
// batch, thousands of times a second. A thread pool's workers sleep
// between tasks, and waking one costs tens of microseconds on a virtual
// machine: a good part of each batch. A team's workers spin instead, for
// as long as the team lives (one run).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_SPINTEAM_H
#define WAFER_RUNTIME_EMULATOR_SPINTEAM_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace wafer::rt::emulator {

class SpinTeam {
public:
  /// A team of `size` threads: this one and size - 1 workers.
  explicit SpinTeam(unsigned size) {
    for (unsigned w = 1; w < size; ++w)
      workers.emplace_back([this, w] { serve(w); });
  }
  ~SpinTeam() {
    stopping.store(true, std::memory_order_release);
    for (std::thread &t : workers)
      t.join();
  }
  SpinTeam(const SpinTeam &) = delete;
  SpinTeam &operator=(const SpinTeam &) = delete;

  unsigned size() const { return unsigned(workers.size()) + 1; }

  /// Runs `task(member)` for every member of the team, this thread being
  /// member 0, and returns when all have finished.
  void run(llvm::function_ref<void(unsigned)> task) {
    current = task;
    finished.store(0, std::memory_order_relaxed);
    epoch.fetch_add(1, std::memory_order_release);
    task(0);
    while (finished.load(std::memory_order_acquire) != workers.size())
      pause();
  }

private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  void serve(unsigned member) {
    uint64_t seen = 0;
    while (true) {
      uint64_t now;
      while ((now = epoch.load(std::memory_order_acquire)) == seen) {
        if (stopping.load(std::memory_order_acquire))
          return;
        pause();
      }
      seen = now;
      current(member);
      finished.fetch_add(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> workers;
  llvm::function_ref<void(unsigned)> current;
  std::atomic<uint64_t> epoch{0};
  std::atomic<size_t> finished{0};
  std::atomic<bool> stopping{false};
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_SPINTEAM_H
