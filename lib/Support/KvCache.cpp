//===- KvCache.cpp - Where a KV cache keeps its tokens --------------------===//
#include "wafer/Support/KvCache.h"

#include "llvm/Support/FormatVariadic.h"

using namespace wafer;

int64_t KvCacheLayout::countBefore(int64_t row) const {
  int64_t q = past / rows, e = past % rows;
  return q + (row >= rows - e ? 1 : 0);
}

int64_t KvCacheLayout::countAfter(int64_t row) const {
  int64_t q = past / rows, e = past % rows;
  if (policy == mesh::KvPolicy::concat)
    return countBefore(row) + (row == rows - 1 ? 1 : 0);
  return q + (row >= rows - e - 1 ? 1 : 0);
}

/// Positions are contiguous by row (row 0 the oldest), in each row's first
/// slots.
static std::vector<int64_t> slotsFor(const KvCacheLayout &layout,
                                     int64_t tokens, bool after) {
  std::vector<int64_t> slots;
  for (int64_t row = 0; row < layout.rows; ++row) {
    int64_t count = after ? layout.countAfter(row) : layout.countBefore(row);
    for (int64_t j = 0; j < count; ++j)
      slots.push_back(row * layout.slotsPerRow + j);
  }
  slots.resize(tokens);
  return slots;
}

std::vector<int64_t> KvCacheLayout::pastSlots() const {
  return slotsFor(*this, past, false);
}

std::vector<int64_t> KvCacheLayout::presentSlots() const {
  return slotsFor(*this, past + 1, true);
}

std::string KvCacheLayout::countAfterExpr() const {
  int64_t q = past / rows, e = past % rows;
  if (policy == mesh::KvPolicy::concat)
    return llvm::formatv("{0} + (ly >= {1}) + (ly == {2})", q, rows - e,
                         rows - 1);
  return llvm::formatv("{0} + (ly >= {1})", q, rows - e - 1);
}

KvCacheLayout wafer::getKvCacheLayout(mesh::KvAppendOp op) {
  KvCacheLayout layout;
  layout.rows = mesh::lookupGrid(op).getHeight();
  layout.slotsPerRow = op.getCache().getType().getDimSize(2) / layout.rows;
  layout.past = op.getPosition();
  layout.policy = op.getPolicy();
  return layout;
}
