//===- LowerRowKernels.cpp - Local row kernels ------------------------------===//
//
// core.rows instructions, and RoPE, which needs nothing but its own rows.
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

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
      builder.getF64FloatAttr(0.0), nullptr, nullptr, i64(0));
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

} // namespace wafer::lowering
