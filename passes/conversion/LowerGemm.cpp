//===- LowerGemm.cpp - Distributed GEMMs as core programs ----------------===//
#include "ProgramLowering.h"

#include <numeric>

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

FailureOr<ProgramLowering::GemmPlan>
ProgramLowering::planGemm(mesh::GemmOp op) {
  GemmPlan plan;
  auto channels = channelsFor(op);
  auto a = bufferFor(op.getLhs()), b = bufferFor(op.getRhs()),
       c = bufferFor(op.getResult());
  if (failed(channels) || failed(a) || failed(b) || failed(c))
    return failure();
  plan.channels = std::move(*channels);
  plan.a = *a;
  plan.b = *b;
  plan.c = *c;
  // Local tiles: A [K slots][mt][kt], B [K slots][kt][nt], C [mt][nt],
  // the K and N tiles possibly spanning whole heads.
  int64_t m = cast<RankedTensorType>(op.getLhs().getType()).getDimSize(0);
  plan.ring = std::lcm(h, w);
  plan.mt = ceilDiv(m, h);
  plan.kt = localElements(op.getLhs(), grid) / (plan.mt * (plan.ring / w));
  plan.nt = localElements(op.getResult(), grid) / plan.mt;
  plan.tag = "gemm" + std::to_string(opsInfo.size());
  auto scratch = scratchFor(op, plan.tag);
  if (failed(scratch))
    return failure();
  plan.scratch = std::move(*scratch);
  // Algorithms that shift an operand in place work on a copy of an operand
  // other ops read too.
  for (auto [suffix, buffer] : {std::pair("_a_own", &plan.a),
                                std::pair("_b_own", &plan.b)})
    if (FlatSymbolRefAttr own = plan.scratch.lookup(suffix)) {
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
  int64_t ring = g.ring, mt = g.mt, kt = g.kt, nt = g.nt;
  RingShift shiftA{
      g.a,     g.scratch.lookup("_a_next"),     g.channels[0], w, ring / w,
      mt * kt, "lx == " + std::to_string(w - 1)};
  RingShift shiftB{
      g.b,     g.scratch.lookup("_b_next"),     g.channels[1], h, ring / h,
      kt * nt, "ly == " + std::to_string(h - 1)};
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
  int64_t ring = g.ring, mt = g.mt, kt = g.kt, nt = g.nt;
  struct Gather {
    FlatSymbolRefAttr buffer, next, panel, channel;
    std::string pos, extent;
    int64_t steps, chunk;
  };
  Gather gatherA{g.a,
                 g.scratch.lookup("_a_next"),
                 g.scratch.lookup("_a_panel"),
                 g.channels[0],
                 "lx",
                 "W",
                 w - 1,
                 (ring / w) * mt * kt};
  Gather gatherB{g.b,
                 g.scratch.lookup("_b_next"),
                 g.scratch.lookup("_b_panel"),
                 g.channels[1],
                 "ly",
                 "H",
                 h - 1,
                 (ring / h) * kt * nt};
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
  // position pos + s. The A and B rings overlap for their common steps.
  auto step = [&](const Gather &g, int64_t offset) {
    instructions.create<core::SendOp>(loc, g.buffer, g.channel);
    instructions.create<core::RecvOp>(loc, g.next, g.channel);
    instructions.create<core::SwapOp>(loc, g.buffer, g.next);
    copy(g.panel,
         llvm::formatv("({0} + i + {1}) % {2}", g.pos, offset + 1, g.extent),
         g.buffer, "0", g.chunk);
  };
  int64_t common = std::min(gatherA.steps, gatherB.steps);
  if (common > 0)
    repeat(loc, std::to_string(common), [&] {
      step(gatherA, 0);
      step(gatherB, 0);
    });
  for (const Gather &g : {gatherA, gatherB})
    if (g.steps > common)
      repeat(loc, std::to_string(g.steps - common), [&] { step(g, common); });
  FlatSymbolRefAttr aBlock = g.scratch.lookup("_a_block"),
                    bBlock = g.scratch.lookup("_b_block");
  repeat(loc, std::to_string(ring), [&] {
    copy(aBlock, "0", gatherA.panel,
         llvm::formatv("(i % W) * {0} + i / W", ring / w), mt * kt);
    copy(bBlock, "0", gatherB.panel,
         llvm::formatv("(i % H) * {0} + i / H", ring / h), kt * nt);
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
  int64_t mt = g.mt, kt = g.kt, nt = g.nt, ring = g.ring;
  FlatSymbolRefAttr aPanel = g.scratch.lookup("_a_panel"),
                    bPanel = g.scratch.lookup("_b_panel");
  // Block i of K (i < lcm(H, W)) is slot i / W of A's column i % W and slot
  // i / H of B's row i % H. With one slot (square grids) the owner lends
  // its whole tile by swapping; with several it copies the slot.
  struct Broadcast {
    FlatSymbolRefAttr tile, panel, forward, backward;
    std::string coord, extent;
    int64_t slots, slotSize;
  };
  Broadcast rowCast{g.a,           aPanel, g.channels[0], g.channels[1],
                    "x",           "W",    ring / w,      mt * kt};
  Broadcast columnCast{g.b,        bPanel, g.channels[2], g.channels[3],
                       "y",        "H",    ring / h,      kt * nt};
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
