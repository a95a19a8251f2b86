//===- TensorValues.cpp - Weight values, f32 or f16, owned or viewed ------===//
#include "wafer/Runtime/Program.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"

#include <sys/mman.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wafer::rt {

namespace {

void halvesToFloatsReference(const uint16_t *halves, float *out,
                             int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    _Float16 h;
    static_assert(sizeof h == sizeof *halves);
    __builtin_memcpy(&h, halves + i, sizeof h);
    out[i] = float(h);
  }
}

void floatsToHalvesReference(const float *values, uint16_t *out,
                             int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    _Float16 h = _Float16(values[i]);
    __builtin_memcpy(out + i, &h, sizeof h);
  }
}

#if defined(__x86_64__)
// F16C converts exactly as the conversions above (round to nearest even),
// eight values per instruction instead of a libgcc call each.
__attribute__((target("avx,f16c"))) void
halvesToFloatsF16c(const uint16_t *halves, float *out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(
                         reinterpret_cast<const __m128i *>(halves + i))));
  halvesToFloatsReference(halves + i, out + i, count - i);
}

__attribute__((target("avx,f16c"))) void
floatsToHalvesF16c(const float *values, uint16_t *out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(values + i),
                                     _MM_FROUND_TO_NEAREST_INT));
  floatsToHalvesReference(values + i, out + i, count - i);
}

bool hasF16c() {
  static const bool has =
      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}
#endif

} // namespace

void halvesToFloats(const uint16_t *halves, float *out, int64_t count) {
#if defined(__x86_64__)
  if (hasF16c())
    return halvesToFloatsF16c(halves, out, count);
#endif
  halvesToFloatsReference(halves, out, count);
}

void floatsToHalves(const float *values, uint16_t *out, int64_t count) {
#if defined(__x86_64__)
  if (hasF16c())
    return floatsToHalvesF16c(values, out, count);
#endif
  floatsToHalvesReference(values, out, count);
}

TensorValues::TensorValues(std::vector<float> values) {
  auto owned = std::make_shared<const std::vector<float>>(std::move(values));
  data = owned->data();
  count = int64_t(owned->size());
  owner = std::move(owned);
}

TensorValues TensorValues::halves(std::vector<uint16_t> bits) {
  auto owned = std::make_shared<const std::vector<uint16_t>>(std::move(bits));
  TensorValues t;
  t.data = owned->data();
  t.count = int64_t(owned->size());
  t.type = DType::F16;
  t.owner = std::move(owned);
  return t;
}

TensorValues TensorValues::view(const void *data, int64_t count, DType dtype,
                                std::shared_ptr<const void> owner,
                                bool inMappedFile) {
  TensorValues t;
  t.data = data;
  t.count = count;
  t.type = dtype;
  t.owner = std::move(owner);
  t.inMappedFile = inMappedFile;
  return t;
}

void TensorValues::releasePages() const {
  if (inMappedFile)
    releaseMappedPages(data, count * bytesOf(type));
}

void releaseMappedPages(const void *data, int64_t bytes) {
  // Only the pages wholly inside the range: its neighbours may be in use.
  uint64_t page = llvm::sys::Process::getPageSizeEstimate();
  uint64_t begin = llvm::alignTo(reinterpret_cast<uintptr_t>(data), page),
           end =
               llvm::alignDown(reinterpret_cast<uintptr_t>(data) + bytes, page);
  // A read-only file mapping's pages are clean: dropping them loses
  // nothing, and the next read faults them in from the file again.
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

void TensorValues::read(int64_t begin, int64_t n, float *out) const {
  if (type == DType::F16)
    halvesToFloats(f16() + begin, out, n);
  else
    std::copy_n(f32() + begin, n, out);
}

std::vector<float> TensorValues::toFloats() const {
  std::vector<float> out(count);
  read(0, count, out.data());
  return out;
}

std::vector<uint16_t> TensorValues::toHalves() const {
  if (type == DType::F16)
    return std::vector<uint16_t>(f16(), f16() + count);
  std::vector<uint16_t> out(count);
  floatsToHalves(f32(), out.data(), count);
  return out;
}

} // namespace wafer::rt
