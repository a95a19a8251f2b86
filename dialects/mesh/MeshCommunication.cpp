//===- MeshCommunication.cpp - CommunicatingOpInterface of the mesh ops ---===//
//
// What each communicating op moves and keeps on a grid: its channel
// families (mesh-allocate-routes colors them, convert-mesh-to-core builds
// channels from them), its working buffers (mesh-check-memory and the
// lowering allocate them) and its allreduce. The sizes here are the
// lowering's: LowerGemm.cpp, LowerGemv.cpp and LowerTransformer.cpp name
// the same buffers.
//
//===----------------------------------------------------------------------===//
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Support/CheckedMath.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;

#include "mesh/MeshInterfaces.cpp.inc"

int64_t wafer::localElements(Value distributed, GridAttr grid) {
  auto type = cast<RankedTensorType>(distributed.getType());
  std::vector<int64_t> shape(type.getShape());
  return rt::localElements(shape, getLayout(type).toRuntime(),
                           grid.getHeight(), grid.getWidth());
}

std::vector<ChannelFamily> wafer::getChannelFamilies(Operation *op,
                                                     GridAttr grid,
                                                     bool interleave) {
  auto communicating = dyn_cast<CommunicatingOpInterface>(op);
  return communicating ? communicating.getChannelFamilies(grid, interleave)
                       : std::vector<ChannelFamily>{};
}

std::vector<ScratchBuffer> wafer::scratchBuffers(Operation *op,
                                                 GridAttr grid) {
  auto communicating = dyn_cast<CommunicatingOpInterface>(op);
  return communicating ? communicating.getScratchBuffers(grid)
                       : std::vector<ScratchBuffer>{};
}

std::optional<AllreduceUse> wafer::getAllreduceUse(Operation *op,
                                                   GridAttr grid) {
  auto communicating = dyn_cast<CommunicatingOpInterface>(op);
  return communicating ? communicating.getAllreduceUse(grid) : std::nullopt;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static ChannelFamily makeFamily(std::string name, rt::Axis axis,
                                std::vector<rt::LinePath> paths) {
  ChannelFamily family{std::move(name), axis, std::move(paths), {}, 0};
  family.colors = rt::colorLinePaths(family.paths, family.numColors);
  return family;
}

/// The ring shift along `axis` (MeshGEMM, prefill attention, relayout).
static ChannelFamily ringFamily(rt::Axis axis, GridAttr grid,
                                bool interleave) {
  bool alongX = axis == rt::Axis::X;
  return makeFamily(alongX ? "ring_x" : "ring_y", axis,
                    rt::ringShiftPaths(alongX ? grid.getWidth()
                                              : grid.getHeight(),
                                       interleave));
}

/// The families of an allreduce along columns (y) or rows (x): one per
/// K-tree level and the broadcast, the ring, or the relayed hops.
static std::vector<ChannelFamily> allreduceFamilies(const AllreduceUse &use,
                                                    GridAttr grid,
                                                    bool interleave) {
  mesh::AllreduceAttr allreduce = use.allreduce;
  rt::Axis axis = use.alongX ? rt::Axis::X : rt::Axis::Y;
  int64_t n = use.alongX ? grid.getWidth() : grid.getHeight();
  std::string axisName = use.alongX ? "x" : "y";
  if (allreduce.getAlgorithm() == AllreduceAlgorithm::ring)
    return {ringFamily(axis, grid, interleave)};
  if (use.relayed)
    // Every message moves one ring position at a time, so all levels
    // share the hops towards position 0 and the broadcast the hops away.
    return {makeFamily("hop_in_" + axisName, axis,
                       rt::neighborPaths(n, false, interleave)),
            makeFamily("hop_out_" + axisName, axis,
                       rt::neighborPaths(n, true, interleave))};
  std::string prefix = allreduce.getAlgorithm() == AllreduceAlgorithm::pipeline
                           ? std::string("pipeline")
                           : "ktree" + std::to_string(allreduce.getK());
  if (use.alongX)
    prefix += "_x";
  std::vector<ChannelFamily> families;
  for (auto [i, level] :
       llvm::enumerate(rt::ktreeLevels(n, allreduce.getTreeK())))
    families.push_back(makeFamily(prefix + "_level" + std::to_string(i), axis,
                                  rt::ktreeLevelPaths(n, level, interleave)));
  families.push_back(makeFamily("broadcast_" + axisName, axis,
                                rt::broadcastPaths(n, interleave)));
  return families;
}

/// What each allreduce receives into, per message size: the ring's pass
/// buffers or the K-tree's partial.
static void addAllreduceScratch(const AllreduceUse &use, GridAttr grid,
                                std::vector<ScratchBuffer> &scratch) {
  int64_t reduced = use.alongX ? grid.getWidth() : grid.getHeight();
  bool ring = use.allreduce.getAlgorithm() == AllreduceAlgorithm::ring;
  bool tree =
      !ring && !rt::ktreeLevels(reduced, use.allreduce.getTreeK()).empty();
  for (auto [i, elements] : llvm::enumerate(use.messageElements)) {
    std::string index = i ? std::to_string(i) : "";
    if (ring && reduced > 1) {
      scratch.push_back({"_pass" + index, elements});
      scratch.push_back({"_pass_next" + index, elements});
    } else if (tree) {
      scratch.push_back({"_partial" + index, elements});
    }
  }
}

//===----------------------------------------------------------------------===//
// mesh.gemm
//===----------------------------------------------------------------------===//

std::vector<ChannelFamily> GemmOp::getChannelFamilies(GridAttr grid,
                                                      bool interleave) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  if (getAlgorithm() == GemmAlgorithm::summa)
    return {makeFamily("east_x", rt::Axis::X, rt::neighborPaths(w, true)),
            makeFamily("west_x", rt::Axis::X, rt::neighborPaths(w, false)),
            makeFamily("south_y", rt::Axis::Y, rt::neighborPaths(h, true)),
            makeFamily("north_y", rt::Axis::Y, rt::neighborPaths(h, false))};
  return {ringFamily(rt::Axis::X, grid, interleave),
          ringFamily(rt::Axis::Y, grid, interleave)};
}

