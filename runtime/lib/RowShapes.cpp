//===- RowShapes.cpp - Operands of the row instructions -------------------===//
#include "wafer/Runtime/RowShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace wafer::rt {

int rowKernelOperands(Opcode op) {
  switch (op) {
  case Opcode::Reduce:
  case Opcode::SoftmaxExp:
  case Opcode::DivRows:
  case Opcode::Regrid:
  case Opcode::FlashStats:
  case Opcode::LaneDivRows:
    return 2;
  case Opcode::AttnScores:
  case Opcode::AttnValues:
  case Opcode::LaneScores:
  case Opcode::LaneValues:
  case Opcode::LaneFlashScores:
    return 3;
  case Opcode::RmsScale:
  case Opcode::Rope:
  case Opcode::FlashStep:
  case Opcode::LaneFlashValues:
    return 4;
  default:
    return 0;
  }
}

void raiseToBufferHeads(Opcode op, int64_t groups, int64_t k,
                        llvm::ArrayRef<int64_t> bufferElements,
                        std::vector<int64_t> &extents) {
  if (op != Opcode::LaneFlashValues || k == 0 || bufferElements.size() < 4 ||
      extents.size() < 4)
    return;
  // Both products stay below 2^40 times the scores' size: no overflow.
  int64_t heads = bufferElements[1] / (groups * k * k);
  extents[3] = std::max(extents[3], 3 * k * groups * heads);
}

int rowKernelExpressions(Opcode op) {
  switch (op) {
  case Opcode::AttnScores:
  case Opcode::LaneValues:
  case Opcode::LaneFlashScores:
  case Opcode::LaneFlashValues:
  case Opcode::LaneDivRows:
    return 1;
  case Opcode::Regrid:
  case Opcode::FlashStep:
  case Opcode::LaneScores:
  case Opcode::FlashStats:
    return 2;
  default:
    return 0;
  }
}

bool rowKernelUpdatesOperand(Opcode op) {
  return op == Opcode::FlashStep || op == Opcode::FlashStats;
}

llvm::Expected<std::vector<int64_t>>
rowKernelExtents(Opcode op, int64_t m, int64_t g, int64_t k, int64_t n) {
  auto fail = [](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
  };
  constexpr int64_t kMax = int64_t(1) << 40;
  if (m < 0 || g < 1 || k < 0 || n < 0 || m > kMax || g > kMax || k > kMax ||
      n > kMax)
    return fail("sizes out of range");
  // Each extent is a product of at most three sizes below 2^40: check it
  // stays below 2^40 too.
  auto product = [&](std::initializer_list<int64_t> dims) -> int64_t {
    long double p = 1;
    for (int64_t d : dims)
      p *= d;
    return p > kMax ? -1 : int64_t(p);
  };
  std::vector<int64_t> extents;
  switch (op) {
  case Opcode::Reduce:
    if (k > int64_t(ReduceKind::Max))
      return fail(llvm::formatv("unknown reduction {0}", k));
    extents = {m, product({m, n})};
    break;
  case Opcode::RmsScale:
    if (k <= 0)
      return fail("count must be positive");
    extents = {product({m, n}), product({m, n}), m, n};
    break;
  case Opcode::Rope:
    if (n % 2 != 0)
      return fail(llvm::formatv("dimension {0} is odd", n));
    extents = {product({m, k, n}), product({m, k, n}), product({m, n}),
               product({m, n})};
    break;
  case Opcode::AttnScores:
    extents = {product({m, g, k}), product({m, g, n}), product({m, k, n})};
    break;
  case Opcode::SoftmaxExp:
  case Opcode::DivRows:
    extents = {product({m, n}), m};
    break;
  case Opcode::AttnValues:
    extents = {product({m, g, n}), product({m, g, k}), product({m, k, n})};
    break;
  case Opcode::Regrid:
    if (m < 1 || k < 1 || n < 1)
      return fail("regrid needs positive rows and widths");
    // At least one slot each; the slot counts follow from the buffers.
    extents = {product({m, n}), product({m, k})};
    break;
  case Opcode::FlashStep:
    extents = {product({m, k, g, n}), product({2, m, k, g}),
               product({m, k, g, n}), product({2, m, k, n})};
    break;
  // At least one head's scores; the head count follows from the buffer.
  case Opcode::LaneScores:
    if (n < 1)
      return fail("a KV head needs at least one lane");
    extents = {product({g, k}), product({m, g, 2}), product({m, k, 2})};
    break;
  case Opcode::LaneValues:
    if (n < 1)
      return fail("a KV head needs at least one lane");
    extents = {product({m, g, 2}), product({g, k}), product({m, k, 2})};
    break;
  // Prefill over lanes: k rows of queries and of keys, m local lanes.
  case Opcode::LaneFlashScores:
    if (n < 1)
      return fail("a KV head needs at least one lane");
    extents = {product({k, g, k}), product({k, m, g * 2}), product({4, k, m})};
    break;
  case Opcode::FlashStats:
    extents = {product({k, m, k}), product({3, k, m})};
    break;
  case Opcode::LaneFlashValues:
    if (n < 1)
      return fail("a KV head needs at least one lane");
    extents = {product({k, m, g * 2}), product({k, g, k}), product({4, k, m}),
               product({3, k, g})};
    break;
  case Opcode::LaneDivRows:
    if (n < 1)
      return fail("a KV head needs at least one lane");
    extents = {product({k, m, g * 2}), product({3, k, g})};
    break;
  default:
    return fail("not a row instruction");
  }
  if (llvm::is_contained(extents, -1))
    return fail("sizes too large");
  return extents;
}

