//===- PlanPrice.cpp - What a whole routed plan costs ---------------------===//
#include "wafer/Support/PlanPrice.h"
#include "wafer/Runtime/TimingModel.h"
#include "wafer/Support/MemoryPlan.h"
#include "wafer/Support/RouteAllocation.h"

#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "mesh-choose-ktree"

using namespace mlir;
using namespace wafer;

PlanPrice wafer::priceRoutedPlan(ModuleOp module, mesh::GridAttr grid,
                                 const rt::Target &target) {
  PlanPrice price;
  std::optional<RouteOverflow> overflow =
      allocateRoutes(module, grid, target.routesPerCore);
  price.routed = !overflow;
  if (overflow)
    price.colorsNeeded = overflow->needed;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  price.fitsMemory = main && !planMemory(main, grid, target.sramBytes).overflow;
  bool interleave = mesh::isInterleaved(module);
  rt::TimingModel timing(target);
  module.walk([&](mesh::CostedOpInterface op) {
    price.cycles += op.estimateCycles(grid, timing, interleave);
  });
  return price;
}

std::optional<PlanPrice> wafer::chooseOpenKtreeK(ModuleOp module,
                                                 mesh::GridAttr grid,
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
    return std::nullopt;
  auto setK = [&](int64_t k) {
    for (Operation *op : open)
      op->setAttr("allreduce",
                  mesh::AllreduceAttr::get(op->getContext(),
                                           mesh::AllreduceAlgorithm::ktree, k));
  };
  // A K whose trees overflow the routes gets them relayed, hundreds of
  // times slower, and relayed trees need buffers of their own; deeper than
  // a binary tree adds nothing.
  int64_t best = 1;
  PlanPrice bestPrice;
  for (int64_t k = 1; k == 1 || (int64_t(1) << (k - 1)) < widest; ++k) {
    setK(k);
    OwningOpRef<ModuleOp> copy(module.clone());
    PlanPrice price = priceRoutedPlan(*copy, grid, target);
    LLVM_DEBUG(llvm::dbgs() << "K = " << k << ": " << price.cycles << " cycles"
                            << (price.fits() ? "" : ", does not fit") << "\n");
    bool better =
        price.fits()
            ? !bestPrice.fits() || price.cycles < bestPrice.cycles
            : !bestPrice.fits() && price.colorsNeeded < bestPrice.colorsNeeded;
    if (k == 1 || better) {
      best = k;
      bestPrice = price;
    }
  }
  setK(best);
  return bestPrice;
}
