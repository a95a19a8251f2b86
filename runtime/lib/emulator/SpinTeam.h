//===- SpinTeam.h - Threads that wait for work by spinning ------*- C++ -*-===//
//
// The scheduler hands its threads a few hundred microseconds of work per
// batch, thousands of times a second. A thread pool's workers sleep
// between tasks, and waking one costs tens of microseconds on a virtual
// machine: a good part of each batch. A team's workers spin instead, and
// sleep only once a wait grows long (a serial stretch of the run, or
// other programs wanting the processors). Each member first takes its own
// share of the pieces, the same share at every call (the scheduler hands
// it the same band of rows, to run and mostly to commit, whose state then
// stays in its cache: 15% faster on two threads than pieces taken as they
// come), then any piece still untaken, so a member the system holds back
// does not hold up the pieces: the others take its share (each member
// still checks in before the work is done).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_SPINTEAM_H
#define WAFER_RUNTIME_EMULATOR_SPINTEAM_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
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
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }
  SpinTeam(const SpinTeam &) = delete;
  SpinTeam &operator=(const SpinTeam &) = delete;

  unsigned size() const { return unsigned(workers.size()) + 1; }

  /// Runs `task(i)` for every i below `count`, on the members of the team
  /// (this thread is member 0), and returns when all are done. Member m's
  /// own share is i from m * count / size() up to (m + 1) * count / size().
  void forEach(size_t count, llvm::function_ref<void(size_t)> task) {
    current = task;
    pieces = count;
    if (count > claimedSize) {
      claimed = std::make_unique<std::atomic<bool>[]>(count);
      claimedSize = count;
    }
    for (size_t i = 0; i < count; ++i)
      claimed[i].store(false);
    finished.store(0);
    epoch.fetch_add(1);
    // A worker that is about to sleep checks the epoch after counting
    // itself, so either it sees the new epoch or this sees it sleeping.
    if (sleeping.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
    takePieces(0);
    for (unsigned spins = 0; finished.load() != workers.size(); ++spins)
      pause(spins);
  }

private:
  static constexpr unsigned kSpins = 4096;
  /// One turn of a wait that has taken `spins` turns so far.
  static void pause(unsigned spins) {
#if defined(__x86_64__) || defined(__i386__)
    if (spins < kSpins) {
      __builtin_ia32_pause();
      return;
    }
#endif
    std::this_thread::yield();
  }
  /// Its own share first, then round the pieces from there.
  void takePieces(unsigned member) {
    size_t own = member * pieces / size();
    for (size_t k = 0; k < pieces; ++k) {
      size_t i = (own + k) % pieces;
      if (!claimed[i].exchange(true))
        current(i);
    }
  }
  void serve(unsigned member) {
    uint64_t seen = 0;
    while (true) {
      for (unsigned spins = 0; epoch.load() == seen && spins < kSpins; ++spins)
        pause(spins);
      if (epoch.load() == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        sleeping.fetch_add(1);
        wake.wait(lock, [&] { return stopping || epoch.load() != seen; });
        sleeping.fetch_sub(1);
        if (stopping)
          return;
      }
      seen = epoch.load();
      takePieces(member);
      finished.fetch_add(1);
    }
  }

  std::vector<std::thread> workers;
  llvm::function_ref<void(size_t)> current;
  size_t pieces = 0;
  /// Whether piece i has been taken, for the first claimedSize pieces.
  std::unique_ptr<std::atomic<bool>[]> claimed;
  size_t claimedSize = 0;
  std::atomic<uint64_t> epoch{0};
  std::atomic<size_t> finished{0};
  std::atomic<unsigned> sleeping{0};
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false; // guarded by mutex
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_SPINTEAM_H
