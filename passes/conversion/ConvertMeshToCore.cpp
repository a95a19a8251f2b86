//===- ConvertMeshToCore.cpp - Role programs from distributed algorithms --===//
#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Support/BufferPlan.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/LocationName.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

namespace wafer {
#define GEN_PASS_DEF_CONVERTMESHTOCORE
#include "conversion/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The element type of a mesh op's (first) result.
static Type elementOf(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
}


/// Builds one core.program from the mesh ops of @main, in program order.
class ProgramLowering {
public:
  ProgramLowering(ModuleOp module, func::FuncOp main, mesh::GridAttr grid,
                  mesh::TargetAttr target)
      : module(module), main(main), grid(grid), target(target),
        builder(module.getContext()), h(grid.getHeight()),
        w(grid.getWidth()) {}

  LogicalResult run() {
    MLIRContext *context = module.getContext();
    interleave = false;
    main.walk([&](Operation *op) {
      for (Value v : op->getResults())
        if (mesh::LayoutAttr layout = mesh::getLayout(v.getType()))
          interleave |= layout.getInterleave();
    });
    builder.setInsertionPointToEnd(module.getBody());
    program = builder.create<core::ProgramOp>(
        main.getLoc(), grid, target, interleave ? builder.getUnitAttr() : nullptr,
        builder.getArrayAttr({}));
    program.getBody().emplaceBlock();
    builder.setInsertionPointToEnd(&program.getBody().front());
    auto role = builder.create<core::RoleOp>(
        main.getLoc(), "all",
        core::CoreSetAttr::get(context, 0, w - 1, 1, 0, h - 1, 1));
    role.getBody().emplaceBlock();
    // Buffers and channels go before the role, host bindings after it.
    declarations.setInsertionPoint(role);
    instructions.setInsertionPointToStart(&role.getBody().front());
    bindings.setInsertionPointToEnd(&program.getBody().front());

    for (Operation &op : main.getBody().front()) {
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(&op)
              .Case<mesh::DistributeOp>([&](auto op) { return lower(op); })
              .Case<mesh::GemmOp>([&](auto op) { return lower(op); })
              .Case<mesh::GemvOp>([&](auto op) { return lower(op); })
              .Case<mesh::MapOp>([&](auto op) { return lower(op); })
              .Case<func::ReturnOp>([&](auto op) { return lower(op); })
              .Case<mesh::CollectOp, tfm::WeightOp, tfm::ConstantOp>(
                  [&](auto) { return success(); })
              .Default([&](Operation *op) {
                return op->emitError("convert-mesh-to-core: cannot lower '")
                       << op->getName() << "'";
              });
      if (failed(result))
        return failure();
    }
    program.setOpsAttr(builder.getArrayAttr(opsInfo));
    return success();
  }

private:
  //===--------------------------------------------------------------------===//
  // Declarations
  //===--------------------------------------------------------------------===//

  /// A buffer of `elements` values of `elementType` (f32 or f16); offsets
  /// stay 4-byte aligned.
  FailureOr<FlatSymbolRefAttr> newBuffer(Location loc, StringRef name,
                                         int64_t elements, Type elementType) {
    int64_t bytes = bufferBytes(elements, elementType);
    if (nextOffset + bytes > target.getSramBytes())
      return emitError(loc, "convert-mesh-to-core: per-core SRAM exhausted: "
                            "buffer '")
             << name << "' needs " << bytes << " bytes at offset "
             << nextOffset << " but target '" << target.getName() << "' has "
             << target.getSramBytes() << " bytes per core";
    declarations.create<core::BufferOp>(loc, name, elements, elementType,
                                        nextOffset);
    nextOffset += bytes;
    return FlatSymbolRefAttr::get(declarations.getContext(), name);
  }

  /// The buffer holding a distributed value, allocated on first use.
  FailureOr<FlatSymbolRefAttr> bufferFor(Value v) {
    if (FlatSymbolRefAttr existing = buffers.lookup(v))
      return existing;
    auto buffer = newBuffer(
        v.getLoc(), "t" + std::to_string(buffers.size()),
        localElements(v, grid),
        cast<RankedTensorType>(v.getType()).getElementType());
    if (succeeded(buffer))
      buffers[v] = *buffer;
    return buffer;
  }

