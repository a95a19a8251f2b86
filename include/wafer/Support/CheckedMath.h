//===- CheckedMath.h - Overflow-checked sizes and offsets -------*- C++ -*-===//
//
// Element counts, byte sizes and offsets come from files and command lines,
// so their products and sums may not fit in int64_t (signed overflow is
// undefined behaviour, and wrapped sizes pass later checks). Every such
// computation goes through these helpers: `checked*` say when the result does
// not fit, `saturating*` clamp to INT64_MAX for sizes that are only compared
// against a limit (a saturated size exceeds every limit).
//
// Header-only on LLVM Support, so that the MLIR-free kernels can use it.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_CHECKEDMATH_H
#define WAFER_SUPPORT_CHECKEDMATH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstdint>
#include <limits>
#include <optional>

namespace wafer {

/// ceil(a / b) for a >= 0 and b > 0: how many blocks of b hold a (for any
/// such a: sizes from the command line may be near INT64_MAX).
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  return llvm::checkedMul(a, b);
}

/// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  return llvm::checkedAdd(a, b);
}

/// The number of elements of `shape`, or nullopt when a dimension is negative
/// (dynamic) or the product does not fit in int64_t.
inline std::optional<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> next = checkedMul(n, d);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

/// Bytes of `elements` values of `width` bytes each, or nullopt on overflow.
inline std::optional<int64_t> checkedByteSize(int64_t elements, int64_t width) {
  if (elements < 0 || width < 0)
    return std::nullopt;
  return checkedMul(elements, width);
}

/// a + b for non-negative sizes, clamped to INT64_MAX.
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  return checkedAdd(a, b).value_or(std::numeric_limits<int64_t>::max());
}

/// a * b for non-negative sizes, clamped to INT64_MAX.
inline int64_t saturatingMul(int64_t a, int64_t b) {
  return checkedMul(a, b).value_or(std::numeric_limits<int64_t>::max());
}

} // namespace wafer

#endif // WAFER_SUPPORT_CHECKEDMATH_H
