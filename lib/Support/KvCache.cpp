//===- KvCache.cpp - Where a KV cache keeps its tokens --------------------===//
#include "wafer/Support/KvCache.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/LocalTile.h"

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

// The expressions below read the position `t` (the tokens before the step)
// at run time, so one decode program serves every step of a generation.
// Shift keeps the rows balanced, so where tokens are depends on t alone;
// concat keeps the placed past where it is and appends every later token
// to the bottom row, so it also depends on the past P placed.

std::string KvCacheLayout::firstBeforeExpr() const {
  // Rows from `fuller` on hold one token more.
  int64_t q = past / rows, fuller = rows - past % rows;
  return llvm::formatv("(ly * {0} + (ly > {1}) * (ly - {1}))", q, fuller);
}

std::string KvCacheLayout::countBeforeExpr() const {
  return llvm::formatv("({0} + (ly >= {1}))", past / rows, rows - past % rows);
}

std::string KvCacheLayout::countAfterExpr() const {
  if (policy == mesh::KvPolicy::concat) {
    int64_t q = past / rows, e = past % rows;
    return llvm::formatv("{0} + (ly >= {1}) + (ly == {2}) * (t - {3} + 1)", q,
                         rows - e, rows - 1, past);
  }
  return llvm::formatv("t / {0} + (ly >= {0} - t % {0} - 1)", rows);
}

std::string KvCacheLayout::rowTokensExpr() const {
  return llvm::formatv("t / {0}", rows);
}

std::string KvCacheLayout::bottomCountExpr() const {
  return llvm::formatv("{0} + t - {1}", countBefore(rows - 1), past);
}

std::string KvCacheLayout::shiftingRowsExpr() const {
  return llvm::formatv("ly >= {0} - t % {0}", rows);
}

std::string KvCacheLayout::receivingRowsExpr() const {
  return llvm::formatv("ly >= {0} - t % {0} - 1 && ly < {1}", rows, rows - 1);
}

int64_t KvCacheLayout::tokenLimit() const {
  if (policy == mesh::KvPolicy::shift)
    return rows * slotsPerRow;
  // Concat: the bottom row takes every token after the past.
  return past + slotsPerRow - countBefore(rows - 1);
}

int64_t wafer::kvSlotsPerRow(int64_t rows, int64_t past, int64_t capacity,
                             mesh::KvPolicy policy) {
  // Shift: the step at position t writes slot t / rows of its rows
  // (LowerKvAppend.cpp), the first step slot past / rows.
  if (policy == mesh::KvPolicy::shift)
    return std::max(past / rows + 1, ceilDiv(capacity, rows));
  // Concat: the bottom row holds its share of the past and every new token.
  int64_t step = ceilDiv(past, rows) + 1;
  KvCacheLayout layout;
  layout.rows = rows;
  layout.past = past;
  return std::max(step,
                  saturatingAdd(layout.countBefore(rows - 1), capacity - past));
}

mlir::LogicalResult wafer::checkKvCacheFits(mlir::Operation *op,
                                            mlir::RankedTensorType cache,
                                            int64_t slotsPerRow,
                                            llvm::StringRef pass) {
  mesh::GridAttr grid = mesh::lookupGrid(op);
  mesh::TargetAttr target = mesh::lookupTarget(op);
  mesh::LayoutAttr layout = mesh::getLayout(cache);
  if (!grid || !target || !layout)
    return mlir::success();
  // One position per row of cores gives a core's elements per slot.
  std::vector<int64_t> shape(cache.getShape().begin(), cache.getShape().end());
  shape[2] = grid.getHeight();
  int64_t perSlot = rt::localElements(shape, layout.toRuntime(),
                                      grid.getHeight(), grid.getWidth());
  std::optional<int64_t> elements = checkedMul(perSlot, slotsPerRow);
  int64_t bytes = elements ? bufferBytes(*elements, cache.getElementType())
                           : std::numeric_limits<int64_t>::max();
  int64_t sram = target.getValue().sramBytes;
  if (bytes <= sram)
    return mlir::success();
  return op->emitError(pass)
         << ": a KV cache of " << slotsPerRow
         << " token slots per row of cores needs "
         << (elements ? std::to_string(bytes) : std::string("more than 2^63"))
         << " bytes per core, more than target '" << target.getName()
         << "' has (" << sram << ")";
}

KvCacheLayout wafer::getKvCacheLayout(mesh::KvAppendOp op) {
  KvCacheLayout layout;
  layout.rows = mesh::lookupGrid(op).getHeight();
  layout.slotsPerRow = op.getCache().getType().getDimSize(2) / layout.rows;
  layout.past = op.getPosition();
  layout.policy = op.getPolicy();
  return layout;
}

KvCacheLayout wafer::getKvCacheLayout(mesh::KvHandoffOp op) {
  KvCacheLayout layout;
  layout.rows = mesh::lookupGrid(op).getHeight();
  layout.slotsPerRow = op.getResult().getType().getDimSize(2) / layout.rows;
  layout.past = op.getSource().getType().getDimSize(0);
  layout.policy = op.getPolicy();
  return layout;
}
