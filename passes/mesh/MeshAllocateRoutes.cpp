//===- MeshAllocateRoutes.cpp - Routing colors for mesh ops ---------------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/ChannelFamilies.h"

#include "llvm/ADT/StringMap.h"

namespace wafer {
#define GEN_PASS_DEF_MESHALLOCATEROUTES
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

/// The index of the axis with the most colors, and that count.
static std::pair<int64_t, size_t>
busiestIndex(const std::vector<SmallVector<int32_t>> &perIndex) {
  std::pair<int64_t, size_t> best{0, 0};
  for (auto [i, colors] : llvm::enumerate(perIndex))
    if (colors.size() > best.second)
      best = {int64_t(i), colors.size()};
  return best;
}

struct MeshAllocateRoutesPass
    : public wafer::impl::MeshAllocateRoutesBase<MeshAllocateRoutesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    if (!grid || !target) {
      module.emitError("mesh-allocate-routes: the module needs mesh.grid and "
                       "mesh.target (run convert-tfm-to-mesh first)");
      return signalPassFailure();
    }
    int64_t budget = target.getRoutesPerCore();
    // A core's colors are those its column index needs on x-families plus
    // those its row index needs on y-families.
    std::vector<SmallVector<int32_t>> perX(grid.getWidth()),
        perY(grid.getHeight());
    llvm::StringMap<int32_t> baseColors;
    int32_t nextColor = 0;
    WalkResult walk = module.walk([&](Operation *op) {
      if (!isa<mesh::GemmOp, mesh::GemvOp>(op))
        return WalkResult::advance();
      bool interleave = mesh::getLayout(op->getResult(0).getType())
                            .getInterleave();
      SmallVector<int32_t> colors;
      for (const ChannelFamily &family :
           getChannelFamilies(op, grid, interleave)) {
        auto [it, inserted] = baseColors.try_emplace(family.name, nextColor);
        if (inserted) {
          nextColor += family.numColors;
          addColorsPerIndex(family, it->second,
                            family.axis == rt::Axis::X ? perX : perY);
        }
        colors.push_back(it->second);
      }
      auto [x, xColors] = busiestIndex(perX);
      auto [y, yColors] = busiestIndex(perY);
      // Colors are not reused across families, so the highest one counts
      // too; with families spanning whole axes it equals the per-core need.
      int64_t needed = std::max<int64_t>(xColors + yColors, nextColor);
      if (needed > budget) {
        op->emitError("mesh-allocate-routes: ")
            << op->getName() << " needs " << needed
            << " routing colors at core (x=" << x << ", y=" << y
            << ") but target '" << target.getName() << "' has " << budget;
        return WalkResult::interrupt();
      }
      op->setAttr("colors", DenseI32ArrayAttr::get(op->getContext(), colors));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