std::vector<ScratchBuffer> GemmOp::getScratchBuffers(GridAttr grid) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  std::vector<ScratchBuffer> scratch;
  // Tiles as in convert-mesh-to-core's GemmPlan.
  int64_t ring = std::lcm(h, w);
  int64_t mt = ceilDiv(shapeOf(getLhs())[0], h);
  int64_t kt = localElements(getLhs(), grid) / (mt * (ring / w)),
          nt = localElements(getResult(), grid) / mt;
  if (getAlgorithm() == GemmAlgorithm::summa) {
    scratch.push_back({"_a_panel", saturatingMul(mt, kt)});
    scratch.push_back({"_b_panel", saturatingMul(kt, nt)});
    return scratch;
  }
  // Operands other ops read too are shifted as copies.
  if (!getLhs().hasOneUse())
    scratch.push_back({"_a_own", localElements(getLhs(), grid)});
  if (!getRhs().hasOneUse())
    scratch.push_back({"_b_own", localElements(getRhs(), grid)});
  // Ring shifts receive into a second buffer; a ring of one core rotates
  // its slots in place.
  if (getAlgorithm() == GemmAlgorithm::allgather) {
    // Whole panels of every block, and one block of each to multiply.
    scratch.push_back({"_a_panel", saturatingMul(ring, saturatingMul(mt, kt))});
    scratch.push_back({"_b_panel", saturatingMul(ring, saturatingMul(kt, nt))});
    scratch.push_back({"_a_block", saturatingMul(mt, kt)});
    scratch.push_back({"_b_block", saturatingMul(kt, nt)});
  }
  if (w > 1)
    scratch.push_back(
        {"_a_next", saturatingMul(ring / w, saturatingMul(mt, kt))});
  if (h > 1)
    scratch.push_back(
        {"_b_next", saturatingMul(ring / h, saturatingMul(kt, nt))});
  return scratch;
}

//===----------------------------------------------------------------------===//
// mesh.gemv and mesh.rms_norm: an allreduce after a local kernel
//===----------------------------------------------------------------------===//

std::optional<AllreduceUse> GemvOp::getAllreduceUse(GridAttr grid) {
  return AllreduceUse{reducesAlongX(), getAllreduce(),
                      getOperation()->hasAttr("relayed"),
                      {localElements(getResult(), grid)}};
}

