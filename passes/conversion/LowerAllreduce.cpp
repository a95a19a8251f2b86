//===- LowerAllreduce.cpp - K-tree, pipeline and ring allreduce -----------===//
//
// The allreduce of MeshGEMV (paper section 6) and the ops that end with
// one: mesh.gemv and mesh.rms_norm here, decode attention in
// LowerAttention.cpp (plans: dialects/mesh/algorithms/Allreduce.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

LogicalResult ProgramLowering::lower(mesh::GemvOp op) {
  Location loc = op.getLoc();
  auto r = resourcesFor(op, "gemv", {op.getLhs(), op.getRhs(), op.getResult()});
  if (failed(r))
    return failure();
  FlatSymbolRefAttr x = r->buffers[0], m = r->buffers[1], y = r->buffers[2];
  // Local tiles are row-major [K..., N...]: kt x nt.
  int64_t kt = localElements(op.getLhs(), grid),
          nt = localElements(op.getResult(), grid);
  instructions.create<core::ZeroOp>(loc, y);
  instructions.create<core::GemvTileOp>(loc, y, x, m, i64(kt), i64(nt));
  std::string algorithm = allreduce(loc, op, r->channels, r->scratch, y, 0,
                                    core::ElementwiseKind::add);
  instructions.create<core::MarkOp>(loc, recordOp(op, "gemv", algorithm));
  return success();
}

LogicalResult ProgramLowering::lower(mesh::RmsNormOp op) {
  Location loc = op.getLoc();
  auto r = resourcesFor(op, "norm",
                        {op.getInput(), op.getWeight(), op.getResult()});
  if (failed(r))
    return failure();
  FlatSymbolRefAttr x = r->buffers[0], weight = r->buffers[1],
                    out = r->buffers[2];
  int64_t length = op.getWeight().getType().getShape()[0];
  int64_t cols = localElements(op.getWeight(), grid);
  int64_t rowCount = localElements(op.getInput(), grid) / cols;
  FlatSymbolRefAttr sumsq = r->scratch.get(BufferRole::SumOfSquares);
  rows(loc, core::RowKernel::reduce_sumsq, {sumsq, x}, rowCount, cols);
  std::string algorithm = allreduce(loc, op, r->channels, r->scratch, sumsq, 0,
                                    core::ElementwiseKind::add);
  rows(loc, core::RowKernel::rms_scale, {out, x, sumsq, weight}, rowCount,
       cols, length)
      .setScalar(op.getEpsilon());
  instructions.create<core::MarkOp>(loc,
                                    recordOp(op, "rms_norm", algorithm));
  return success();
}

std::string ProgramLowering::allreduce(
    Location loc, Operation *op, const OpChannels &channels,
    const OpScratch &scratch, FlatSymbolRefAttr sum, unsigned message,
    core::ElementwiseKind combine) {
  AllreduceUse use = *getAllreduceUse(op, grid);
  mesh::AllreduceAttr attr = use.allreduce;
  // The reduction runs along columns (y), or along rows (x).
  bool alongX = use.messageAlongX(message);
  rt::Axis axis = alongX ? rt::Axis::X : rt::Axis::Y;
  std::string pos = alongX ? "lx" : "ly";
  int64_t reduced = use.extent(message, grid);
  std::string algorithm =
      mesh::stringifyAllreduceAlgorithm(attr.getAlgorithm()).str();
  if (attr.getAlgorithm() == mesh::AllreduceAlgorithm::ktree)
    algorithm += std::to_string(attr.getK());
  if (attr.getAlgorithm() == mesh::AllreduceAlgorithm::ring) {
    if (reduced > 1)
      ringAllreduce(loc, sum, channels.get(ChannelRole::Ring, 0, axis),
                    scratch.get(BufferRole::Passing, message),
                    scratch.get(BufferRole::Arriving, message), reduced,
                    combine);
    return algorithm;
  }
  if (reduced <= 1)
    return algorithm;
  FlatSymbolRefAttr partial = scratch.get(BufferRole::Partial, message);
  if (use.relayed) {
    relayedTree(loc, rt::ktreeLevels(reduced, attr.getTreeK()), pos, reduced,
                sum, partial, channels.get(ChannelRole::HopIn, 0, axis),
                channels.get(ChannelRole::HopOut, 0, axis), combine);
    return algorithm + "-relayed";
  }
  // Over physical positions (x or y; the sum's order does not matter), in
  // two halves towards the root (rt::ktreeRoot); a segment's tree over
  // its logical positions. Trees share the channel of each level, and the
  // join's comes after the deepest tree's levels.
  unsigned joinLevel = use.treeDepth(message, grid);
  auto emitTree = [&](const std::string &guard, const std::string &coord,
                      int64_t n) {
    if (n <= 1)
      return;
    auto body = [&] {
      treeAllreduce(loc, use, message, coord, n, joinLevel, channels, scratch,
                    sum, combine);
    };
    if (guard.empty())
      body();
    else
      when(loc, guard, body);
  };
  std::optional<AxisSegments> segments = use.segmentsAlong(alongX);
  if (!segments) {
    emitTree("", alongX ? "x" : "y", reduced);
    return algorithm;
  }
  // The whole segments, then a shorter last one; the columns past them
  // hold no lanes.
  int64_t columns = segments->columns;
  int64_t whole =
      segments->lastColumns == columns ? segments->count : segments->count - 1;
  if (whole > 0)
    emitTree(whole * columns < w
                 ? llvm::formatv("lx < {0}", whole * columns).str()
                 : std::string(),
             llvm::formatv("(lx % {0})", columns), columns);
  if (whole < segments->count)
    emitTree(llvm::formatv("lx >= {0} && lx < {1}", whole * columns,
                           segments->used()),
             llvm::formatv("(lx - {0})", whole * columns),
             segments->lastColumns);
  return algorithm;
}

