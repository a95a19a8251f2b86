//===- ChannelFamilies.cpp - Helpers over mesh ops' message paths ---------===//
#include "wafer/Support/ChannelFamilies.h"

#include "llvm/ADT/STLExtras.h"

using namespace wafer;

void wafer::addColorsPerIndex(
    const ChannelFamily &family, int32_t baseColor,
    std::vector<llvm::SmallVector<int32_t>> &perIndex) {
  for (auto [path, color] : llvm::zip(family.paths, family.colors)) {
    int64_t lo = path.src, hi = path.src;
    for (int64_t dst : path.dsts) {
      lo = std::min(lo, dst);
      hi = std::max(hi, dst);
    }
    for (int64_t i = lo; i <= hi; ++i)
      if (!llvm::is_contained(perIndex[i], baseColor + color))
        perIndex[i].push_back(baseColor + color);
  }
}

mlir::LogicalResult wafer::requireChosenKtrees(mlir::Operation *root,
                                               mesh::GridAttr grid,
                                               llvm::StringRef pass) {
  mlir::WalkResult result = root->walk([&](mlir::Operation *op) {
    std::optional<AllreduceUse> use = getAllreduceUse(op, grid);
    if (!use || !use->allreduce.isOpenKtree())
      return mlir::WalkResult::advance();
    op->emitError() << pass << ": the K of this K-tree is not chosen yet "
                              "(run mesh-choose-ktree first)";
    return mlir::WalkResult::interrupt();
  });
  return mlir::failure(result.wasInterrupted());
}
