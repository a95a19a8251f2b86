//===- LowerGemm.cpp - MeshGEMM, Cannon, SUMMA and allgather -------------===//
//
// mesh.gemm's algorithms as core programs (plans, tiling and working
// buffers: dialects/mesh/algorithms/Gemm.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

FailureOr<ProgramLowering::GemmPlan>
ProgramLowering::planGemm(mesh::GemmOp op) {
  auto r = resourcesFor(op, "gemm", {op.getLhs(), op.getRhs(), op.getResult()});
  if (failed(r))
    return failure();
  GemmPlan plan;
  plan.channels = std::move(r->channels);
  plan.a = r->buffers[0], plan.b = r->buffers[1], plan.c = r->buffers[2];
  plan.tiling = op.getTiling(grid);
  plan.scratch = std::move(r->scratch);
  // Algorithms that shift an operand in place work on a copy of an operand
  // other ops read too.
  for (auto [role, buffer] : {std::pair(BufferRole::OwnA, &plan.a),
                              std::pair(BufferRole::OwnB, &plan.b)})
    if (FlatSymbolRefAttr own = plan.scratch.get(role)) {
      instructions.create<core::CopyOp>(
          op.getLoc(), own, builder.getStringAttr("0"), *buffer,
          builder.getStringAttr("0"), i64(localSize(own)));
      *buffer = own;
    }
  return plan;
}

LogicalResult ProgramLowering::lower(mesh::GemmOp op) {
  if (op.getAlgorithm() == mesh::GemmAlgorithm::summa)
    return lowerSumma(op);
  if (op.getAlgorithm() == mesh::GemmAlgorithm::allgather)
    return lowerAllgather(op);
  Location loc = op.getLoc();
  FailureOr<GemmPlan> plan = planGemm(op);
  if (failed(plan))
    return failure();
  const GemmPlan &g = *plan;
  const cost::GemmTiling &t = g.tiling;
  int64_t ring = t.blocks, mt = t.mt, kt = t.kt, nt = t.nt;
  RingShift shiftA{g.a, g.scratch.get(BufferRole::NextA),
                   g.channels.get(ChannelRole::ShiftA), w, t.aSlots, mt * kt,
                   "lx == " + std::to_string(w - 1)};
  RingShift shiftB{g.b, g.scratch.get(BufferRole::NextB),
                   g.channels.get(ChannelRole::ShiftB), h, t.bSlots, kt * nt,
                   "ly == " + std::to_string(h - 1)};
  bool shiftsA = w > 1 || shiftA.slots > 1, shiftsB = h > 1 || shiftB.slots > 1;
  instructions.create<core::ZeroOp>(loc, g.c);
  // Alignment: row r shifts A by r, column c shifts B by c. A moves on
  // the x ring and B on the y ring, so the first min(r, c) shifts of
  // both overlap; the rest of the longer one follows alone.
  const char *both = "(lx < ly) * lx + (ly <= lx) * ly";
  if (shiftsA && shiftsB)
    repeat(loc, both, [&] {
      startShift(loc, shiftA);
      startShift(loc, shiftB);
      finishShift(loc, shiftA);
      finishShift(loc, shiftB);
    });
  if (shiftsA)
    repeat(loc, shiftsB ? std::string("ly - (") + both + ")" : "ly", [&] {
      startShift(loc, shiftA);
      finishShift(loc, shiftA);
    });
  if (shiftsB)
    repeat(loc, shiftsA ? std::string("lx - (") + both + ")" : "lx", [&] {
      startShift(loc, shiftB);
      finishShift(loc, shiftB);
    });
  auto multiply = [&] {
    instructions.create<core::GemmTileOp>(loc, g.c, g.a, g.b, i64(mt), i64(kt),
                                          i64(nt));
  };
  // Compute-shift: the sends overlap with the local multiply.
  if (ring > 1)
    repeat(loc, std::to_string(ring - 1), [&] {
      startShift(loc, shiftA);
      startShift(loc, shiftB);
      multiply();
      finishShift(loc, shiftA);
      finishShift(loc, shiftB);
    });
  multiply();
  instructions.create<core::MarkOp>(
      loc,
      recordOp(op, "gemm", mesh::stringifyGemmAlgorithm(op.getAlgorithm())));
  return success();
}

