//===- Attention.cpp - Prefill and decode attention plans -----------------===//
//
// Prefill attention shifts keys and values around the y ring (paper
// section 4.2); decode attention combines its rows' softmax statistics and
// values with the allreduce of Allreduce.cpp. Lowered by
// passes/conversion/LowerAttention.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

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
    return {ringFamily(ChannelRole::Ring, rt::Axis::Y, grid, interleave)};
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

std::vector<ScratchBuffer> AttentionOp::getScratchBuffers(GridAttr grid) {
  std::vector<ScratchBuffer> scratch;
  if (!isDecode()) {
    // Keys and values travel together; the running max and sum per query.
    int64_t kv = 2 * localElements(getKey(), grid);
    scratch.push_back({BufferRole::KeysValues, 0, kv});
    if (grid.getHeight() > 1)
      scratch.push_back({BufferRole::KeysValuesNext, 0, kv});
    int64_t dim = shapeOf(getKey())[2];
    scratch.push_back(
        {BufferRole::MaxAndSum, 0, 2 * localElements(getQuery(), grid) / dim});
    return scratch;
  }
  AllreduceUse use = *getAllreduceUse(grid);
  int64_t heads = use.messageElements[0];
  scratch.push_back(
      {BufferRole::Scores, 0,
       heads * ceilDiv(shapeOf(getKey())[2], grid.getHeight())});
  scratch.push_back({BufferRole::Max, 0, heads});
  scratch.push_back({BufferRole::Sum, 0, heads});
  addAllreduceScratch(use, grid, scratch);
  return scratch;
}
