//===- ChannelFamilies.cpp - Message paths of mesh ops --------------------===//
#include "wafer/Support/ChannelFamilies.h"

#include "wafer/Support/LocalTile.h"

#include "llvm/ADT/STLExtras.h"

using namespace wafer;

static ChannelFamily makeFamily(std::string name, rt::Axis axis,
                                std::vector<rt::LinePath> paths) {
  ChannelFamily family{std::move(name), axis, std::move(paths), {}, 0};
  family.colors = rt::colorLinePaths(family.paths, family.numColors);
  return family;
}

std::vector<ChannelFamily>
wafer::getChannelFamilies(mlir::Operation *op, mesh::GridAttr grid,
                          bool interleave) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  std::vector<ChannelFamily> families;
  if (auto gemm = mlir::dyn_cast<mesh::GemmOp>(op)) {
    if (gemm.getAlgorithm() == mesh::GemmAlgorithm::summa) {
      families.push_back(makeFamily("east_x", rt::Axis::X,
                                    rt::neighborPaths(w, true)));
      families.push_back(makeFamily("west_x", rt::Axis::X,
                                    rt::neighborPaths(w, false)));
      families.push_back(makeFamily("south_y", rt::Axis::Y,
                                    rt::neighborPaths(h, true)));
      families.push_back(makeFamily("north_y", rt::Axis::Y,
                                    rt::neighborPaths(h, false)));
      return families;
    }
    families.push_back(makeFamily("ring_x", rt::Axis::X,
                                  rt::ringShiftPaths(w, interleave)));
    families.push_back(makeFamily("ring_y", rt::Axis::Y,
                                  rt::ringShiftPaths(h, interleave)));
  } else if (auto attention = mlir::dyn_cast<mesh::AttentionOp>(op);
             attention && !attention.isDecode()) {
    families.push_back(makeFamily("ring_y", rt::Axis::Y,
                                  rt::ringShiftPaths(h, interleave)));
  } else if (auto append = mlir::dyn_cast<mesh::KvAppendOp>(op)) {
    // The shift passes tokens one row up (towards position 0).
    if (append.getPolicy() == mesh::KvPolicy::shift)
      families.push_back(makeFamily("hop_in_y", rt::Axis::Y,
                                    rt::neighborPaths(h, false, interleave)));
  } else if (auto relayout = mlir::dyn_cast<mesh::RelayoutOp>(op)) {
    bool alongX = relayout.alongX();
    families.push_back(makeFamily(
        alongX ? "ring_x" : "ring_y", alongX ? rt::Axis::X : rt::Axis::Y,
        rt::ringShiftPaths(alongX ? w : h, interleave)));
  } else if (std::optional<AllreduceUse> use = getAllreduceUse(op, grid)) {
    // The reduction runs along columns (y), or along rows (x).
    mesh::AllreduceAttr allreduce = use->allreduce;
    bool alongX = use->alongX;
    rt::Axis axis = alongX ? rt::Axis::X : rt::Axis::Y;
    int64_t n = alongX ? w : h;
    std::string axisName = alongX ? "x" : "y";
    if (allreduce.getAlgorithm() == mesh::AllreduceAlgorithm::ring) {
      families.push_back(makeFamily("ring_" + axisName, axis,
                                    rt::ringShiftPaths(n, interleave)));
      return families;
    }
    if (use->relayed) {
      // Every message moves one ring position at a time, so all levels
      // share the hops towards position 0 and the broadcast the hops away.
      families.push_back(makeFamily("hop_in_" + axisName, axis,
                                    rt::neighborPaths(n, false, interleave)));
      families.push_back(makeFamily("hop_out_" + axisName, axis,
                                    rt::neighborPaths(n, true, interleave)));
      return families;
    }
    std::string prefix =
        allreduce.getAlgorithm() == mesh::AllreduceAlgorithm::pipeline
            ? std::string("pipeline")
            : "ktree" + std::to_string(allreduce.getK());
    if (alongX)
      prefix += "_x";
    for (auto [i, level] :
         llvm::enumerate(rt::ktreeLevels(n, allreduce.getTreeK())))
      families.push_back(makeFamily(prefix + "_level" + std::to_string(i),
                                    axis,
                                    rt::ktreeLevelPaths(n, level, interleave)));
    families.push_back(makeFamily("broadcast_" + axisName, axis,
                                  rt::broadcastPaths(n, interleave)));
  }
  return families;
}

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

std::optional<AllreduceUse> wafer::getAllreduceUse(mlir::Operation *op,
                                                   mesh::GridAttr grid) {
  AllreduceUse use;
  use.relayed = op->hasAttr("relayed");
  if (auto gemv = mlir::dyn_cast<mesh::GemvOp>(op)) {
    use.alongX = gemv.reducesAlongX();
    use.allreduce = gemv.getAllreduce();
    use.messageElements = {localElements(gemv.getResult(), grid)};
  } else if (auto norm = mlir::dyn_cast<mesh::RmsNormOp>(op)) {
    use.alongX = norm.reducesAlongX();
    use.allreduce = norm.getAllreduce();
    // One sum of squares per local row.
    int64_t perRow =
        mlir::cast<mlir::RankedTensorType>(norm.getWeight().getType())
            .getShape()[0];
    int64_t extent = use.alongX ? grid.getWidth() : grid.getHeight();
    use.messageElements = {localElements(norm.getInput(), grid) /
                           ((perRow + extent - 1) / extent)};
  } else if (auto attention = mlir::dyn_cast<mesh::AttentionOp>(op);
             attention && attention.isDecode()) {
    use.alongX = false;
    use.allreduce = *attention.getAllreduce();
    // The softmax's max and sum per query head, then the weighted values.
    auto key = mlir::cast<mlir::RankedTensorType>(attention.getKey().getType());
    int64_t out = localElements(attention.getQuery(), grid);
    int64_t heads = out / key.getShape()[3];
    use.messageElements = {heads, heads, out};
  } else {
    return std::nullopt;
  }
  return use;
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
