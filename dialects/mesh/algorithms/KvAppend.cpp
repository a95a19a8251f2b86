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

int64_t KvAppendOp::estimateCycles(GridAttr grid, const rt::TimingModel &timing,
                                   bool interleave) {
  // Priced at the step the program was compiled for (t = position).
  rt::DType dtype = dtypeOf(getResult());
  int64_t rows = grid.getHeight(), past = getPosition();
  int64_t dim = shapeOf(getCache())[3];
  int64_t token = localElements(getNewEntry(), grid), heads = token / dim;
  // One slot of every local head.
  int64_t copyToken = heads * timing.kernelCycles(dim, dtype);
  int64_t shifting = past % rows;
  if (getPolicy() == KvPolicy::concat || rows == 1 || shifting == 0)
    return copyToken;
  // The shifting rows pass their oldest token up and close the gap; the
  // rows above each take it; the bottom row then stores the new token.
  int64_t closed = copyToken + timing.sendIssueCycles() +
                   heads * (past / rows) * timing.kernelCycles(dim, dtype);
  int64_t arrival =
      copyToken + cost::messageCycles(timing, token, dtype, interleave ? 2 : 1);
  int64_t received = std::max(shifting > 1 ? closed : 0, arrival) +
                     timing.receiveCycles() + copyToken;
  return std::max(closed + copyToken, received);
}