  /// The working buffers of an op (see BufferPlan.h), by suffix.
  FailureOr<llvm::StringMap<FlatSymbolRefAttr>> scratchFor(Operation *op,
                                                           StringRef tag) {
    llvm::StringMap<FlatSymbolRefAttr> result;
    for (const ScratchBuffer &scratch : scratchBuffers(op, grid)) {
      auto buffer = newBuffer(op->getLoc(), (tag + scratch.suffix).str(),
                              scratch.elements, elementOf(op));
      if (failed(buffer))
        return failure();
      result[scratch.suffix] = *buffer;
    }
    return result;
  }

  FlatSymbolRefAttr channelFor(const ChannelFamily &family,
                               int32_t baseColor) {
    if (FlatSymbolRefAttr existing = channels.lookup(family.name))
      return existing;
    Location loc = program.getLoc();
    OpBuilder::InsertionGuard guard(declarations);
    auto channel = declarations.create<core::ChannelOp>(loc, family.name);
    channel.getBody().emplaceBlock();
    declarations.setInsertionPointToStart(&channel.getBody().front());
    for (const rt::Route &route :
         rt::buildRoutes(family.paths, family.colors, family.axis, h, w,
                         baseColor)) {
      SmallVector<int32_t> outs;
      for (unsigned d = 0; d < 5; ++d)
        if (route.outMask & (1u << d))
          outs.push_back(int32_t(d));
      declarations.create<core::RouteOp>(
          loc, declarations.getI32IntegerAttr(route.color),
          core::CoreSetAttr::get(declarations.getContext(), route.cores),
          core::DirAttr::get(declarations.getContext(),
                             core::Dir(unsigned(route.in))),
          declarations.getDenseI32ArrayAttr(outs));
    }
    auto ref = FlatSymbolRefAttr::get(channel.getSymNameAttr());
    channels[family.name] = ref;
    return ref;
  }

  /// The channels of a communicating op, one per family, using the colors
  /// mesh-allocate-routes recorded.
  FailureOr<SmallVector<FlatSymbolRefAttr>> channelsFor(Operation *op) {
    std::vector<ChannelFamily> families =
        getChannelFamilies(op, grid, interleave);
    auto colors = op->getAttrOfType<DenseI32ArrayAttr>("colors");
    if (!colors || colors.size() != int64_t(families.size()))
      return op->emitError("convert-mesh-to-core: routing colors missing "
                           "(run mesh-allocate-routes first)");
    SmallVector<FlatSymbolRefAttr> result;
    for (auto [family, base] : llvm::zip(families, colors.asArrayRef()))
      result.push_back(channelFor(family, base));
    return result;
  }

  int64_t recordOp(Operation *op, StringRef kind, StringRef algorithm) {
    std::string name = locationName(op->getLoc());
    if (name.empty())
      name = (kind + Twine(opsInfo.size())).str();
    opsInfo.push_back(builder.getStrArrayAttr({name, kind, algorithm}));
    return int64_t(opsInfo.size()) - 1;
  }

  //===--------------------------------------------------------------------===//
  // Instruction helpers
  //===--------------------------------------------------------------------===//

  IntegerAttr i64(int64_t value) { return builder.getI64IntegerAttr(value); }

  core::ElementwiseKindAttr elementwiseKind(core::ElementwiseKind kind) {
    return core::ElementwiseKindAttr::get(module.getContext(), kind);
  }

  template <typename Body>
  void when(Location loc, std::string condition, Body body) {
    auto op = instructions.create<core::WhenOp>(loc, condition);
    op.getBody().emplaceBlock();
    OpBuilder::InsertionGuard guard(instructions);
    instructions.setInsertionPointToStart(&op.getBody().front());
    body();
  }

  template <typename Body>
  void repeat(Location loc, std::string count, Body body) {
    auto op = instructions.create<core::RepeatOp>(loc, count);
    op.getBody().emplaceBlock();
    OpBuilder::InsertionGuard guard(instructions);
    instructions.setInsertionPointToStart(&op.getBody().front());
    body();
  }

