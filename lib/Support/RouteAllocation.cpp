//===- RouteAllocation.cpp - Routing colors of a mesh program -------------===//
#include "wafer/Support/RouteAllocation.h"
#include "wafer/Support/ChannelFamilies.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "mesh-allocate-routes"

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

/// Trees that can send hop by hop when their colors do not fit.
static bool canRelay(Operation *op, mesh::GridAttr grid) {
  std::optional<AllreduceUse> use = getAllreduceUse(op, grid);
  return use && use->allreduce.getAlgorithm() != mesh::AllreduceAlgorithm::ring;
}

static void setRelayed(Operation *op, bool relayed) {
  if (relayed)
    op->setAttr("relayed", UnitAttr::get(op->getContext()));
  else
    op->removeAttr("relayed");
}

/// Colors for every communicating op of a module, in program order.
class ColorAllocator {
public:
  ColorAllocator(mesh::GridAttr grid, int64_t budget)
      : grid(grid), budget(budget), perX(grid.getWidth()),
        perY(grid.getHeight()) {}

  /// Assigns colors to `op` (setting `colors`), relaying its tree when that
  /// is what makes it fit; the overflow when nothing does.
  std::optional<RouteOverflow> allocate(Operation *op) {
    Snapshot saved = snapshot();
    SmallVector<int32_t> colors;
    RouteOverflow result = assign(op, colors);
    if (result.needed > budget && canRelay(op, grid) &&
        !op->hasAttr("relayed")) {
      // Relaying pays off only if it needs fewer colors (under INTERLEAVE
      // its hops take three per direction, more than a small tree).
      Snapshot plain = snapshot();
      SmallVector<int32_t> plainColors = colors;
      restore(saved);
      setRelayed(op, true);
      RouteOverflow relayed = assign(op, colors);
      if (relayed.needed < result.needed) {
        result = relayed;
      } else {
        restore(plain);
        colors = plainColors;
        setRelayed(op, false);
      }
    }
    LLVM_DEBUG({
      llvm::dbgs() << op->getName() << " at " << op->getLoc()
                   << ": base colors [";
      llvm::interleaveComma(colors, llvm::dbgs());
      llvm::dbgs() << "]" << (op->hasAttr("relayed") ? ", relayed" : "") << "; "
                   << result.needed << " colors needed at core (" << result.x
                   << ", " << result.y << ") of " << budget << "\n";
    });
    if (result.needed > budget)
      return result;
    op->setAttr("colors", DenseI32ArrayAttr::get(op->getContext(), colors));
    return std::nullopt;
  }

private:
  struct Snapshot {
    std::vector<SmallVector<int32_t>> perX, perY;
    llvm::StringMap<int32_t> baseColors;
    int32_t nextColor;
  };
  Snapshot snapshot() const { return {perX, perY, baseColors, nextColor}; }
  void restore(const Snapshot &s) {
    perX = s.perX;
    perY = s.perY;
    baseColors = s.baseColors;
    nextColor = s.nextColor;
  }

  /// Adds the op's families (ops with the same paths share colors) and
  /// returns the resulting per-core need and where it peaks. A core's
  /// colors are those its column index needs on x-families plus those its
  /// row index needs on y-families.
  RouteOverflow assign(Operation *op, SmallVector<int32_t> &colors) {
    colors.clear();
    bool interleave =
        mesh::getLayout(op->getResult(0).getType()).getInterleave();
    for (const ChannelFamily &family :
         getChannelFamilies(op, grid, interleave)) {
      // A family without paths (an axis of one core) needs no color.
      if (family.numColors == 0) {
        colors.push_back(0);
        continue;
      }
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
    return {op, std::max<int64_t>(xColors + yColors, nextColor), x, y};
  }

  mesh::GridAttr grid;
  int64_t budget;
  std::vector<SmallVector<int32_t>> perX, perY;
  llvm::StringMap<int32_t> baseColors;
  int32_t nextColor = 0;
};

} // namespace

std::optional<RouteOverflow> wafer::allocateRoutes(ModuleOp module,
                                                   mesh::GridAttr grid,
                                                   int64_t routesPerCore) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<mesh::CommunicatingOpInterface>(op))
      ops.push_back(op);
  });
  auto run = [&]() -> std::optional<RouteOverflow> {
    ColorAllocator allocator(grid, routesPerCore);
    for (Operation *op : ops)
      if (auto overflow = allocator.allocate(op))
        return overflow;
    return std::nullopt;
  };
  // Relaying one tree at a time can leave earlier trees holding the
  // colors a later one needs; then every tree is relayed, once.
  std::optional<RouteOverflow> overflow = run();
  auto relayable = [&](Operation *op) { return canRelay(op, grid); };
  if (overflow && llvm::any_of(ops, relayable)) {
    for (Operation *op : ops)
      if (relayable(op))
        setRelayed(op, true);
    std::optional<RouteOverflow> allRelayed = run();
    if (!allRelayed)
      return std::nullopt;
    // Report whichever attempt came closer to the budget.
    if (allRelayed->needed < overflow->needed)
      overflow = allRelayed;
  }
  return overflow;
}
