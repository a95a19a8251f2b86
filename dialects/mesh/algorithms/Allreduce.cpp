//===- Allreduce.cpp - K-tree, pipeline and ring allreduce plans ----------===//
//
// The allreduce of MeshGEMV (paper section 6) and of the ops that combine
// values the same way: mesh.gemv and mesh.rms_norm here, decode attention
// in Attention.cpp. Lowered by passes/conversion/LowerAllreduce.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

/// The families of `use`'s allreduces along one axis.
static std::vector<ChannelFamily> familiesAlong(const AllreduceUse &use,
                                                bool alongX, GridAttr grid,
                                                bool interleave) {
  AllreduceAttr allreduce = use.allreduce;
  rt::Axis axis = alongX ? rt::Axis::X : rt::Axis::Y;
  int64_t n = alongX ? grid.getWidth() : grid.getHeight();
  std::string axisName = alongX ? "x" : "y";
  std::optional<AxisSegments> segments = use.segmentsAlong(alongX);
  if (allreduce.getAlgorithm() == AllreduceAlgorithm::ring)
    return {ringFamily(ChannelRole::Ring, axis, grid, interleave)};
  if (use.relayed)
    // Every message moves one ring position at a time, so all levels
    // share the hops towards position 0 and the broadcast the hops away.
    return {makeFamily(ChannelRole::HopIn, "hop_in_" + axisName, axis,
                       rt::neighborPaths(n, false, interleave)),
            makeFamily(ChannelRole::HopOut, "hop_out_" + axisName, axis,
                       rt::neighborPaths(n, true, interleave))};
  bool pipeline = allreduce.getAlgorithm() == AllreduceAlgorithm::pipeline;
  std::string prefix = pipeline ? std::string("pipeline")
                                : "ktree" + std::to_string(allreduce.getK());
  if (alongX)
    prefix += "_x";
  // One tree over the whole axis, or one per segment over its logical
  // positions; each position at its physical index.
  struct Tree {
    int64_t first, n;
  };
  std::vector<Tree> trees{{0, n}};
  std::vector<int64_t> physical(n);
  std::iota(physical.begin(), physical.end(), 0);
  std::string suffix;
  if (segments) {
    trees.clear();
    for (int64_t segment = 0; segment < segments->count; ++segment)
      trees.push_back({segment * segments->columns,
                       segment + 1 == segments->count ? segments->lastColumns
                                                      : segments->columns});
    physical = rt::ringOrder(n, interleave);
    suffix = llvm::formatv("_seg{0}x{1}", segments->columns, segments->count);
    if (segments->lastColumns != segments->columns)
      suffix += "_" + std::to_string(segments->lastColumns);
  }
  int64_t k = allreduce.getTreeK();
  // Level i, the join or the broadcast of every tree, as one family's
  // paths (`part` gives a tree's paths over its own positions).
  auto gather = [&](auto part) {
    std::vector<rt::LinePath> paths;
    for (const Tree &tree : trees) {
      if (tree.n <= 1)
        continue;
      int64_t treeRoot = rt::ktreeRoot(tree.n, /*centered=*/!pipeline);
      for (rt::LinePath path :
           part(tree.n, treeRoot, rt::rootedTreeLevels(tree.n, treeRoot, k))) {
        path.src = physical[tree.first + path.src];
        for (int64_t &dst : path.dsts)
          dst = physical[tree.first + dst];
        paths.push_back(std::move(path));
      }
    }
    return paths;
  };
  // One family per level of the deepest tree, then the join's (the level
  // above the halves'), then the broadcast's.
  unsigned depth = use.treeDepthAlong(alongX, grid);
  std::vector<ChannelFamily> families;
  for (unsigned i = 0; i < depth; ++i) {
    families.push_back(
        makeFamily(ChannelRole::TreeLevel,
                   prefix + "_level" + std::to_string(i) + suffix, axis,
                   gather([&](int64_t size, int64_t treeRoot,
                              const std::vector<rt::KTreeLevel> &levels) {
                     return i < levels.size()
                                ? rt::ktreeLevelPaths(size, treeRoot, levels[i])
                                : std::vector<rt::LinePath>{};
                   })));
    families.back().level = i;
  }
  families.push_back(makeFamily(ChannelRole::TreeLevel,
                                prefix + "_join" + suffix, axis,
                                gather([](int64_t size, int64_t treeRoot,
                                          const std::vector<rt::KTreeLevel> &) {
                                  return rt::ktreeJoinPaths(size, treeRoot);
                                })));
  families.back().level = depth;
  families.push_back(makeFamily(ChannelRole::Broadcast,
                                (rt::ktreeRoot(trees[0].n, !pipeline) == 0
                                     ? "broadcast_"
                                     : "broadcast_mid_") +
                                    axisName + suffix,
                                axis,
                                gather([](int64_t size, int64_t treeRoot,
                                          const std::vector<rt::KTreeLevel> &) {
                                  return rt::broadcastPaths(size, treeRoot);
                                })));
  return families;
}

std::vector<ChannelFamily> plans::allreduceFamilies(const AllreduceUse &use,
                                                    GridAttr grid,
                                                    bool interleave) {
  std::vector<ChannelFamily> families =
      familiesAlong(use, use.alongX, grid, interleave);
  if (!use.crossMessages.empty()) {
    std::vector<ChannelFamily> cross =
        familiesAlong(use, !use.alongX, grid, interleave);
    families.insert(families.end(), cross.begin(), cross.end());
  }
  return families;
}