  /// One step of a logical ring shift of a block-cyclic buffer (see
  /// mesh.gemm): the send, which overlaps with whatever follows, and the
  /// completion. On a ring of one core the shift is a local slot rotation.
  struct RingShift {
    FlatSymbolRefAttr buffer, next, channel;
    int64_t extent, slots, slotSize;
    std::string lastPosition; // condition of the core receiving the wrap
  };

  void startShift(Location loc, const RingShift &s) {
    if (s.extent > 1)
      instructions.create<core::SendOp>(loc, s.buffer, s.channel);
  }

  void finishShift(Location loc, const RingShift &s) {
    if (s.extent == 1) {
      if (s.slots > 1)
        instructions.create<core::RotateSlotsOp>(loc, s.buffer, i64(s.slotSize));
      return;
    }
    instructions.create<core::RecvOp>(loc, s.next, s.channel);
    if (s.slots > 1)
      when(loc, s.lastPosition, [&] {
        instructions.create<core::RotateSlotsOp>(loc, s.next, i64(s.slotSize));
      });
    instructions.create<core::SwapOp>(loc, s.buffer, s.next);
  }

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  LogicalResult lower(mesh::DistributeOp op) {
    auto buffer = bufferFor(op.getResult());
    if (failed(buffer))
      return failure();
    auto sourceType = cast<RankedTensorType>(op.getSource().getType());
    auto input = bindings.create<core::InputOp>(
        op.getLoc(), *buffer, bindings.getStringAttr(""),
        TypeAttr::get(op.getResult().getType()),
        bindings.getDenseI64ArrayAttr(sourceType.getShape()),
        op.getPermutationAttr(), nullptr, nullptr);
    Value source = op.getSource();
    if (auto arg = dyn_cast<BlockArgument>(source)) {
      auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     "tfm.name");
      input.setName(name ? name.getValue()
                         : StringRef("input" + std::to_string(arg.getArgNumber())));
    } else if (auto weight = source.getDefiningOp<tfm::WeightOp>()) {
      input.setName(weight.getName());
      input.setWeightFileAttr(weight.getSourceAttr());
    } else if (auto constant = source.getDefiningOp<tfm::ConstantOp>()) {
      input.setName("constant");
      input.setValueAttr(cast<ElementsAttr>(constant.getValue()));
    } else {
      return op.emitError("convert-mesh-to-core: cannot place this host value");
    }
    return success();
  }

  LogicalResult lower(mesh::GemmOp op) {
    if (op.getAlgorithm() == mesh::GemmAlgorithm::summa)
      return lowerSumma(op);
    if (op.getAlgorithm() == mesh::GemmAlgorithm::allgather)
      return lowerAllgather(op);
    Location loc = op.getLoc();
    if (!op.getLhs().hasOneUse() || !op.getRhs().hasOneUse())
      return op.emitError("convert-mesh-to-core: MeshGEMM shifts its operands "
                          "in place; an operand with other users is not "
                          "supported yet");
    auto channels = channelsFor(op);
    auto a = bufferFor(op.getLhs()), b = bufferFor(op.getRhs()),
         c = bufferFor(op.getResult());
    if (failed(channels) || failed(a) || failed(b) || failed(c))
      return failure();
    ArrayRef<int64_t> aShape = cast<RankedTensorType>(op.getLhs().getType()).getShape();
    int64_t n = cast<RankedTensorType>(op.getRhs().getType()).getDimSize(1);
    int64_t ring = std::lcm(h, w);
    int64_t mt = ceilDiv(aShape[0], h), kt = ceilDiv(aShape[1], ring),
            nt = ceilDiv(n, w);
    std::string tag = "gemm" + std::to_string(opsInfo.size());
    RingShift shiftA{*a, {}, (*channels)[0], w, ring / w, mt * kt,
                     "lx == " + std::to_string(w - 1)};
    RingShift shiftB{*b, {}, (*channels)[1], h, ring / h, kt * nt,
                     "ly == " + std::to_string(h - 1)};
    auto scratch = scratchFor(op, tag);
    if (failed(scratch))
      return failure();
    shiftA.next = scratch->lookup("_a_next");
    shiftB.next = scratch->lookup("_b_next");
    bool shiftsA = w > 1 || shiftA.slots > 1, shiftsB = h > 1 || shiftB.slots > 1;
    instructions.create<core::ZeroOp>(loc, *c);
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
      instructions.create<core::GemmTileOp>(loc, *c, *a, *b, i64(mt), i64(kt),
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
        loc, recordOp(op, "gemm", mesh::stringifyGemmAlgorithm(op.getAlgorithm())));
    return success();
  }