/// GEMM via allgather: every core collects its row panel of A (the
/// blocks of all W ring positions) and column panel of B by ring shifts,
/// copying each arrival into its panel, then multiplies the blocks pair
/// by pair. Block b of A sits in chunk b % W, slot b / W of the panel
/// (the blocks ring position b % W holds), B's in chunk b % H.
LogicalResult ProgramLowering::lowerAllgather(mesh::GemmOp op) {
  Location loc = op.getLoc();
  FailureOr<GemmPlan> plan = planGemm(op);
  if (failed(plan))
    return failure();
  const GemmPlan &g = *plan;
  const cost::GemmTiling &t = g.tiling;
  int64_t ring = t.blocks, mt = t.mt, kt = t.kt, nt = t.nt;
  struct Gather {
    FlatSymbolRefAttr buffer, next, panel, channel;
    std::string pos, extent;
    int64_t steps, chunk;
  };
  Gather gatherA{g.a, g.scratch.get(BufferRole::NextA),
                 g.scratch.get(BufferRole::PanelA),
                 g.channels.get(ChannelRole::ShiftA), "lx", "W", w - 1,
                 t.aSlots * mt * kt};
  Gather gatherB{g.b, g.scratch.get(BufferRole::NextB),
                 g.scratch.get(BufferRole::PanelB),
                 g.channels.get(ChannelRole::ShiftB), "ly", "H", h - 1,
                 t.bSlots * kt * nt};
  auto copy = [&](FlatSymbolRefAttr dst, std::string dstSlot,
                  FlatSymbolRefAttr src, std::string srcSlot, int64_t size) {
    instructions.create<core::CopyOp>(loc, dst, builder.getStringAttr(dstSlot),
                                      src, builder.getStringAttr(srcSlot),
                                      i64(size));
  };
  instructions.create<core::ZeroOp>(loc, g.c);
  for (const Gather &g : {gatherA, gatherB})
    copy(g.panel, g.pos, g.buffer, "0", g.chunk);
  // Shift and keep: after s shifts a core holds the chunk of ring
  // position pos + s. One ring after the other: interleaving their steps
  // would chain each core's A receive to its neighbours' B receives, which
  // on grids of 30 and more with small chunks made the gathers up to twice
  // as slow (and their cost no longer that of two rings).
  for (const Gather &g : {gatherA, gatherB})
    if (g.steps > 0)
      repeat(loc, std::to_string(g.steps), [&] {
        instructions.create<core::SendOp>(loc, g.buffer, g.channel);
        instructions.create<core::RecvOp>(loc, g.next, g.channel);
        instructions.create<core::SwapOp>(loc, g.buffer, g.next);
        copy(g.panel, llvm::formatv("({0} + i + 1) % {1}", g.pos, g.extent),
             g.buffer, "0", g.chunk);
      });
  FlatSymbolRefAttr aBlock = g.scratch.get(BufferRole::BlockA),
                    bBlock = g.scratch.get(BufferRole::BlockB);
  repeat(loc, std::to_string(ring), [&] {
    copy(aBlock, "0", gatherA.panel,
         llvm::formatv("(i % W) * {0} + i / W", t.aSlots), mt * kt);
    copy(bBlock, "0", gatherB.panel,
         llvm::formatv("(i % H) * {0} + i / H", t.bSlots), kt * nt);
    instructions.create<core::GemmTileOp>(loc, g.c, aBlock, bBlock, i64(mt),
                                          i64(kt), i64(nt));
  });
  instructions.create<core::MarkOp>(loc, recordOp(op, "gemm", "allgather"));
  return success();
}

