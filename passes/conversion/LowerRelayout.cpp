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
  rt::kernels::RowArgs regrid = op.getRegridArgs(grid);
  bool alongX = op.alongX();
  std::string pos = alongX ? "lx" : "ly";
  instructions.create<core::ZeroOp>(loc, result);
  visitRingTiles(loc, r->channels, r->scratch, source, alongX,
                 [&](FlatSymbolRefAttr tile, const std::string &from) {
                   auto kernel =
                       rows(loc, core::RowKernel::regrid, {result, tile},
                            regrid.m, regrid.n, regrid.k, regrid.groups);
                   kernel.setValid(from);
                   kernel.setPosition(pos);
                   kernel.setLength(regrid.length);
                   kernel.setParts(regrid.parts);
                 });
  instructions.create<core::MarkOp>(loc, recordOp(op, "relayout", "ring"));
  return success();
}

} // namespace wafer::lowering
