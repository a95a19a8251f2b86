//===- MemoryPlan.cpp - Per-core SRAM offsets of a mesh program -----------===//
#include "wafer/Support/MemoryPlan.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/LocalTile.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace wafer;

namespace {

/// First-fit allocation of byte ranges above a fixed base.
class FreeList {
public:
  explicit FreeList(int64_t base) { free[base] = INT64_MAX; }

  int64_t allocate(int64_t bytes) {
    for (auto it = free.begin(); it != free.end(); ++it) {
      auto [start, size] = *it;
      if (size < bytes)
        continue;
      free.erase(it);
      if (size > bytes)
        free[saturatingAdd(start, bytes)] =
            size == INT64_MAX ? INT64_MAX : size - bytes;
      return start;
    }
    return -1; // unreachable: the last range is unbounded
  }

  /// Takes [start, start + bytes) out of the free ranges; false when part
  /// of it is taken already.
  bool reserve(int64_t start, int64_t bytes) {
    auto it = free.upper_bound(start);
    if (it == free.begin())
      return false;
    --it;
    auto [from, size] = *it;
    int64_t end = saturatingAdd(start, bytes),
            rangeEnd =
                size == INT64_MAX ? INT64_MAX : saturatingAdd(from, size);
    if (end > rangeEnd)
      return false;
    free.erase(it);
    if (from < start)
      free[from] = start - from;
    if (end < rangeEnd)
      free[end] = rangeEnd == INT64_MAX ? INT64_MAX : rangeEnd - end;
    return true;
  }

  void release(int64_t start, int64_t bytes) {
    auto [it, inserted] = free.emplace(start, bytes);
    // Merge with the following and the preceding free range.
    auto next = std::next(it);
    if (next != free.end() && saturatingAdd(start, bytes) == next->first) {
      it->second = saturatingAdd(it->second, next->second);
      free.erase(next);
    }
    if (it != free.begin()) {
      auto prev = std::prev(it);
      if (saturatingAdd(prev->first, prev->second) == start) {
        prev->second = saturatingAdd(prev->second, it->second);
        free.erase(it);
      }
    }
  }

private:
  std::map<int64_t, int64_t> free;
};

RankedTensorType distributed(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && mesh::getLayout(type) ? type : RankedTensorType();
}

} // namespace

MemoryPlan wafer::planMemory(func::FuncOp main, mesh::GridAttr grid,
                             int64_t limitBytes) {
  MemoryPlan plan;
  Block &body = main.getBody().front();
  // Values updated in place are the buffer of their root.
  auto root = [](Value v) {
    while (auto append = v.getDefiningOp<mesh::KvAppendOp>())
      v = append.getCache();
    return v;
  };
  auto bytesOf = [&](Value v) {
    return bufferBytes(localElements(v, grid),
                       distributed(v).getElementType());
  };
  auto check = [&](Operation *op, const Twine &what, int64_t bytes,
                   int64_t offset) {
    int64_t end = saturatingAdd(offset, bytes);
    plan.peakBytes = std::max(plan.peakBytes, end);
    if (!plan.overflow && end > limitBytes) {
      std::string text;
      llvm::raw_string_ostream(text) << what;
      plan.overflow = MemoryPlan::Overflow{op, text, bytes, end};
    }
  };
  auto describe = [](Value v) {
    std::string text;
    llvm::raw_string_ostream(text) << "tensor " << v.getType();
    return text;
  };
  // Host inputs first, for the whole run: those an earlier program left in
  // SRAM (sram_offset) where they are, the others from the bottom up.
  FreeList freeList(0);
  for (auto distribute : body.getOps<mesh::DistributeOp>()) {
    std::optional<uint64_t> at = distribute.getSramOffset();
    if (!at)
      continue;
    int64_t bytes = bytesOf(distribute.getResult());
    plan.valueOffsets[distribute.getResult()] = int64_t(*at);
    check(distribute, describe(distribute.getResult()), bytes, int64_t(*at));
    if (!freeList.reserve(int64_t(*at), bytes) && !plan.conflict)
      plan.conflict = distribute;
  }
  for (auto distribute : body.getOps<mesh::DistributeOp>()) {
    if (distribute.getSramOffset())
      continue;
    int64_t bytes = bytesOf(distribute.getResult());
    int64_t at = freeList.allocate(bytes);
    plan.valueOffsets[distribute.getResult()] = at;
    check(distribute, describe(distribute.getResult()), bytes, at);
  }
  // The last op reading each buffer (through in-place updates); what the
  // host reads back stays until the end.
  DenseMap<Value, Operation *> lastUse;
  DenseSet<Value> readBack;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      if (distributed(operand)) {
        lastUse[root(operand)] = &op;
        if (isa<mesh::CollectOp>(op))
          readBack.insert(root(operand));
      }
  for (Operation &op : body) {
    if (isa<mesh::DistributeOp>(op))
      continue;
    for (Value result : op.getResults()) {
      if (!distributed(result))
        continue;
      Value base = root(result);
      if (base != result) {
        plan.valueOffsets[result] = plan.valueOffsets.lookup(base);
        continue;
      }
      int64_t bytes = bytesOf(result);
      int64_t at = freeList.allocate(bytes);
      plan.valueOffsets[result] = at;
      check(&op, describe(result), bytes, at);
    }
    Type element = op.getNumResults() && distributed(op.getResult(0))
                       ? distributed(op.getResult(0)).getElementType()
                       : Type();
    SmallVector<std::pair<int64_t, int64_t>> scratchRanges;
    for (auto [index, scratch] : llvm::enumerate(scratchBuffers(&op, grid))) {
      int64_t bytes =
          bufferBytes(scratch.elements, scratch.elementType(element));
      int64_t at = freeList.allocate(bytes);
      plan.scratchOffsets[{&op, unsigned(index)}] = at;
      scratchRanges.push_back({at, bytes});
      check(&op, "working buffer '" + scratch.suffix().substr(1) + "'", bytes,
            at);
    }
    // Working buffers, operands read for the last time and results nobody
    // reads are free once the op is done.
    for (auto [at, bytes] : scratchRanges)
      freeList.release(at, bytes);
    SmallVector<Value> done;
    for (Value operand : op.getOperands())
      if (distributed(operand) && lastUse.lookup(root(operand)) == &op &&
          !isa<mesh::DistributeOp>(root(operand).getDefiningOp()) &&
          !readBack.contains(root(operand)))
        done.push_back(root(operand));
    for (Value result : op.getResults())
      if (distributed(result) && root(result) == result &&
          !lastUse.count(result))
        done.push_back(result);
    llvm::sort(done, [](Value a, Value b) {
      return a.getAsOpaquePointer() < b.getAsOpaquePointer();
    });
    done.erase(std::unique(done.begin(), done.end()), done.end());
    for (Value v : done)
      freeList.release(plan.valueOffsets.lookup(v), bytesOf(v));
  }
  return plan;
}
