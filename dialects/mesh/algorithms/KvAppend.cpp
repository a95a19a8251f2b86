//===- KvAppend.cpp - KV cache append plans (concat, shift) ---------------===//
//
// Concat writes the new token on the bottom row; the shift (paper section
// 4.3) passes tokens one row up to keep the rows balanced. Where tokens
// live is lib/Support/KvCache.cpp's; the lowering is
// passes/conversion/LowerKvAppend.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

std::vector<ChannelFamily> KvAppendOp::getChannelFamilies(GridAttr grid,
                                                          bool interleave) {
  // The shift passes tokens one row up (towards position 0).
  if (getPolicy() != KvPolicy::shift)
    return {};
  return {makeFamily(ChannelRole::HopIn, "hop_in_y", rt::Axis::Y,
                     rt::neighborPaths(grid.getHeight(), false, interleave))};
}

std::vector<ScratchBuffer> KvAppendOp::getScratchBuffers(GridAttr grid) {
  // One token of every local head, leaving and arriving.
  if (getPolicy() != KvPolicy::shift || grid.getHeight() == 1)
    return {};
  int64_t token = localElements(getNewEntry(), grid);
  return {{BufferRole::Outgoing, 0, token}, {BufferRole::Incoming, 0, token}};
}