/// SUMMA with the identity placement: in step i (of lcm(H, W)) the cores
/// of column i % W send their A block i along the row and those of row
/// i % H their B block i along the column; every other core receives the
/// block from the owner's side and forwards it one hop further, so each
/// hop pays the relay cycles. On a square grid the owner lends its tile by
/// swapping it into the panel buffer (free) and takes it back after the
/// multiply; otherwise it copies the block's slot into the panel.
LogicalResult ProgramLowering::lowerSumma(mesh::GemmOp op) {
  Location loc = op.getLoc();
  // The owners lend their tiles by swapping them into the panels; one
  // buffer cannot be lent to both.
  if (op.getLhs() == op.getRhs())
    return op.emitError("convert-mesh-to-core: summa of a tensor with "
                        "itself is not supported yet");
  FailureOr<GemmPlan> plan = planGemm(op);
  if (failed(plan))
    return failure();
  const GemmPlan &g = *plan;
  const cost::GemmTiling &t = g.tiling;
  int64_t mt = t.mt, kt = t.kt, nt = t.nt, ring = t.blocks;
  FlatSymbolRefAttr aPanel = g.scratch.get(BufferRole::PanelA),
                    bPanel = g.scratch.get(BufferRole::PanelB);
  // Block i of K (i < lcm(H, W)) is slot i / W of A's column i % W and slot
  // i / H of B's row i % H. With one slot (square grids) the owner lends
  // its whole tile by swapping; with several it copies the slot.
  struct Broadcast {
    FlatSymbolRefAttr tile, panel, forward, backward;
    std::string coord, extent;
    int64_t slots, slotSize;
  };
  Broadcast rowCast{g.a, aPanel, g.channels.get(ChannelRole::ForwardA),
                    g.channels.get(ChannelRole::BackwardA), "x", "W",
                    t.aSlots, mt * kt};
  Broadcast columnCast{g.b, bPanel, g.channels.get(ChannelRole::ForwardB),
                       g.channels.get(ChannelRole::BackwardB), "y", "H",
                       t.bSlots, kt * nt};
  instructions.create<core::ZeroOp>(loc, g.c);
  repeat(loc, std::to_string(ring), [&] {
    for (const Broadcast &cast : {rowCast, columnCast}) {
      std::string owner = "i % " + cast.extent;
      std::string last = cast.coord + " + 1 < " + cast.extent;
      std::string first = cast.coord + " > 0";
      auto sendOn = [&](const std::string &condition,
                        FlatSymbolRefAttr channel) {
        when(loc, condition, [&] {
          instructions.create<core::SendOp>(loc, cast.panel, channel);
        });
      };
      when(loc, cast.coord + " == " + owner, [&] {
        if (cast.slots == 1)
          instructions.create<core::SwapOp>(loc, cast.tile, cast.panel);
        else
          instructions.create<core::CopyOp>(
              loc, cast.panel, builder.getStringAttr("0"), cast.tile,
              builder.getStringAttr("i / " + cast.extent),
              i64(cast.slotSize));
        sendOn(last, cast.forward);
        sendOn(first, cast.backward);
      });
      when(loc, cast.coord + " > " + owner, [&] {
        instructions.create<core::RecvOp>(loc, cast.panel, cast.forward);
        sendOn(last, cast.forward);
      });
      when(loc, cast.coord + " < " + owner, [&] {
        instructions.create<core::RecvOp>(loc, cast.panel, cast.backward);
        sendOn(first, cast.backward);
      });
    }
    instructions.create<core::GemmTileOp>(loc, g.c, aPanel, bPanel, i64(mt),
                                          i64(kt), i64(nt));
    for (const Broadcast &cast : {rowCast, columnCast})
      if (cast.slots == 1)
        when(loc, cast.coord + " == i % " + cast.extent, [&] {
          instructions.create<core::SwapOp>(loc, cast.tile, cast.panel);
        });
  });
  instructions.create<core::MarkOp>(loc, recordOp(op, "gemm", "summa"));
  return success();
}

} // namespace wafer::lowering
