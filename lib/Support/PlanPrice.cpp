//===- PlanPrice.cpp - What a whole routed plan costs ---------------------===//
#include "wafer/Support/PlanPrice.h"
#include "wafer/Runtime/TimingModel.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/RouteAllocation.h"

#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "mesh-choose-ktree"

using namespace mlir;
using namespace wafer;

PlanPrice wafer::priceRoutedPlan(ModuleOp module, mesh::GridAttr grid,
                                 const rt::Target &target) {
  PlanPrice price;
  price.routed = !allocateRoutes(module, grid, target.routesPerCore);
  bool interleave = mesh::isInterleaved(module);
  rt::TimingModel timing(target);
  module.walk([&](mesh::CostedOpInterface op) {
    price.cycles += op.estimateCycles(grid, timing, interleave);
  });
  return price;
}

void wafer::chooseOpenKtreeK(ModuleOp module, mesh::GridAttr grid,
                             const rt::Target &target) {
  std::vector<Operation *> open;
  int64_t widest = 1;
  module.walk([&](Operation *op) {
    std::optional<AllreduceUse> use = getAllreduceUse(op, grid);
    if (!use || !use->allreduce.isOpenKtree())
      return;
    open.push_back(op);
    for (unsigned m = 0; m < use->messageElements.size(); ++m)
      widest = std::max(widest, use->extent(m, grid));
  });
  if (open.empty())
    return;
  auto setK = [&](int64_t k) {
    for (Operation *op : open)
      op->setAttr("allreduce",
                  mesh::AllreduceAttr::get(op->getContext(),
                                           mesh::AllreduceAlgorithm::ktree, k));
  };
  // A K whose trees overflow the routes gets them relayed, hundreds of
  // times slower; deeper than a binary tree adds nothing.
  int64_t best = 1;
  PlanPrice bestPrice;
  for (int64_t k = 1; k == 1 || (int64_t(1) << (k - 1)) < widest; ++k) {
    setK(k);
    OwningOpRef<ModuleOp> copy(module.clone());
    PlanPrice price = priceRoutedPlan(*copy, grid, target);
    LLVM_DEBUG(llvm::dbgs()
               << "K = " << k << ": " << price.cycles << " cycles"
               << (price.routed ? "" : ", routes overflow") << "\n");
    if (k == 1 || (price.routed &&
                   (!bestPrice.routed || price.cycles < bestPrice.cycles))) {
      best = k;
      bestPrice = price;
    }
  }
  setK(best);
}
