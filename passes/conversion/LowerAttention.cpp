//===- LowerAttention.cpp - Prefill and decode attention --------------------===//
//
// mesh.attention (plan: dialects/mesh/algorithms/Attention.cpp); decode
// combines its rows with the allreduce of LowerAllreduce.cpp.
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"
#include "wafer/Support/KvCache.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

FailureOr<ProgramLowering::AttentionBuffers>
ProgramLowering::attentionBuffers(mesh::AttentionOp op) {
  auto r = resourcesFor(
      op, "attn", {op.getQuery(), op.getKey(), op.getValue(), op.getResult()});
  if (failed(r))
    return failure();
  AttentionBuffers a;
  a.channels = std::move(r->channels);
  a.q = r->buffers[0], a.k = r->buffers[1], a.v = r->buffers[2],
  a.out = r->buffers[3];
  a.scratch = std::move(r->scratch);
  return a;
}

/// Prefill's ring of keys and values: both go into the travelling buffer,
/// the output and the softmax statistics start at zero, and `step(offset)`
/// runs H times, the keys and values of ring position `offset` at hand,
/// with a shift along y between steps.
void ProgramLowering::shiftKeysAndValues(
    Location loc, const AttentionBuffers &a, int64_t tile,
    llvm::function_ref<void(const std::string &)> step) {
  FlatSymbolRefAttr kv = a.scratch.get(BufferRole::KeysValues);
  SmallVector<FlatSymbolRefAttr> keysThenValues{a.k, a.v};
  for (auto [slot, source] : llvm::enumerate(keysThenValues))
    instructions.create<core::CopyOp>(
        loc, kv, builder.getStringAttr(std::to_string(slot)), source,
        builder.getStringAttr("0"), i64(tile));
  instructions.create<core::ZeroOp>(loc, a.out);
  instructions.create<core::ZeroOp>(loc, a.scratch.get(BufferRole::MaxAndSum));
  if (h > 1) {
    RingShift shift{kv,
                    a.scratch.get(BufferRole::KeysValuesNext),
                    a.channels.get(ChannelRole::Ring, 0, rt::Axis::Y),
                    h,
                    1,
                    2 * tile,
                    ""};
    repeat(loc, std::to_string(h - 1), [&] {
      step("ly + i");
      startShift(loc, shift);
      finishShift(loc, shift);
    });
  }
  step("ly + " + std::to_string(h - 1));
}

LogicalResult ProgramLowering::lowerPrefillAttention(mesh::AttentionOp op) {
  Location loc = op.getLoc();
  FailureOr<AttentionBuffers> buffers = attentionBuffers(op);
  if (failed(buffers))
    return failure();
  const AttentionBuffers &a = *buffers;
  ArrayRef<int64_t> keyShape = op.getKey().getType().getShape();
  int64_t dim = keyShape[2], perRow = ceilDiv(keyShape[0], h);
  int64_t tile = localElements(op.getKey(), grid);
  int64_t kvHeads = tile / (perRow * dim);
  int64_t group = op.getQuery().getType().getShape()[2] / dim;
  FlatSymbolRefAttr kv = a.scratch.get(BufferRole::KeysValues),
                    ml = a.scratch.get(BufferRole::MaxAndSum);
  // Step s scores the queries against the keys of ring position ly + s.
  shiftKeysAndValues(loc, a, tile, [&](const std::string &offset) {
    auto kernel = rows(loc, core::RowKernel::flash_step, {a.out, ml, a.q, kv},
                       perRow, dim, kvHeads, group);
    kernel.setScalar(op.getScale());
    kernel.setValid(llvm::formatv("({0}) % H * {1}", offset, perRow).str());
    kernel.setPosition(llvm::formatv("ly * {0}", perRow).str());
  });
  rows(loc, core::RowKernel::div_rows, {a.out, ml}, perRow * kvHeads * group,
       dim);
  instructions.create<core::MarkOp>(loc,
                                    recordOp(op, "attention", "shift"));
  return success();
}