  /// GEMM via allgather: every core collects its row panel of A (the
  /// blocks of all W ring positions) and column panel of B by ring shifts,
  /// copying each arrival into its panel, then multiplies the blocks pair
  /// by pair. Block b of A sits in chunk b % W, slot b / W of the panel
  /// (the blocks ring position b % W holds), B's in chunk b % H.
  LogicalResult lowerAllgather(mesh::GemmOp op) {
    Location loc = op.getLoc();
    if (!op.getLhs().hasOneUse() || !op.getRhs().hasOneUse())
      return op.emitError("convert-mesh-to-core: the allgather GEMM shifts "
                          "its operands in place; an operand with other "
                          "users is not supported yet");
    auto channels = channelsFor(op);
    auto a = bufferFor(op.getLhs()), b = bufferFor(op.getRhs()),
         c = bufferFor(op.getResult());
    if (failed(channels) || failed(a) || failed(b) || failed(c))
      return failure();
    std::string tag = "gemm" + std::to_string(opsInfo.size());
    auto scratch = scratchFor(op, tag);
    if (failed(scratch))
      return failure();
    ArrayRef<int64_t> aShape =
        cast<RankedTensorType>(op.getLhs().getType()).getShape();
    int64_t n = cast<RankedTensorType>(op.getRhs().getType()).getDimSize(1);
    int64_t ring = std::lcm(h, w);
    int64_t mt = ceilDiv(aShape[0], h), kt = ceilDiv(aShape[1], ring),
            nt = ceilDiv(n, w);
    struct Gather {
      FlatSymbolRefAttr buffer, next, panel, channel;
      std::string pos, extent;
      int64_t steps, chunk;
    };
    Gather gatherA{*a, scratch->lookup("_a_next"), scratch->lookup("_a_panel"),
                   (*channels)[0], "lx", "W", w - 1, (ring / w) * mt * kt};
    Gather gatherB{*b, scratch->lookup("_b_next"), scratch->lookup("_b_panel"),
                   (*channels)[1], "ly", "H", h - 1, (ring / h) * kt * nt};
    auto copy = [&](FlatSymbolRefAttr dst, std::string dstSlot,
                    FlatSymbolRefAttr src, std::string srcSlot, int64_t size) {
      instructions.create<core::CopyOp>(
          loc, dst, builder.getStringAttr(dstSlot), src,
          builder.getStringAttr(srcSlot), i64(size));
    };
    instructions.create<core::ZeroOp>(loc, *c);
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
        repeat(loc, std::to_string(g.steps - common),
               [&] { step(g, common); });
    FlatSymbolRefAttr aBlock = scratch->lookup("_a_block"),
                      bBlock = scratch->lookup("_b_block");
    repeat(loc, std::to_string(ring), [&] {
      copy(aBlock, "0", gatherA.panel,
           llvm::formatv("(i % W) * {0} + i / W", ring / w), mt * kt);
      copy(bBlock, "0", gatherB.panel,
           llvm::formatv("(i % H) * {0} + i / H", ring / h), kt * nt);
      instructions.create<core::GemmTileOp>(loc, *c, aBlock, bBlock, i64(mt),
                                            i64(kt), i64(nt));
    });
    instructions.create<core::MarkOp>(loc, recordOp(op, "gemm", "allgather"));
    return success();
  }

