//===- MeshPlanKvCache.cpp - The KV policy and the caches' size -----------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/KvCache.h"

namespace wafer {
#define GEN_PASS_DEF_MESHPLANKVCACHE
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

/// `type` with `slots` positions (dimension 2, split along y).
RankedTensorType withSlots(RankedTensorType type, int64_t slots) {
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = slots;
  return RankedTensorType::get(shape, type.getElementType(),
                               type.getEncoding());
}

struct MeshPlanKvCachePass
    : public wafer::impl::MeshPlanKvCacheBase<MeshPlanKvCachePass> {
  using MeshPlanKvCacheBase::MeshPlanKvCacheBase;

  void runOnOperation() override {
    if (capacity < 0) {
      getOperation().emitError("mesh-plan-kv-cache: capacity must be at "
                               "least 0, got ")
          << int64_t(capacity);
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](mesh::KvAppendOp append) {
      return succeeded(plan(append)) ? WalkResult::advance()
                                     : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult plan(mesh::KvAppendOp append) {
    auto placed = append.getCache().getDefiningOp<mesh::DistributeOp>();
    if (!placed || placed.getIndexDim() != 2)
      return append.emitError("mesh-plan-kv-cache: the cache is not placed "
                              "from the host along its positions");
    KvCacheLayout layout = getKvCacheLayout(append);
    layout.policy = policy;
    layout.slotsPerRow =
        kvSlotsPerRow(layout.rows, layout.past, capacity, policy);
    // The past keeps its positions; only the slots around them change.
    RankedTensorType cacheType =
        withSlots(append.getCache().getType(), layout.rows * layout.slotsPerRow);
    SmallVector<int64_t> placement(cacheType.getDimSize(2), -1);
    for (auto [position, slot] : llvm::enumerate(layout.pastSlots()))
      placement[slot] = int64_t(position);
    placed.getResult().setType(cacheType);
    placed.setIndexMap(placement);
    append.getResult().setType(cacheType);
    append.setPolicy(policy);
    // The present cache is read back from the slots the policy leaves its
    // positions in.
    for (Operation *user : append.getResult().getUsers())
      if (auto collect = dyn_cast<mesh::CollectOp>(user))
        if (collect.getIndexDim())
          collect.setIndexMap(layout.presentSlots());
    return success();
  }
};

} // namespace
