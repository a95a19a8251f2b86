//===- LowerGemv.cpp - Distributed GEMVs as core programs ----------------===//
#include "ProgramLowering.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

LogicalResult ProgramLowering::lower(mesh::GemvOp op) {
  Location loc = op.getLoc();
  auto channels = channelsFor(op);
  auto x = bufferFor(op.getLhs()), m = bufferFor(op.getRhs()),
       y = bufferFor(op.getResult());
  if (failed(channels) || failed(x) || failed(m) || failed(y))
    return failure();
  ArrayRef<int64_t> mShape =
      cast<RankedTensorType>(op.getRhs().getType()).getShape();
  // The reduction runs along columns (ly, H), or along rows for the
  // transposed orientation (lx, W).
  bool alongX = op.reducesAlongX();
  std::string pos = alongX ? "lx" : "ly", extent = alongX ? "W" : "H";
  int64_t reduced = alongX ? w : h;
  int64_t kt = ceilDiv(mShape[0], reduced),
          nt = ceilDiv(mShape[1], alongX ? h : w);
  mesh::AllreduceAttr allreduce = op.getAllreduce();
  std::string tag = "gemv" + std::to_string(opsInfo.size());
  std::string algorithm =
      mesh::stringifyAllreduceAlgorithm(allreduce.getAlgorithm()).str();
  if (allreduce.getAlgorithm() == mesh::AllreduceAlgorithm::ktree)
    algorithm += std::to_string(allreduce.getK());
  auto scratch = scratchFor(op, tag);
  if (failed(scratch))
    return failure();
  instructions.create<core::ZeroOp>(loc, *y);
  instructions.create<core::GemvTileOp>(loc, *y, *x, *m, i64(kt), i64(nt));
  if (allreduce.getAlgorithm() == mesh::AllreduceAlgorithm::ring) {
    if (reduced > 1)
      ringAllreduce(loc, *y, (*channels)[0], scratch->lookup("_pass"),
                    scratch->lookup("_pass_next"), reduced);
    instructions.create<core::MarkOp>(loc, recordOp(op, "gemv", algorithm));
    return success();
  }
  std::vector<rt::KTreeLevel> levels =
      rt::ktreeLevels(reduced, allreduce.getTreeK());
  if (!levels.empty() && op.getRelayed()) {
    relayedTree(loc, levels, pos, reduced, *y, scratch->lookup("_partial"),
                (*channels)[0], (*channels)[1]);
    instructions.create<core::MarkOp>(
        loc, recordOp(op, "gemv", algorithm + "-relayed"));
    return success();
  }
  if (!levels.empty()) {
    FlatSymbolRefAttr partial = scratch->lookup("_partial");
    for (auto [i, level] : llvm::enumerate(levels)) {
      FlatSymbolRefAttr channel = (*channels)[i];
      std::string member = llvm::formatv("{0} % {1} == 0", pos, level.stride);
      std::string position = llvm::formatv("({0} / {1}) % {2}", pos,
                                           level.stride, level.groupSize);
      // A chain towards the group's first member: receive from the next
      // member, add, pass on to the previous one.
      when(loc,
           llvm::formatv("{0} && {1} + 1 < {2} && {3} + {4} < {5}", member,
                         position, level.groupSize, pos, level.stride, extent),
           [&] {
             instructions.create<core::RecvOp>(loc, partial, channel);
             instructions.create<core::ElementwiseOp>(
                 loc, elementwiseKind(core::ElementwiseKind::add), *y, *y,
                 partial);
           });
      when(loc, llvm::formatv("{0} && {1} > 0", member, position),
           [&] { instructions.create<core::SendOp>(loc, *y, channel); });
    }
    FlatSymbolRefAttr broadcast = channels->back();
    when(loc, pos + " == 0",
         [&] { instructions.create<core::SendOp>(loc, *y, broadcast); });
    when(loc, pos + " != 0",
         [&] { instructions.create<core::RecvOp>(loc, *y, broadcast); });
  }
  instructions.create<core::MarkOp>(loc, recordOp(op, "gemv", algorithm));
  return success();
}

/// The K-tree (or pipeline) over `n` ring positions with every message
/// moved one position at a time: a member's send to the member `stride`
/// positions before it is received and forwarded by each core in between
/// (paying the relay cycles of the receive), and so is the broadcast.
void ProgramLowering::relayedTree(Location loc, ArrayRef<rt::KTreeLevel> levels,
                                  const std::string &pos, int64_t n,
                                  FlatSymbolRefAttr sum,
                                  FlatSymbolRefAttr partial,
                                  FlatSymbolRefAttr hopIn,
                                  FlatSymbolRefAttr hopOut) {
  for (const rt::KTreeLevel &level : levels) {
    int64_t s = level.stride, g = level.groupSize;
    std::string member = llvm::formatv("{0} % {1} == 0", pos, s);
    std::string position = llvm::formatv("({0} / {1}) % {2}", pos, s, g);
    when(loc,
         llvm::formatv("{0} && {1} + 1 < {2} && {3} + {4} < {5}", member,
                       position, g, pos, s, n),
         [&] {
           instructions.create<core::RecvOp>(loc, partial, hopIn);
           instructions.create<core::ElementwiseOp>(
               loc, elementwiseKind(core::ElementwiseKind::add), sum, sum,
               partial);
         });
    when(loc, llvm::formatv("{0} && {1} > 0", member, position),
         [&] { instructions.create<core::SendOp>(loc, sum, hopIn); });
    // Cores strictly inside the span of a send: from the member after
    // them, (pos / s + 1) * s, when that member sends (is not a root).
    if (s > 1)
      when(loc,
           llvm::formatv("{0} % {1} != 0 && ({0} / {1} + 1) % {2} != 0 && "
                         "({0} / {1} + 1) * {1} < {3}",
                         pos, s, g, n),
           [&] {
             instructions.create<core::RecvOp>(loc, partial, hopIn);
             instructions.create<core::SendOp>(loc, partial, hopIn);
           });
  }
  when(loc, pos + " == 0",
       [&] { instructions.create<core::SendOp>(loc, sum, hopOut); });
  when(loc, pos + " != 0", [&] {
    instructions.create<core::RecvOp>(loc, sum, hopOut);
    when(loc, llvm::formatv("{0} + 1 < {1}", pos, n),
         [&] { instructions.create<core::SendOp>(loc, sum, hopOut); });
  });
}

/// Ring allreduce of a ring's partial sums in `sum`: ringSize - 1 steps in
/// which every core passes the partial it last received (first its own)
/// to the previous ring position and adds the one arriving from the next.
void ProgramLowering::ringAllreduce(Location loc, FlatSymbolRefAttr sum,
                                    FlatSymbolRefAttr ring,
                                    FlatSymbolRefAttr passing,
                                    FlatSymbolRefAttr next, int64_t ringSize) {
  instructions.create<core::ZeroOp>(loc, passing);
  instructions.create<core::ElementwiseOp>(
      loc, elementwiseKind(core::ElementwiseKind::add), passing, passing, sum);
  repeat(loc, std::to_string(ringSize - 1), [&] {
    instructions.create<core::SendOp>(loc, passing, ring);
    instructions.create<core::RecvOp>(loc, next, ring);
    instructions.create<core::SwapOp>(loc, passing, next);
    instructions.create<core::ElementwiseOp>(
        loc, elementwiseKind(core::ElementwiseKind::add), sum, sum, passing);
  });
}

} // namespace wafer::lowering
