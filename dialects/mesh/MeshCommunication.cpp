//===- MeshCommunication.cpp - CommunicatingOpInterface of the mesh ops ---===//
//
// What each communicating op moves and keeps on a grid: its channel
// families (mesh-allocate-routes colors them, convert-mesh-to-core builds
// channels from them), its working buffers (mesh-check-memory and the
// lowering allocate them) and its allreduce. Each algorithm's answers are
// in its unit under algorithms/; the lowering finds the channels and
// buffers by their roles.
//
//===----------------------------------------------------------------------===//
#include "algorithms/AlgorithmPlans.h"
#include "wafer/Runtime/Layout.h"

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

int64_t AllreduceUse::extentAlong(bool x, GridAttr grid) const {
  if (!x)
    return grid.getHeight();
  return segments ? segments->columns : grid.getWidth();
}

unsigned AllreduceUse::treeDepthAlong(bool x, GridAttr grid) const {
  bool centered = allreduce.getAlgorithm() == AllreduceAlgorithm::ktree;
  auto depth = [&](int64_t n) {
    return unsigned(rt::rootedTreeLevels(n, rt::ktreeRoot(n, centered),
                                         allreduce.getTreeK())
                        .size());
  };
  unsigned deepest = depth(extentAlong(x, grid));
  if (std::optional<AxisSegments> cut = segmentsAlong(x))
    deepest = std::max(deepest, depth(cut->lastColumns));
  return deepest;
}

std::string ScratchBuffer::suffix() const {
  static const char *const names[] = {
      "_a_own",  "_b_own", "_a_next",    "_b_next", "_a_panel",
      "_b_panel", "_a_block", "_b_block", "_pass",  "_pass_next",
      "_partial", "_sumsq", "_up",       "_from_below", "_kv",
      "_kv_next", "_ml",    "_scores",   "_max",    "_sum"};
  static_assert(std::size(names) == size_t(BufferRole::Sum) + 1,
                "one name per BufferRole");
  std::string name = names[size_t(role)];
  return message ? name + std::to_string(message) : name;
}

mlir::Type ScratchBuffer::elementType(mlir::Type opElement) const {
  if (role == BufferRole::MaxAndSum && opElement)
    return mlir::Float32Type::get(opElement.getContext());
  return opElement;
}

ChannelFamily plans::makeFamily(ChannelRole role, std::string name,
                                rt::Axis axis,
                                std::vector<rt::LinePath> paths) {
  ChannelFamily family;
  family.role = role;
  family.name = std::move(name);
  family.axis = axis;
  family.paths = std::move(paths);
  family.colors = rt::colorLinePaths(family.paths, family.numColors);
  return family;
}

ChannelFamily plans::ringFamily(ChannelRole role, rt::Axis axis,
                                GridAttr grid, bool interleave) {
  bool alongX = axis == rt::Axis::X;
  return makeFamily(role, alongX ? "ring_x" : "ring_y", axis,
                    rt::ringShiftPaths(alongX ? grid.getWidth()
                                              : grid.getHeight(),
                                       interleave));
}