/// The index of a core's first lane within its lane segment (whose scores
/// it keeps), or within all lanes; lane blocks are numbered by logical x
/// position.
std::string ProgramLowering::firstLaneExpr(mesh::AttentionOp op,
                                           int64_t lanes) {
  std::optional<AxisSegments> segments = op.getLaneSegments(grid);
  mesh::LayoutAttr layout = mesh::getLayout(op.getQuery().getType());
  if (!layout.isBalanced(1)) {
    if (segments)
      return llvm::formatv("(lx % {0}) * {1}", segments->columns, lanes).str();
    return llvm::formatv("lx * {0}", lanes).str();
  }
  // Balanced in parts (each a segment, when there are segments): block b
  // of a part's c starts at b * q + min(b, r) for its n = q * c + r lanes
  // (rt::blockStart).
  int64_t parts = layout.getPartCount(1), columns = w / parts;
  int64_t perPart = op.getQuery().getType().getDimSize(1) / parts;
  int64_t q = perPart / columns, r = perPart % columns;
  std::string block = llvm::formatv("(lx % {0})", columns).str();
  std::string within = llvm::formatv("{0} * {1}", block, q).str();
  if (r != 0)
    within +=
        llvm::formatv(" + ({0} < {1}) * {0} + ({0} >= {1}) * {1}", block, r)
            .str();
  if (segments)
    return within;
  return llvm::formatv("lx / {0} * {1} + {2}", columns, perPart, within).str();
}

/// Prefill attention over lanes: keys and values shift around the y ring
/// as above; each step's partial scores over this core's lanes are summed
/// along x (the paper's ReduceAdd of Q x K^T along X), every core of the
/// row runs the online softmax's statistics, and weighs its value lanes.
LogicalResult ProgramLowering::lowerPrefillLaneAttention(mesh::AttentionOp op) {
  Location loc = op.getLoc();
  FailureOr<AttentionBuffers> buffers = attentionBuffers(op);
  if (failed(buffers))
    return failure();
  const AttentionBuffers &a = *buffers;
  int64_t perRow = ceilDiv(op.getKey().getType().getDimSize(0), h);
  int64_t tile = localElements(op.getKey(), grid);
  int64_t lanes = tile / (perRow * 2);
  int64_t group = op.getQuery().getType().getDimSize(2) / 2;
  int64_t lanesPerHead = int64_t(*op.getLanesPerHead());
  int64_t scoreRows = op.scoresPerKey(grid);
  FlatSymbolRefAttr kv = a.scratch.get(BufferRole::KeysValues),
                    ml = a.scratch.get(BufferRole::MaxAndSum),
                    scores = a.scratch.get(BufferRole::Scores);
  std::string firstLane = firstLaneExpr(op, lanes);
  std::string algorithm;
  // Step s scores the queries against the keys of ring position ly + s.
  shiftKeysAndValues(loc, a, tile, [&](const std::string &offset) {
    auto scoring = rows(loc, core::RowKernel::lane_flash_scores,
                        {scores, a.q, kv}, lanes, lanesPerHead, perRow, group);
    scoring.setScalar(op.getScale());
    scoring.setValid(firstLane);
    algorithm = allreduce(loc, op, a.channels, a.scratch, scores, 0,
                          core::ElementwiseKind::add);
    auto stats = rows(loc, core::RowKernel::flash_stats, {scores, ml},
                      scoreRows, 0, perRow);
    stats.setValid(llvm::formatv("({0}) % H * {1}", offset, perRow).str());
    stats.setPosition(llvm::formatv("ly * {0}", perRow).str());
    rows(loc, core::RowKernel::lane_flash_values, {a.out, scores, kv, ml},
         lanes, lanesPerHead, perRow, group)
        .setValid(firstLane);
  });
  rows(loc, core::RowKernel::lane_div_rows, {a.out, ml}, lanes, lanesPerHead,
       perRow, group)
      .setValid(firstLane);
  instructions.create<core::MarkOp>(
      loc, recordOp(op, "attention", "shift-" + algorithm + "-lanes"));
  return success();
}

