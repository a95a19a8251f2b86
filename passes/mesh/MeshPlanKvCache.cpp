//===- MeshPlanKvCache.cpp - The KV policy and the caches' size -----------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/KvCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

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

/// A host view with `slots` along dimension `dim`; none without a view.
DenseI64ArrayAttr withSlots(DenseI64ArrayAttr view, int64_t dim,
                            int64_t slots) {
  if (!view)
    return view;
  SmallVector<int64_t> shape(view.asArrayRef());
  shape[dim] = slots;
  return DenseI64ArrayAttr::get(view.getContext(), shape);
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
    if (result.wasInterrupted() || failed(pinResidentCaches()))
      signalPassFailure();
  }

  /// Places the `resident` caches at their offsets.
  LogicalResult pinResidentCaches() {
    func::FuncOp main = getOperation();
    llvm::StringSet<> pinned;
    for (StringRef entry : resident) {
      auto [name, offsetText] = entry.split('=');
      int64_t offset = -1;
      if (offsetText.getAsInteger(10, offset) || offset < 0 || offset % 4)
        return main.emitError("mesh-plan-kv-cache: resident '")
               << entry << "' is not NAME=BYTE_OFFSET (a multiple of 4)";
      // The later offset would silently win.
      if (!pinned.insert(name).second)
        return main.emitError("mesh-plan-kv-cache: resident '")
               << name << "' is given twice";
      mesh::DistributeOp cache;
      for (BlockArgument arg : main.getArguments()) {
        auto argName =
            main.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tfm.name");
        if (!argName || argName.getValue() != name)
          continue;
        // A cache of lanes is placed from the host's reshape of the past.
        SmallVector<Operation *> users(arg.getUsers());
        for (Operation *user : arg.getUsers())
          if (isa<tfm::ReshapeOp>(user))
            llvm::append_range(users, user->getUsers());
        for (Operation *user : users)
          if (auto placed = dyn_cast<mesh::DistributeOp>(user))
            if (llvm::any_of(placed->getUsers(), [&](Operation *op) {
                  auto append = dyn_cast<mesh::KvAppendOp>(op);
                  return append && append.getCache() == placed.getResult();
                }))
              cache = placed;
      }
      if (!cache)
        return main.emitError("mesh-plan-kv-cache: resident '")
               << name << "' is not a past KV cache of this function";
      cache.setSramOffsetAttr(
          IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
    }
    return success();
  }

  LogicalResult plan(mesh::KvAppendOp append) {
    auto placed = append.getCache().getDefiningOp<mesh::DistributeOp>();
    // Positions are the cache's dimension 2, or dimension 3 of the host's
    // view of attention lanes ([1, KVH, D / 2, slots, 2]).
    if (!placed || placed.getIndexDim() != (placed.getView() ? 3 : 2))
      return append.emitError("mesh-plan-kv-cache: the cache is not placed "
                              "from the host along its positions");
    KvCacheLayout layout = getKvCacheLayout(append);
    layout.policy = policy;
    layout.slotsPerRow =
        kvSlotsPerRow(layout.rows, layout.past, capacity, policy);
    if (failed(checkKvCacheFits(append, append.getCache().getType(),
                                layout.slotsPerRow, "mesh-plan-kv-cache")))
      return failure();
    // The past keeps its positions; only the slots around them change.
    RankedTensorType cacheType =
        withSlots(append.getCache().getType(), layout.rows * layout.slotsPerRow);
    SmallVector<int64_t> placement(cacheType.getDimSize(2), -1);
    for (auto [position, slot] : llvm::enumerate(layout.pastSlots()))
      placement[slot] = int64_t(position);
    placed.getResult().setType(cacheType);
    placed.setIndexMap(placement);
    placed.setViewAttr(withSlots(placed.getViewAttr(), *placed.getIndexDim(),
                                 cacheType.getDimSize(2)));
    append.getResult().setType(cacheType);
    append.setPolicy(policy);
    // The present cache is read back from the slots the policy leaves its
    // positions in.
    for (Operation *user : append.getResult().getUsers())
      if (auto collect = dyn_cast<mesh::CollectOp>(user))
        if (std::optional<uint64_t> dim = collect.getIndexDim()) {
          collect.setIndexMap(layout.presentSlots());
          collect.setViewAttr(withSlots(collect.getViewAttr(), int64_t(*dim),
                                        cacheType.getDimSize(2)));
        }
    return success();
  }
};

} // namespace
