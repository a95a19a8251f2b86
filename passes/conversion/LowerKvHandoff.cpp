//===- LowerKvHandoff.cpp - A prefill's KV into a decode cache ------------===//
//
// mesh.kv_handoff (plan: dialects/mesh/algorithms/KvHandoff.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

#include "wafer/Support/KvCache.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace wafer;
using llvm::formatv;

namespace wafer::lowering {

LogicalResult ProgramLowering::lower(mesh::KvHandoffOp op) {
  Location loc = op.getLoc();
  auto r = resourcesFor(op, "kv_handoff", {op.getSource(), op.getResult()});
  if (failed(r))
    return failure();
  FlatSymbolRefAttr source = r->buffers[0], cache = r->buffers[1];
  KvCacheLayout layout = getKvCacheLayout(op);
  ArrayRef<int64_t> shape = op.getSource().getType().getShape();
  int64_t positions = shape[0], dim = shape[2];
  // A source tile is [tileRows, heads, D], a cache tile [1, heads, C, D].
  int64_t tileRows = ceilDiv(positions, h), heads = ceilDiv(shape[1], w);
  int64_t slots = layout.slotsPerRow;
  // Row ly keeps positions [first, first + count).
  std::string first = layout.firstBeforeExpr(),
              count = layout.countBeforeExpr();
  // Copies row ly's positions out of the tile of ring position `from`.
  auto keep = [&](FlatSymbolRefAttr tile, const std::string &from) {
    for (int64_t j = 0; j < tileRows; ++j) {
      std::string p = formatv("(({0}) * {1} + {2})", from, tileRows, j);
      std::string kept = formatv("{0} < {1} && {0} >= {2} && {0} < {2} + {3}",
                                 p, positions, first, count);
      when(loc, kept, [&] {
        for (int64_t k = 0; k < heads; ++k)
          instructions.create<core::CopyOp>(
              loc, cache,
              builder.getStringAttr(
                  formatv("{0} + {1} - {2}", k * slots, p, first).str()),
              tile, builder.getStringAttr(std::to_string(j * heads + k)),
              i64(dim));
      });
    }
  };
  instructions.create<core::ZeroOp>(loc, cache);
  visitRingTiles(loc, r->channels, r->scratch, source, /*alongX=*/false, keep);
  instructions.create<core::MarkOp>(loc, recordOp(op, "kv_handoff", "ring"));
  return success();
}

} // namespace wafer::lowering
