//===- Relayout.cpp - Re-blocking a dimension by a ring shift -------------===//
//
// mesh.relayout passes every tile once around the ring of its axis, each
// core keeping the rows of its new block. Lowered by
// passes/conversion/LowerRelayout.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

std::vector<ChannelFamily> RelayoutOp::getChannelFamilies(GridAttr grid,
                                                          bool interleave) {
  return {ringFamily(ChannelRole::Ring, alongX() ? rt::Axis::X : rt::Axis::Y,
                     grid, interleave)};
}

std::vector<ScratchBuffer> RelayoutOp::getScratchBuffers(GridAttr grid) {
  // The tile passing around the ring, and the one arriving.
  if ((alongX() ? grid.getWidth() : grid.getHeight()) == 1)
    return {};
  int64_t tile = localElements(getSource(), grid);
  return {{BufferRole::Passing, 0, tile}, {BufferRole::Arriving, 0, tile}};
}
