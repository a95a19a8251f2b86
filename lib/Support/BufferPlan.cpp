//===- BufferPlan.cpp - Per-core buffers of mesh ops ----------------------===//
#include "wafer/Support/BufferPlan.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/CheckedMath.h"

#include <numeric>

using namespace mlir;
using namespace wafer;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

std::vector<ScratchBuffer> wafer::scratchBuffers(Operation *op,
                                                 mesh::GridAttr grid) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  std::vector<ScratchBuffer> scratch;
  if (auto gemm = dyn_cast<mesh::GemmOp>(op)) {
    // Tiles as in convert-mesh-to-core's GemmPlan.
    int64_t ring = std::lcm(h, w);
    int64_t mt = ceilDiv(shapeOf(gemm.getLhs())[0], h);
    int64_t kt = localElements(gemm.getLhs(), grid) / (mt * (ring / w)),
            nt = localElements(gemm.getResult(), grid) / mt;
    if (gemm.getAlgorithm() == mesh::GemmAlgorithm::summa) {
      scratch.push_back({"_a_panel", saturatingMul(mt, kt)});
      scratch.push_back({"_b_panel", saturatingMul(kt, nt)});
      return scratch;
    }
    // Operands other ops read too are shifted as copies.
    if (!gemm.getLhs().hasOneUse())
      scratch.push_back({"_a_own", localElements(gemm.getLhs(), grid)});
    if (!gemm.getRhs().hasOneUse())
      scratch.push_back({"_b_own", localElements(gemm.getRhs(), grid)});
    // Ring shifts receive into a second buffer; a ring of one core
    // rotates its slots in place.
    if (gemm.getAlgorithm() == mesh::GemmAlgorithm::allgather) {
      // Whole panels of every block, and one block of each to multiply.
      scratch.push_back({"_a_panel", saturatingMul(ring, saturatingMul(mt, kt))});
      scratch.push_back({"_b_panel", saturatingMul(ring, saturatingMul(kt, nt))});
      scratch.push_back({"_a_block", saturatingMul(mt, kt)});
      scratch.push_back({"_b_block", saturatingMul(kt, nt)});
    }
    if (w > 1)
      scratch.push_back({"_a_next", saturatingMul(ring / w, saturatingMul(mt, kt))});
    if (h > 1)
      scratch.push_back({"_b_next", saturatingMul(ring / h, saturatingMul(kt, nt))});
  } else if (auto attention = dyn_cast<mesh::AttentionOp>(op);
             attention && !attention.isDecode()) {
    // Keys and values travel together; the running sum and max per query.
    int64_t kv = 2 * localElements(attention.getKey(), grid);
    scratch.push_back({"_kv", kv});
    if (h > 1)
      scratch.push_back({"_kv_next", kv});
    int64_t dim = shapeOf(attention.getKey())[2];
    scratch.push_back(
        {"_ml", 2 * localElements(attention.getQuery(), grid) / dim});
  } else if (auto append = dyn_cast<mesh::KvAppendOp>(op)) {
    // One token of every local head, leaving and arriving.
    if (append.getPolicy() == mesh::KvPolicy::shift && h > 1) {
      int64_t token = localElements(append.getNewEntry(), grid);
      scratch.push_back({"_up", token});
      scratch.push_back({"_from_below", token});
    }
  } else if (auto relayout = dyn_cast<mesh::RelayoutOp>(op)) {
    // The tile passing around the ring, and the one arriving.
    int64_t extent = relayout.alongX() ? w : h;
    if (extent > 1) {
      scratch.push_back({"_pass", localElements(relayout.getSource(), grid)});
      scratch.push_back(
          {"_pass_next", localElements(relayout.getSource(), grid)});
    }
  } else if (std::optional<AllreduceUse> use = getAllreduceUse(op, grid)) {
    // Working values of the kernels before the allreduces.
    if (auto norm = dyn_cast<mesh::RmsNormOp>(op))
      scratch.push_back({"_sumsq", use->messageElements[0]});
    if (auto attention = dyn_cast<mesh::AttentionOp>(op)) {
      ArrayRef<int64_t> k = shapeOf(attention.getKey());
      int64_t heads = use->messageElements[0];
      scratch.push_back({"_scores", heads * ceilDiv(k[2], h)});
      scratch.push_back({"_max", heads});
      scratch.push_back({"_sum", heads});
    }
    // What each allreduce receives into, per message size.
    int64_t reduced = use->alongX ? w : h;
    bool ring =
        use->allreduce.getAlgorithm() == mesh::AllreduceAlgorithm::ring;
    bool tree = !ring &&
                !rt::ktreeLevels(reduced, use->allreduce.getTreeK()).empty();
    for (auto [i, elements] : llvm::enumerate(use->messageElements)) {
      std::string index = i ? std::to_string(i) : "";
      if (ring && reduced > 1) {
        scratch.push_back({"_pass" + index, elements});
        scratch.push_back({"_pass_next" + index, elements});
      } else if (tree) {
        scratch.push_back({"_partial" + index, elements});
      }
    }
  }
  return scratch;
}