  /// SUMMA on a square grid with the identity placement: in step i the
  /// cores of column i % W send their A tile along the row and those of
  /// row i % H their B tile along the column; every other core receives
  /// the tile from the owner's side and forwards it one hop further, so
  /// each hop pays the relay cycles. The owner lends its tile by swapping
  /// it into the panel buffer (free) and takes it back after the multiply.
  LogicalResult lowerSumma(mesh::GemmOp op) {
    Location loc = op.getLoc();
    auto channels = channelsFor(op);
    auto a = bufferFor(op.getLhs()), b = bufferFor(op.getRhs()),
         c = bufferFor(op.getResult());
    if (failed(channels) || failed(a) || failed(b) || failed(c))
      return failure();
    ArrayRef<int64_t> aShape =
        cast<RankedTensorType>(op.getLhs().getType()).getShape();
    int64_t n = cast<RankedTensorType>(op.getRhs().getType()).getDimSize(1);
    int64_t mt = ceilDiv(aShape[0], h), kt = ceilDiv(aShape[1], w),
            nt = ceilDiv(n, w);
    std::string tag = "gemm" + std::to_string(opsInfo.size());
    auto scratch = scratchFor(op, tag);
    if (failed(scratch))
      return failure();
    FlatSymbolRefAttr aPanel = scratch->lookup("_a_panel"),
                      bPanel = scratch->lookup("_b_panel");
    struct Broadcast {
      FlatSymbolRefAttr tile, panel, forward, backward;
      std::string coord, extent;
    };
    Broadcast rowCast{*a, aPanel, (*channels)[0], (*channels)[1], "x", "W"};
    Broadcast columnCast{*b, bPanel, (*channels)[2], (*channels)[3], "y", "H"};
    instructions.create<core::ZeroOp>(loc, *c);
    repeat(loc, std::to_string(w), [&] {
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
          instructions.create<core::SwapOp>(loc, cast.tile, cast.panel);
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
      instructions.create<core::GemmTileOp>(loc, *c, aPanel, bPanel, i64(mt),
                                            i64(kt), i64(nt));
      for (const Broadcast &cast : {rowCast, columnCast})
        when(loc, cast.coord + " == i % " + cast.extent, [&] {
          instructions.create<core::SwapOp>(loc, cast.tile, cast.panel);
        });
    });
    instructions.create<core::MarkOp>(loc, recordOp(op, "gemm", "summa"));
    return success();
  }

