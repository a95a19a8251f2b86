//===- MeshShiftKvCache.cpp - Balanced KV caches --------------------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/KvCache.h"

namespace wafer {
#define GEN_PASS_DEF_MESHSHIFTKVCACHE
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshShiftKvCachePass
    : public wafer::impl::MeshShiftKvCacheBase<MeshShiftKvCachePass> {
  void runOnOperation() override {
    getOperation().walk([&](mesh::KvAppendOp append) {
      append.setPolicy(mesh::KvPolicy::shift);
      // The present cache is read back from the slots the shift leaves
      // its positions in.
      for (Operation *user : append.getResult().getUsers())
        if (auto collect = dyn_cast<mesh::CollectOp>(user))
          if (collect.getIndexDim())
            collect.setIndexMap(getKvCacheLayout(append).presentSlots());
    });
  }
};

} // namespace