std::vector<ChannelFamily> GemvOp::getChannelFamilies(GridAttr grid,
                                                      bool interleave) {
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

std::vector<ScratchBuffer> GemvOp::getScratchBuffers(GridAttr grid) {
  std::vector<ScratchBuffer> scratch;
  addAllreduceScratch(*getAllreduceUse(grid), grid, scratch);
  return scratch;
}

std::optional<AllreduceUse> RmsNormOp::getAllreduceUse(GridAttr grid) {
  // One sum of squares per local row.
  bool alongX = reducesAlongX();
  int64_t perRow = shapeOf(getWeight())[0];
  int64_t extent = alongX ? grid.getWidth() : grid.getHeight();
  return AllreduceUse{
      alongX, getAllreduce(), getOperation()->hasAttr("relayed"),
      {localElements(getInput(), grid) / ceilDiv(perRow, extent)}};
}

std::vector<ChannelFamily> RmsNormOp::getChannelFamilies(GridAttr grid,
                                                         bool interleave) {
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

std::vector<ScratchBuffer> RmsNormOp::getScratchBuffers(GridAttr grid) {
  AllreduceUse use = *getAllreduceUse(grid);
  std::vector<ScratchBuffer> scratch{{"_sumsq", use.messageElements[0]}};
  addAllreduceScratch(use, grid, scratch);
  return scratch;
}

//===----------------------------------------------------------------------===//
// mesh.attention: prefill shifts keys and values around the y ring; decode
// combines its rows' softmax statistics and values with allreduces
//===----------------------------------------------------------------------===//

std::optional<AllreduceUse> AttentionOp::getAllreduceUse(GridAttr grid) {
  if (!isDecode())
    return std::nullopt;
  // The softmax's max and sum per query head, then the weighted values.
  int64_t out = localElements(getQuery(), grid);
  int64_t heads = out / shapeOf(getKey())[3];
  return AllreduceUse{false, *getAllreduce(),
                      getOperation()->hasAttr("relayed"),
                      {heads, heads, out}};
}

std::vector<ChannelFamily> AttentionOp::getChannelFamilies(GridAttr grid,
                                                           bool interleave) {
  if (!isDecode())
    return {ringFamily(rt::Axis::Y, grid, interleave)};
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

std::vector<ScratchBuffer> AttentionOp::getScratchBuffers(GridAttr grid) {
  std::vector<ScratchBuffer> scratch;
  if (!isDecode()) {
    // Keys and values travel together; the running sum and max per query.
    int64_t kv = 2 * localElements(getKey(), grid);
    scratch.push_back({"_kv", kv});
    if (grid.getHeight() > 1)
      scratch.push_back({"_kv_next", kv});
    int64_t dim = shapeOf(getKey())[2];
    scratch.push_back({"_ml", 2 * localElements(getQuery(), grid) / dim});
    return scratch;
  }
  AllreduceUse use = *getAllreduceUse(grid);
  int64_t heads = use.messageElements[0];
  scratch.push_back(
      {"_scores", heads * ceilDiv(shapeOf(getKey())[2], grid.getHeight())});
  scratch.push_back({"_max", heads});
  scratch.push_back({"_sum", heads});
  addAllreduceScratch(use, grid, scratch);
  return scratch;
}

//===----------------------------------------------------------------------===//
// mesh.kv_append and mesh.relayout
//===----------------------------------------------------------------------===//

std::vector<ChannelFamily> KvAppendOp::getChannelFamilies(GridAttr grid,
                                                          bool interleave) {
  // The shift passes tokens one row up (towards position 0).
  if (getPolicy() != KvPolicy::shift)
    return {};
  return {makeFamily("hop_in_y", rt::Axis::Y,
                     rt::neighborPaths(grid.getHeight(), false, interleave))};
}

std::vector<ScratchBuffer> KvAppendOp::getScratchBuffers(GridAttr grid) {
  // One token of every local head, leaving and arriving.
  if (getPolicy() != KvPolicy::shift || grid.getHeight() == 1)
    return {};
  int64_t token = localElements(getNewEntry(), grid);
  return {{"_up", token}, {"_from_below", token}};
}

std::vector<ChannelFamily> RelayoutOp::getChannelFamilies(GridAttr grid,
                                                          bool interleave) {
  return {ringFamily(alongX() ? rt::Axis::X : rt::Axis::Y, grid, interleave)};
}

std::vector<ScratchBuffer> RelayoutOp::getScratchBuffers(GridAttr grid) {
  // The tile passing around the ring, and the one arriving.
  if ((alongX() ? grid.getWidth() : grid.getHeight()) == 1)
    return {};
  int64_t tile = localElements(getSource(), grid);
  return {{"_pass", tile}, {"_pass_next", tile}};
}