  LogicalResult lower(mesh::GemvOp op) {
    Location loc = op.getLoc();
    auto channels = channelsFor(op);
    auto x = bufferFor(op.getLhs()), m = bufferFor(op.getRhs()),
         y = bufferFor(op.getResult());
    if (failed(channels) || failed(x) || failed(m) || failed(y))
      return failure();
    ArrayRef<int64_t> mShape = cast<RankedTensorType>(op.getRhs().getType()).getShape();
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
        std::string member =
            llvm::formatv("{0} % {1} == 0", pos, level.stride);
        std::string position = llvm::formatv("({0} / {1}) % {2}", pos,
                                             level.stride, level.groupSize);
        // A chain towards the group's first member: receive from the next
        // member, add, pass on to the previous one.
        when(loc,
             llvm::formatv("{0} && {1} + 1 < {2} && {3} + {4} < {5}", member,
                           position, level.groupSize, pos, level.stride,
                           extent),
             [&] {
               instructions.create<core::RecvOp>(loc, partial, channel);
               instructions.create<core::ElementwiseOp>(
                   loc, elementwiseKind(core::ElementwiseKind::add), *y, *y,
                   partial);
             });
        when(loc, llvm::formatv("{0} && {1} > 0", member, position), [&] {
          instructions.create<core::SendOp>(loc, *y, channel);
        });
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
  void relayedTree(Location loc, ArrayRef<rt::KTreeLevel> levels,
                   const std::string &pos, int64_t n, FlatSymbolRefAttr sum,
                   FlatSymbolRefAttr partial, FlatSymbolRefAttr hopIn,
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
      when(loc, llvm::formatv("{0} && {1} > 0", member, position), [&] {
        instructions.create<core::SendOp>(loc, sum, hopIn);
      });
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
      when(loc, llvm::formatv("{0} + 1 < {1}", pos, n), [&] {
        instructions.create<core::SendOp>(loc, sum, hopOut);
      });
    });
  }

  /// Ring allreduce of a ring's partial sums in `sum`: ringSize - 1 steps in
  /// which every core passes the partial it last received (first its own)
  /// to the previous ring position and adds the one arriving from the next.
  void ringAllreduce(Location loc, FlatSymbolRefAttr sum,
                     FlatSymbolRefAttr ring, FlatSymbolRefAttr passing,
                     FlatSymbolRefAttr next, int64_t ringSize) {
    instructions.create<core::ZeroOp>(loc, passing);
    instructions.create<core::ElementwiseOp>(
        loc, elementwiseKind(core::ElementwiseKind::add), passing, passing,
        sum);
    repeat(loc, std::to_string(ringSize - 1), [&] {
      instructions.create<core::SendOp>(loc, passing, ring);
      instructions.create<core::RecvOp>(loc, next, ring);
      instructions.create<core::SwapOp>(loc, passing, next);
      instructions.create<core::ElementwiseOp>(
          loc, elementwiseKind(core::ElementwiseKind::add), sum, sum,
          passing);
    });
  }

  LogicalResult lower(mesh::MapOp op) {
    auto lhs = bufferFor(op.getLhs()), rhs = bufferFor(op.getRhs()),
         out = bufferFor(op.getResult());
    if (failed(lhs) || failed(rhs) || failed(out))
      return failure();
    auto kind = op.getKind() == mesh::MapKind::add ? core::ElementwiseKind::add
                                                   : core::ElementwiseKind::mul;
    instructions.create<core::ElementwiseOp>(
        op.getLoc(), elementwiseKind(kind), *out, *lhs, *rhs);
    instructions.create<core::MarkOp>(
        op.getLoc(),
        recordOp(op, "map", mesh::stringifyMapKind(op.getKind())));
    return success();
  }

  LogicalResult lower(func::ReturnOp op) {
    auto names = main->getAttrOfType<ArrayAttr>("tfm.output_names");
    for (auto [i, value] : llvm::enumerate(op.getOperands())) {
      std::string name = names && i < names.size()
                             ? cast<StringAttr>(names[i]).str()
                             : "output" + std::to_string(i);
      auto collect = value.getDefiningOp<mesh::CollectOp>();
      if (!collect)
        return op.emitError("convert-mesh-to-core: output '")
               << name << "' is not computed on the grid";
      auto buffer = bufferFor(collect.getSource());
      if (failed(buffer))
        return failure();
      bindings.create<core::OutputOp>(op.getLoc(), *buffer,
                                      bindings.getStringAttr(name),
                                      TypeAttr::get(collect.getSource().getType()));
    }
    return success();
  }

  ModuleOp module;
  func::FuncOp main;
  mesh::GridAttr grid;
  mesh::TargetAttr target;
  OpBuilder builder;
  int64_t h, w;
  bool interleave = false;
  core::ProgramOp program;
  OpBuilder declarations{module.getContext()};
  OpBuilder instructions{module.getContext()};
  OpBuilder bindings{module.getContext()};
  DenseMap<Value, FlatSymbolRefAttr> buffers;
  llvm::StringMap<FlatSymbolRefAttr> channels;
  SmallVector<Attribute> opsInfo;
  int64_t nextOffset = 0;
};

struct ConvertMeshToCorePass
    : public wafer::impl::ConvertMeshToCoreBase<ConvertMeshToCorePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!grid || !target || !main) {
      module.emitError("convert-mesh-to-core: needs @main, mesh.grid and "
                       "mesh.target (run convert-tfm-to-mesh first)");
      return signalPassFailure();
    }
    if (failed(ProgramLowering(module, main, grid, target).run()))
      return signalPassFailure();
    // The program replaces the graph.
    main.erase();
    module->removeAttr(mesh::MeshDialect::kGridAttrName);
    module->removeAttr(mesh::MeshDialect::kTargetAttrName);
  }
};

} // namespace
