//===- HugePages.h - Per-core arrays on transparent huge pages --*- C++ -*-===//
//
// The scheduler and the network keep arrays with an entry per core (over
// 400,000 of them on a full wafer) and visit them far apart: on 4 KB pages
// nearly every visit misses the TLB as well as the cache. Where the kernel
// offers transparent huge pages on request (madvise mode, Debian's default),
// those arrays ask for them before their pages are first touched.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_HUGEPAGES_H
#define WAFER_RUNTIME_EMULATOR_HUGEPAGES_H

#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace wafer::rt::emulator {

/// `v.assign(n, value)`, its storage advised onto huge pages when it is
/// (re)allocated and large enough to gain from them.
template <typename T>
void assignOnHugePages(std::vector<T> &v, size_t n, const T &value) {
#ifdef __linux__
  constexpr size_t kHugePage = size_t(2) << 20;
  if (v.capacity() < n && n * sizeof(T) >= kHugePage) {
    std::vector<T>().swap(v);
    v.reserve(n);
    // Large allocations are fresh mappings, not yet touched past their
    // first page; the advice covers the whole huge pages inside them.
    uintptr_t begin = (uintptr_t(v.data()) + kHugePage - 1) & ~(kHugePage - 1);
    uintptr_t end = (uintptr_t(v.data()) + n * sizeof(T)) & ~(kHugePage - 1);
    if (end > begin)
      madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  v.assign(n, value);
}

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_HUGEPAGES_H
