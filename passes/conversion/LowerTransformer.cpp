//===- LowerTransformer.cpp - Norms, RoPE, KV caches, attention ----------===//
//
// The decode plan's non-GEMV ops as core programs: local row kernels and
// the allreduces of mesh.gemv (LowerGemv.cpp) with max or add.
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"
#include "wafer/Support/KvCache.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

core::RowsOp ProgramLowering::rows(Location loc, core::RowKernel kernel,
                                   ArrayRef<FlatSymbolRefAttr> operands,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t groups) {
  SmallVector<Attribute> refs(operands.begin(), operands.end());
  return instructions.create<core::RowsOp>(
      loc, core::RowKernelAttr::get(module.getContext(), kernel),
      builder.getArrayAttr(refs), i64(m), i64(groups), i64(k), i64(n),
      builder.getF64FloatAttr(0.0), nullptr, nullptr);
}

LogicalResult ProgramLowering::lower(mesh::RelayoutOp op) {
  Location loc = op.getLoc();
  auto channels = channelsFor(op);
  auto source = bufferFor(op.getSource()), result = bufferFor(op.getResult());
  if (failed(channels) || failed(source) || failed(result))
    return failure();
  auto scratch = scratchFor(op, "relayout" + std::to_string(opsInfo.size()));
  if (failed(scratch))
    return failure();
  // Rows: the local extent of the dimensions before the re-blocked one;
  // columns: that dimension's block with the (whole) dimensions after it.
  auto type = cast<RankedTensorType>(op.getSource().getType());
  int64_t d = op.getDimension();
  mesh::LayoutAttr from = mesh::getLayout(type),
                   to = mesh::getLayout(op.getResult().getType());
  int64_t rowCount = 1, after = 1;
  for (int64_t i = 0; i < d; ++i)
    rowCount *= ceilDiv(type.getDimSize(i), from.getBlocks()[i]);
  for (int64_t i = d + 1; i < type.getRank(); ++i)
    after *= type.getDimSize(i);
  int64_t srcWidth = ceilDiv(type.getDimSize(d), from.getBlocks()[d]) * after,
          dstWidth = ceilDiv(type.getDimSize(d), to.getBlocks()[d]) * after;
  bool alongX = op.alongX();
  int64_t extent = alongX ? w : h;
  std::string pos = alongX ? "lx" : "ly", ext = alongX ? "W" : "H";
  auto regrid = [&](FlatSymbolRefAttr tile, std::string from) {
    auto kernel = rows(loc, core::RowKernel::regrid, {*result, tile},
                       rowCount, dstWidth, srcWidth, extent);
    kernel.setValid(from);
    kernel.setPosition(pos);
  };
  instructions.create<core::ZeroOp>(loc, *result);
  regrid(*source, pos);
  if (extent > 1) {
    // After s shifts a core holds the tile of ring position pos + s.
    FlatSymbolRefAttr passing = scratch->lookup("_pass"),
                      next = scratch->lookup("_pass_next");
    instructions.create<core::CopyOp>(loc, passing, builder.getStringAttr("0"),
                                      *source, builder.getStringAttr("0"),
                                      i64(localSize(passing)));
    RingShift shift{passing, next, (*channels)[0], extent, 1,
                    localSize(passing), ""};
    repeat(loc, std::to_string(extent - 1), [&] {
      startShift(loc, shift);
      finishShift(loc, shift);
      regrid(passing, llvm::formatv("({0} + i + 1) % {1}", pos, ext));
    });
  }
  instructions.create<core::MarkOp>(loc, recordOp(op, "relayout", "ring"));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::RmsNormOp op) {
  Location loc = op.getLoc();
  auto channels = channelsFor(op);
  auto x = bufferFor(op.getInput()), weight = bufferFor(op.getWeight()),
       out = bufferFor(op.getResult());
  if (failed(channels) || failed(x) || failed(weight) || failed(out))
    return failure();
  auto scratch = scratchFor(op, "norm" + std::to_string(opsInfo.size()));
  if (failed(scratch))
    return failure();
  int64_t length = op.getWeight().getType().getShape()[0];
  int64_t cols = localElements(op.getWeight(), grid);
  int64_t rowCount = localElements(op.getInput(), grid) / cols;
  FlatSymbolRefAttr sumsq = scratch->lookup("_sumsq");
  rows(loc, core::RowKernel::reduce_sumsq, {sumsq, *x}, rowCount, cols);
  std::string algorithm = allreduce(loc, op, *channels, *scratch, sumsq, 0,
                                    core::ElementwiseKind::add);
  rows(loc, core::RowKernel::rms_scale, {*out, *x, sumsq, *weight}, rowCount,
       cols, length)
      .setScalar(op.getEpsilon());
  instructions.create<core::MarkOp>(loc,
                                    recordOp(op, "rms_norm", algorithm));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::RopeOp op) {
  Location loc = op.getLoc();
  auto x = bufferFor(op.getInput()), cos = bufferFor(op.getCos()),
       sin = bufferFor(op.getSin()), out = bufferFor(op.getResult());
  if (failed(x) || failed(cos) || failed(sin) || failed(out))
    return failure();
  // Adjacent pairs: every pair is a row of two with its own factors.
  int64_t dim = op.getInterleaved() ? 2 : op.getHeadDim();
  int64_t rowCount = localElements(op.getCos(), grid) / dim;
  int64_t heads = localElements(op.getInput(), grid) / (rowCount * dim);
  rows(loc, core::RowKernel::rope, {*out, *x, *cos, *sin}, rowCount, dim,
       heads);
  instructions.create<core::MarkOp>(loc, recordOp(op, "rope", "local"));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::KvAppendOp op) {
  Location loc = op.getLoc();
  auto channels = channelsFor(op);
  auto cache = bufferFor(op.getCache()), entry = bufferFor(op.getNewEntry());
  if (failed(channels) || failed(cache) || failed(entry))
    return failure();
  auto scratch = scratchFor(op, "kv" + std::to_string(opsInfo.size()));
  if (failed(scratch))
    return failure();
  // The result is the cache, updated in place.
  buffers[op.getResult()] = *cache;
  KvCacheLayout layout = getKvCacheLayout(op);
  int64_t perRow = layout.slotsPerRow, dim = op.getCache().getType().getDimSize(3);
  int64_t heads = localElements(op.getNewEntry(), grid) / dim;
  // Copies slot `from` of every local head of `src` (slots per head
  // `srcSlots`) to slot `to` of `dst`'s heads.
  auto copyHeads = [&](FlatSymbolRefAttr dst, int64_t dstSlots, std::string to,
                       FlatSymbolRefAttr src, int64_t srcSlots,
                       std::string from) {
    repeat(loc, std::to_string(heads), [&] {
      instructions.create<core::CopyOp>(
          loc, dst,
          builder.getStringAttr(llvm::formatv("i * {0} + {1}", dstSlots, to)),
          src,
          builder.getStringAttr(llvm::formatv("i * {0} + {1}", srcSlots, from)),
          i64(dim));
    });
  };
  // Where tokens go depends on the run-time position t, not on the past the
  // program was compiled for: q = t / H tokens per row, the bottom t % H
  // rows one more.
  std::string q = layout.rowTokensExpr();
  std::string bottom = "ly == " + std::to_string(h - 1);
  if (layout.policy == mesh::KvPolicy::concat) {
    // The bottom row appends after its tokens.
    when(loc, bottom, [&] {
      copyHeads(*cache, perRow, layout.bottomCountExpr(), *entry, 1, "0");
    });
    instructions.create<core::MarkOp>(loc,
                                      recordOp(op, "kv_append", "concat"));
    return success();
  }
  // Shift: the bottom t % H rows (one token more than the rows above) pass
  // their oldest token to the row above and close the gap; the rows from
  // H - t % H - 1 down take what arrives from below (the bottom row: the new
  // token) into slot q.
  if (h > 1) {
    FlatSymbolRefAttr outgoing = scratch->lookup("_up"),
                      incoming = scratch->lookup("_from_below");
    FlatSymbolRefAttr north = (*channels)[0];
    when(loc, layout.shiftingRowsExpr(), [&] {
      copyHeads(outgoing, 1, "0", *cache, perRow, "0");
      instructions.create<core::SendOp>(loc, outgoing, north);
      // Slots 1 .. q move down by one, head by head.
      repeat(loc, llvm::formatv("{0} * ({1})", heads, q).str(), [&] {
        instructions.create<core::CopyOp>(
            loc, *cache,
            builder.getStringAttr(llvm::formatv(
                "(i / ({0})) * {1} + i % ({0})", q, perRow)),
            *cache,
            builder.getStringAttr(llvm::formatv(
                "(i / ({0})) * {1} + i % ({0}) + 1", q, perRow)),
            i64(dim));
      });
    });
    when(loc, layout.receivingRowsExpr(), [&] {
      instructions.create<core::RecvOp>(loc, incoming, north);
      copyHeads(*cache, perRow, q, incoming, 1, "0");
    });
  }
  when(loc, bottom, [&] { copyHeads(*cache, perRow, q, *entry, 1, "0"); });
  instructions.create<core::MarkOp>(loc, recordOp(op, "kv_append", "shift"));
  return success();
}