/// The K-tree (or pipeline) of allreduce(): over positions `coord` of
/// `reduced` (physical, or a segment's logical ones), in two halves
/// towards the root, then the join (channel level `joinLevel`) and the
/// root's broadcast.
void ProgramLowering::treeAllreduce(Location loc, const AllreduceUse &use,
                                    unsigned message, const std::string &coord,
                                    int64_t reduced, unsigned joinLevel,
                                    const OpChannels &channels,
                                    const OpScratch &scratch,
                                    FlatSymbolRefAttr sum,
                                    core::ElementwiseKind combine) {
  mesh::AllreduceAttr attr = use.allreduce;
  rt::Axis axis = use.messageAlongX(message) ? rt::Axis::X : rt::Axis::Y;
  FlatSymbolRefAttr partial = scratch.get(BufferRole::Partial, message);
  int64_t root = rt::ktreeRoot(reduced, attr.getAlgorithm() ==
                                            mesh::AllreduceAlgorithm::ktree);
  std::vector<rt::KTreeLevel> levels =
      rt::rootedTreeLevels(reduced, root, attr.getTreeK());
  struct Half {
    std::string guard, q;
    int64_t size;
  };
  Half halves[] = {{llvm::formatv("{0} <= {1}", coord, root),
                    llvm::formatv("({0} - {1})", root, coord), root + 1},
                   {llvm::formatv("{0} > {1}", coord, root),
                    llvm::formatv("({0} - {1})", coord, root + 1),
                    reduced - 1 - root}};
  for (auto [i, level] : llvm::enumerate(levels)) {
    FlatSymbolRefAttr channel = channels.get(ChannelRole::TreeLevel, i, axis);
    for (const Half &half : halves) {
      if (half.size <= level.stride)
        continue;
      std::string member = llvm::formatv("{0} && {1} % {2} == 0", half.guard,
                                         half.q, level.stride);
      std::string position = llvm::formatv("({0} / {1}) % {2}", half.q,
                                           level.stride, level.groupSize);
      std::string hasNext =
          llvm::formatv("{0} + 1 < {1} && {2} + {3} < {4}", position,
                        level.groupSize, half.q, level.stride, half.size);
      std::string isLast =
          llvm::formatv("({0} + 1 >= {1} || {2} + {3} >= {4})", position,
                        level.groupSize, half.q, level.stride, half.size);
      // A chain towards the group's first member: the last member sends,
      // the ones between combine what arrives from the next member into
      // theirs and stream it on to the previous one, and the first
      // combines.
      when(loc,
           llvm::formatv("{0} && {1} == 0 && {2}", member, position, hasNext),
           [&] {
             instructions.create<core::RecvOp>(loc, partial, channel);
             instructions.create<core::ElementwiseOp>(
                 loc, elementwiseKind(combine), sum, sum, partial);
           });
      if (level.groupSize > 2)
        when(loc,
             llvm::formatv("{0} && {1} > 0 && {2}", member, position, hasNext),
             [&] {
               instructions.create<core::CombineRelayOp>(
                   loc, elementwiseKind(combine), sum, partial, channel);
             });
      when(loc,
           llvm::formatv("{0} && {1} > 0 && {2}", member, position, isLast),
           [&] { instructions.create<core::SendOp>(loc, sum, channel); });
    }
  }
  if (root + 1 < reduced) {
    FlatSymbolRefAttr join =
        channels.get(ChannelRole::TreeLevel, joinLevel, axis);
    when(loc, llvm::formatv("{0} == {1}", coord, root + 1),
         [&] { instructions.create<core::SendOp>(loc, sum, join); });
    when(loc, llvm::formatv("{0} == {1}", coord, root), [&] {
      instructions.create<core::RecvOp>(loc, partial, join);
      instructions.create<core::ElementwiseOp>(loc, elementwiseKind(combine),
                                               sum, sum, partial);
    });
  }
  FlatSymbolRefAttr broadcast = channels.get(ChannelRole::Broadcast, 0, axis);
  when(loc, llvm::formatv("{0} == {1}", coord, root),
       [&] { instructions.create<core::SendOp>(loc, sum, broadcast); });
  when(loc, llvm::formatv("{0} != {1}", coord, root),
       [&] { instructions.create<core::RecvOp>(loc, sum, broadcast); });
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
                                  FlatSymbolRefAttr hopOut,
                                  core::ElementwiseKind combine) {
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
               loc, elementwiseKind(combine), sum, sum, partial);
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
                                    FlatSymbolRefAttr next, int64_t ringSize,
                                    core::ElementwiseKind combine) {
  // passing = sum, as a whole-buffer copy.
  instructions.create<core::CopyOp>(loc, passing, builder.getStringAttr("0"),
                                    sum, builder.getStringAttr("0"),
                                    i64(localSize(sum)));
  repeat(loc, std::to_string(ringSize - 1), [&] {
    instructions.create<core::SendOp>(loc, passing, ring);
    instructions.create<core::RecvOp>(loc, next, ring);
    instructions.create<core::SwapOp>(loc, passing, next);
    instructions.create<core::ElementwiseOp>(loc, elementwiseKind(combine),
                                             sum, sum, passing);
  });
}

} // namespace wafer::lowering