llvm::Error checkRegridLength(int64_t m, int64_t groups, int64_t k, int64_t n,
                              int64_t length, int64_t parts,
                              int64_t outElements, int64_t aElements) {
  auto fail = [](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
  };
  if (parts < 1 || (parts > 1 && length == 0))
    return fail("regrid parts " + llvm::Twine(parts) +
                " need balanced blocks and at least one part");
  if (length == 0)
    return llvm::Error::success();
  auto tile = [&](int64_t elements, int64_t width) -> int64_t {
    int64_t blocks = 0;
    if (llvm::MulOverflow(elements / (m * width), groups, blocks) || blocks < 1)
      return 0;
    return length / blocks + (length % blocks != 0);
  };
  int64_t srcTile = length < 0 || groups < 1 ? 0 : tile(aElements, k);
  int64_t unit = srcTile > 0 ? k / srcTile : 0;
  if (srcTile < 1 || k % srcTile != 0 || n != tile(outElements, n) * unit)
    return fail("regrid length " + llvm::Twine(length) +
                " does not give balanced blocks of these widths");
  // Both block counts are whole slots on `groups` cores (checked above).
  int64_t srcBlocks = aElements / (m * k) * groups,
          dstBlocks = outElements / (m * n) * groups;
  if (length % parts != 0 || srcBlocks % parts != 0 || dstBlocks % parts != 0)
    return fail("regrid parts " + llvm::Twine(parts) +
                " do not divide length " + llvm::Twine(length) +
                " and both block counts");
  return llvm::Error::success();
}

} // namespace wafer::rt

namespace wafer::rt::kernels {

RowResult rowKernelCounts(Opcode op, const RowArgs &r) {
  const int64_t m = r.m, g = r.groups, k = r.k, n = r.n;
  switch (op) {
  case Opcode::Reduce:
    return {m, m * n};
  case Opcode::RmsScale:
    return {m * n, 2 * m * n};
  case Opcode::Rope:
    return {m * k * n, 3 * m * k * n};
  case Opcode::AttnScores:
    return {m * g * k, m * g * k * n};
  case Opcode::SoftmaxExp:
  case Opcode::DivRows:
    return {m * n, m * n};
  case Opcode::AttnValues:
    return {m * g * n, m * g * k * n};
  case Opcode::Regrid: {
    int64_t copied = 0;
    forEachRegridOverlap(r, [&](int64_t, int64_t, int64_t, int64_t, int64_t lo,
                                int64_t hi) { copied += m * (hi - lo); });
    return {r.outElements, copied};
  }
  case Opcode::FlashStep: {
    int64_t queries = m * k * g;
    return {queries * n, 2 * queries * m * n};
  }
  case Opcode::LaneScores:
    return {k == 0 ? 0 : r.outElements / (g * k) * g * k, 2 * m * g * k};
  case Opcode::LaneValues:
    return {m * g * 2, 2 * m * g * k};
  case Opcode::LaneFlashScores:
    return {k == 0 ? 0 : r.outElements / (g * k * k) * k * g * k,
            2 * k * m * g * k};
  case Opcode::FlashStats:
    return {k * m * k, 3 * k * m * k};
  case Opcode::LaneFlashValues:
    return {k * m * g * 2, 2 * k * m * g * (k + 1)};
  case Opcode::LaneDivRows:
    return {k * m * g * 2, k * m * g * 2};
  default:
    return {};
  }
}

} // namespace wafer::rt::kernels