FailureOr<ProgramLowering::AttentionBuffers>
ProgramLowering::attentionBuffers(mesh::AttentionOp op) {
  AttentionBuffers a;
  auto channels = channelsFor(op);
  auto q = bufferFor(op.getQuery()), k = bufferFor(op.getKey()),
       v = bufferFor(op.getValue()), out = bufferFor(op.getResult());
  if (failed(channels) || failed(q) || failed(k) || failed(v) || failed(out))
    return failure();
  auto scratch = scratchFor(op, "attn" + std::to_string(opsInfo.size()));
  if (failed(scratch))
    return failure();
  a.channels = std::move(*channels);
  a.q = *q, a.k = *k, a.v = *v, a.out = *out;
  a.scratch = std::move(*scratch);
  return a;
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
  FlatSymbolRefAttr kv = a.scratch.lookup("_kv"), ml = a.scratch.lookup("_ml");
  SmallVector<FlatSymbolRefAttr> keysThenValues{a.k, a.v};
  for (auto [slot, source] : llvm::enumerate(keysThenValues))
    instructions.create<core::CopyOp>(
        loc, kv, builder.getStringAttr(std::to_string(slot)), source,
        builder.getStringAttr("0"), i64(tile));
  instructions.create<core::ZeroOp>(loc, a.out);
  instructions.create<core::ZeroOp>(loc, ml);
  // Step s scores the queries against the keys of ring position ly + s.
  auto step = [&](std::string offset) {
    auto kernel = rows(loc, core::RowKernel::flash_step, {a.out, ml, a.q, kv},
                       perRow, dim, kvHeads, group);
    kernel.setScalar(op.getScale());
    kernel.setValid(llvm::formatv("({0}) % H * {1}", offset, perRow).str());
    kernel.setPosition(llvm::formatv("ly * {0}", perRow).str());
  };
  if (h > 1) {
    RingShift shift{kv, a.scratch.lookup("_kv_next"), a.channels[0], h, 1,
                    2 * tile, ""};
    repeat(loc, std::to_string(h - 1), [&] {
      step("ly + i");
      startShift(loc, shift);
      finishShift(loc, shift);
    });
  }
  step("ly + " + std::to_string(h - 1));
  rows(loc, core::RowKernel::div_rows, {a.out, ml}, perRow * kvHeads * group,
       dim);
  instructions.create<core::MarkOp>(loc,
                                    recordOp(op, "attention", "shift"));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::AttentionOp op) {
  if (!op.isDecode())
    return lowerPrefillAttention(op);
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
  FlatSymbolRefAttr scores = a.scratch.lookup("_scores"),
                    max = a.scratch.lookup("_max"),
                    sum = a.scratch.lookup("_sum");
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
