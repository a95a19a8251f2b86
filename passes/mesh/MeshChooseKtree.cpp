//===- MeshChooseKtree.cpp - K of each open K-tree from the cost model ----===//
#include "wafer/CostModel/CostModel.h"
#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/TimingModel.h"
#include "wafer/Support/ChannelFamilies.h"

#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "mesh-choose-ktree"

namespace wafer {
#define GEN_PASS_DEF_MESHCHOOSEKTREE
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshChooseKtreePass
    : public wafer::impl::MeshChooseKtreeBase<MeshChooseKtreePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    if (!grid || !target)
      return;
    const rt::TimingModel timing(target.getValue());
    // The centered tree runs over physical positions, so the placement
    // (INTERLEAVE) does not matter; a lane segment's runs over logical
    // ones, which INTERLEAVE spaces up to two columns apart (not counted).
    std::vector<Operation *> open;
    std::vector<cost::KTreeUse> uses;
    module.walk([&](Operation *op) {
      std::optional<AllreduceUse> use = getAllreduceUse(op, grid);
      if (!use || !use->allreduce.isOpenKtree())
        return;
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      rt::DType dtype =
          type.getElementType().isF16() ? rt::DType::F16 : rt::DType::F32;
      // The op's widest tree and its largest message.
      int64_t values = *llvm::max_element(use->messageElements), n = 1;
      for (unsigned m = 0; m < use->messageElements.size(); ++m)
        n = std::max(n, use->extent(m, grid));
      open.push_back(op);
      uses.push_back({n, values, rt::TimingModel::words(values, dtype),
                      timing.macsPerCycle(dtype)});
    });
    if (open.empty())
      return;
    int64_t k = cost::chooseKTreeK(uses, timing.target());
    LLVM_DEBUG(llvm::dbgs()
               << open.size() << " open K-trees -> K = " << k << "\n");
    for (Operation *op : open)
      op->setAttr("allreduce",
                  mesh::AllreduceAttr::get(op->getContext(),
                                           mesh::AllreduceAlgorithm::ktree, k));
  }
};

} // namespace