/// Decode attention over lanes: partial scores of every query head from
/// this core's lanes, summed along x; the softmax along y; the normalised
/// scores weigh this core's value lanes, summed along y.
LogicalResult ProgramLowering::lowerLaneAttention(mesh::AttentionOp op) {
  Location loc = op.getLoc();
  FailureOr<AttentionBuffers> buffers = attentionBuffers(op);
  if (failed(buffers))
    return failure();
  const AttentionBuffers &a = *buffers;
  int64_t perRow = ceilDiv(op.getKey().getType().getDimSize(2), h);
  int64_t lanes = localElements(op.getKey(), grid) / (perRow * 2);
  int64_t group = op.getQuery().getType().getDimSize(2) / 2;
  int64_t lanesPerHead = int64_t(*op.getLanesPerHead());
  int64_t heads = op.scoresPerKey(grid);
  KvCacheLayout keys =
      getKvCacheLayout(op.getKey().getDefiningOp<mesh::KvAppendOp>());
  FlatSymbolRefAttr scores = a.scratch.get(BufferRole::Scores),
                    max = a.scratch.get(BufferRole::Max),
                    sum = a.scratch.get(BufferRole::Sum);
  std::string firstLane = firstLaneExpr(op, lanes);
  auto scoring = rows(loc, core::RowKernel::lane_scores, {scores, a.q, a.k},
                      lanes, lanesPerHead, perRow, group);
  scoring.setScalar(op.getScale());
  scoring.setValid(keys.countAfterExpr());
  scoring.setPosition(firstLane);
  allreduce(loc, op, a.channels, a.scratch, scores, 0,
            core::ElementwiseKind::add);
  rows(loc, core::RowKernel::reduce_max, {max, scores}, heads, perRow);
  std::string algorithm = allreduce(loc, op, a.channels, a.scratch, max, 1,
                                    core::ElementwiseKind::max);
  rows(loc, core::RowKernel::softmax_exp, {scores, max}, heads, perRow);
  rows(loc, core::RowKernel::reduce_sum, {sum, scores}, heads, perRow);
  allreduce(loc, op, a.channels, a.scratch, sum, 2, core::ElementwiseKind::add);
  rows(loc, core::RowKernel::div_rows, {scores, sum}, heads, perRow);
  rows(loc, core::RowKernel::lane_values, {a.out, scores, a.v}, lanes,
       lanesPerHead, perRow, group)
      .setValid(firstLane);
  allreduce(loc, op, a.channels, a.scratch, a.out, 3,
            core::ElementwiseKind::add);
  instructions.create<core::MarkOp>(
      loc, recordOp(op, "attention", algorithm + "-lanes"));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::AttentionOp op) {
  if (!op.isDecode())
    return op.getLanesPerHead() ? lowerPrefillLaneAttention(op)
                                : lowerPrefillAttention(op);
  if (op.getLanesPerHead())
    return lowerLaneAttention(op);
  Location loc = op.getLoc();
  FailureOr<AttentionBuffers> buffers = attentionBuffers(op);
  if (failed(buffers))
    return failure();
  const AttentionBuffers &a = *buffers;
  ArrayRef<int64_t> cache = op.getKey().getType().getShape();
  int64_t dim = cache[3], perRow = ceilDiv(cache[2], h);
  // The verifier guarantees the caches come from mesh.kv_append.
  KvCacheLayout keys =
      getKvCacheLayout(op.getKey().getDefiningOp<mesh::KvAppendOp>());
  int64_t kvHeads = localElements(op.getKey(), grid) / (perRow * dim);
  int64_t group = op.getQuery().getType().getShape()[2] / dim;
  int64_t queries = kvHeads * group;
  FlatSymbolRefAttr scores = a.scratch.get(BufferRole::Scores),
                    max = a.scratch.get(BufferRole::Max),
                    sum = a.scratch.get(BufferRole::Sum);
  // The keys this row of cores holds fill its first slots.
  std::string valid = keys.countAfterExpr();
  auto scoring = rows(loc, core::RowKernel::attn_scores, {scores, a.q, a.k},
                      kvHeads, dim, perRow, group);
  scoring.setScalar(op.getScale());
  scoring.setValid(valid);
  rows(loc, core::RowKernel::reduce_max, {max, scores}, queries, perRow);
  std::string algorithm = allreduce(loc, op, a.channels, a.scratch, max, 0,
                                    core::ElementwiseKind::max);
  rows(loc, core::RowKernel::softmax_exp, {scores, max}, queries, perRow);
  rows(loc, core::RowKernel::reduce_sum, {sum, scores}, queries, perRow);
  allreduce(loc, op, a.channels, a.scratch, sum, 1, core::ElementwiseKind::add);
  instructions.create<core::ZeroOp>(loc, a.out);
  rows(loc, core::RowKernel::attn_values, {a.out, scores, a.v}, kvHeads, dim,
       perRow, group);
  allreduce(loc, op, a.channels, a.scratch, a.out, 2, core::ElementwiseKind::add);
  rows(loc, core::RowKernel::div_rows, {a.out, sum}, queries, dim);
  instructions.create<core::MarkOp>(loc,
                                    recordOp(op, "attention", algorithm));
  return success();
}

} // namespace wafer::lowering
