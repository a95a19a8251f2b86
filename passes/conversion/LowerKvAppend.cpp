//===- LowerKvAppend.cpp - KV cache appends ---------------------------------===//
//
// mesh.kv_append under the concat and shift policies (plan:
// dialects/mesh/algorithms/KvAppend.cpp, token placement:
// lib/Support/KvCache.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"
#include "wafer/Support/KvCache.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

LogicalResult ProgramLowering::lower(mesh::KvAppendOp op) {
  Location loc = op.getLoc();
  auto r = resourcesFor(op, "kv", {op.getCache(), op.getNewEntry()});
  if (failed(r))
    return failure();
  FlatSymbolRefAttr cache = r->buffers[0], entry = r->buffers[1];
  // The result is the cache, updated in place.
  buffers[op.getResult()] = cache;
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
      copyHeads(cache, perRow, layout.bottomCountExpr(), entry, 1, "0");
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
    FlatSymbolRefAttr outgoing = r->scratch.get(BufferRole::Outgoing),
                      incoming = r->scratch.get(BufferRole::Incoming);
    FlatSymbolRefAttr north = r->channels.get(ChannelRole::HopIn);
    when(loc, layout.shiftingRowsExpr(), [&] {
      copyHeads(outgoing, 1, "0", cache, perRow, "0");
      instructions.create<core::SendOp>(loc, outgoing, north);
      // Slots 1 .. q move down by one, head by head.
      repeat(loc, llvm::formatv("{0} * ({1})", heads, q).str(), [&] {
        instructions.create<core::CopyOp>(
            loc, cache,
            builder.getStringAttr(llvm::formatv(
                "(i / ({0})) * {1} + i % ({0})", q, perRow)),
            cache,
            builder.getStringAttr(llvm::formatv(
                "(i / ({0})) * {1} + i % ({0}) + 1", q, perRow)),
            i64(dim));
      });
    });
    when(loc, layout.receivingRowsExpr(), [&] {
      instructions.create<core::RecvOp>(loc, incoming, north);
      copyHeads(cache, perRow, q, incoming, 1, "0");
    });
  }
  when(loc, bottom, [&] { copyHeads(cache, perRow, q, entry, 1, "0"); });
  instructions.create<core::MarkOp>(loc, recordOp(op, "kv_append", "shift"));
  return success();
}

} // namespace wafer::lowering