void plans::addAllreduceScratch(const AllreduceUse &use, GridAttr grid,
                                std::vector<ScratchBuffer> &scratch) {
  bool ring = use.allreduce.getAlgorithm() == AllreduceAlgorithm::ring;
  for (auto [i, elements] : llvm::enumerate(use.messageElements)) {
    unsigned message = unsigned(i);
    int64_t reduced = use.extent(message, grid);
    bool tree =
        !ring && !rt::ktreeLevels(reduced, use.allreduce.getTreeK()).empty();
    if (ring && reduced > 1) {
      scratch.push_back({BufferRole::Passing, message, elements});
      scratch.push_back({BufferRole::Arriving, message, elements});
    } else if (tree) {
      scratch.push_back({BufferRole::Partial, message, elements});
    }
  }
}

//===----------------------------------------------------------------------===//
// mesh.gemv: the local GEMV, then the allreduce of the partial sums
//===----------------------------------------------------------------------===//

std::optional<AllreduceUse> GemvOp::getAllreduceUse(GridAttr grid) {
  return AllreduceUse{reducesAlongX(),
                      getAllreduce(),
                      getOperation()->hasAttr("relayed"),
                      {localElements(getResult(), grid)}};
}

std::vector<ChannelFamily> GemvOp::getChannelFamilies(GridAttr grid,
                                                      bool interleave) {
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

int64_t GemvOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                               bool interleave) {
  return fromCommonStart(*this, grid, timing, interleave);
}

/// `before` cycles on every core, the allreduce of `use`'s first message
/// along each grid line, its chains starting from when each core's value
/// is in, then `after` cycles on every core. A K-tree's or the pipeline's (not
/// relayed) is simulated with the ring ops around it (it joins the clock's
/// run, or starts one): the cores done early with one op send their first
/// messages into the ramps the others' last ones need.
static void advanceAllreduce(cost::CoreClock &clock, const AllreduceUse &use,
                             GridAttr grid, const rt::TimingModel &timing,
                             bool interleave, rt::DType dtype, int64_t before,
                             int64_t after) {
  auto line = [&](std::vector<int64_t> &times) {
    allreduceCycles(use, 0, grid, timing, interleave, dtype, &times);
  };
  if (std::optional<cost::LineAllreduce> allreduce =
          lineAllreduce(use, grid, timing, interleave, dtype, before, after)) {
    cost::advanceLineAllreduce(timing, std::move(*allreduce), line, clock);
    return;
  }
  clock.local(before);
  clock.lines(use.alongX, line);
  clock.local(after);
}

void GemvOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                          const rt::TimingModel &timing, bool interleave) {
  // Zero the sums, the local GEMV, the allreduce.
  rt::DType dtype = dtypeOf(getResult());
  int64_t kt = localElements(getLhs(), grid),
          nt = localElements(getResult(), grid);
  advanceAllreduce(
      clock, *getAllreduceUse(grid), grid, timing, interleave, dtype,
      timing.kernelCycles(nt, dtype) + timing.kernelCycles(kt * nt, dtype), 0);
}

std::vector<ScratchBuffer> GemvOp::getScratchBuffers(GridAttr grid) {
  std::vector<ScratchBuffer> scratch;
  addAllreduceScratch(*getAllreduceUse(grid), grid, scratch);
  return scratch;
}

//===----------------------------------------------------------------------===//
// mesh.rms_norm: local sums of squares, their allreduce, the scaling
//===----------------------------------------------------------------------===//

std::optional<AllreduceUse> RmsNormOp::getAllreduceUse(GridAttr grid) {
  // One sum of squares per local row.
  bool alongX = reducesAlongX();
  int64_t perRow = shapeOf(getWeight())[0];
  int64_t extent = alongX ? grid.getWidth() : grid.getHeight();
  return AllreduceUse{
      alongX,
      getAllreduce(),
      getOperation()->hasAttr("relayed"),
      {localElements(getInput(), grid) / ceilDiv(perRow, extent)}};
}

std::vector<ChannelFamily> RmsNormOp::getChannelFamilies(GridAttr grid,
                                                         bool interleave) {
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

int64_t RmsNormOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                                  bool interleave) {
  return fromCommonStart(*this, grid, timing, interleave);
}

void RmsNormOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                             const rt::TimingModel &timing, bool interleave) {
  // Local sums of squares, their allreduce, the scaling.
  rt::DType dtype = dtypeOf(getResult());
  int64_t cols = localElements(getWeight(), grid);
  int64_t rowCount = localElements(getInput(), grid) / cols;
  advanceAllreduce(
      clock, *getAllreduceUse(grid), grid, timing, interleave, dtype,
      cost::rowCycles(timing, rt::Opcode::Reduce, rowCount, cols, 0, 1, dtype),
      cost::rowCycles(timing, rt::Opcode::RmsScale, rowCount, cols,
                      shapeOf(getWeight())[0], 1, dtype));
}

std::vector<ScratchBuffer> RmsNormOp::getScratchBuffers(GridAttr grid) {
  AllreduceUse use = *getAllreduceUse(grid);
  std::vector<ScratchBuffer> scratch{
      {BufferRole::SumOfSquares, 0, use.messageElements[0]}};
  addAllreduceScratch(use, grid, scratch);
  return scratch;
}
