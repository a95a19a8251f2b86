//===- LowerRelayout.cpp - Re-blocking by a ring shift ----------------------===//
//
// mesh.relayout (plan: dialects/mesh/algorithms/Relayout.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

LogicalResult ProgramLowering::lower(mesh::RelayoutOp op) {
  Location loc = op.getLoc();
  auto r = resourcesFor(op, "relayout", {op.getSource(), op.getResult()});
  if (failed(r))
    return failure();
  FlatSymbolRefAttr source = r->buffers[0], result = r->buffers[1];
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
  // Balanced blocks (on both sides, one of them perhaps evenly divided:
  // the verifier checks) need the length.
  int64_t length =
      from.isBalanced(d) || to.isBalanced(d) ? type.getDimSize(d) : 0;
  bool alongX = op.alongX();
  int64_t extent = alongX ? w : h;
  std::string pos = alongX ? "lx" : "ly";
  instructions.create<core::ZeroOp>(loc, result);
  visitRingTiles(loc, r->channels, r->scratch, source, alongX,
                 [&](FlatSymbolRefAttr tile, const std::string &from) {
                   auto kernel =
                       rows(loc, core::RowKernel::regrid, {result, tile},
                            rowCount, dstWidth, srcWidth, extent);
                   kernel.setValid(from);
                   kernel.setPosition(pos);
                   kernel.setLength(length);
                 });
  instructions.create<core::MarkOp>(loc, recordOp(op, "relayout", "ring"));
  return success();
}

} // namespace wafer::lowering
