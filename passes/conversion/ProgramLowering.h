//===- ProgramLowering.h - mesh ops to one core.program ---------*- C++ -*-===//
//
// The state convert-mesh-to-core keeps while it lowers the mesh ops of @main
// in program order: buffers, channels, the single role's instructions and
// the host bindings. The GEMM and GEMV algorithms are defined in
// LowerGemm.cpp and LowerGemv.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H
#define WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H

#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/FabricPlacement.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/LocationName.h"
#include "wafer/Support/KvCache.h"
#include "wafer/Support/LocalTile.h"
#include "wafer/Support/MemoryPlan.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace wafer::lowering {

// The MLIR names this header uses (no using-directive in a header).
using mlir::ArrayAttr;
using mlir::ArrayRef;
using mlir::Attribute;
using mlir::BlockArgument;
using mlir::cast;
using mlir::DenseElementsAttr;
using mlir::DenseI32ArrayAttr;
using mlir::DenseMap;
using mlir::dyn_cast;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::FlatSymbolRefAttr;
using mlir::IntegerAttr;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::StringAttr;
using mlir::StringRef;
using mlir::succeeded;
using mlir::success;
using mlir::Twine;
using mlir::Type;
using mlir::TypeAttr;
using mlir::Value;
namespace func = mlir::func;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The element type of a mesh op's (first) result.
inline Type elementOf(Operation *op) {
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
    memory = planMemory(main, grid, target.getValue().sramBytes);
    interleave = false;
    main.walk([&](Operation *op) {
      for (Value v : op->getResults())
        if (mesh::LayoutAttr layout = mesh::getLayout(v.getType()))
          interleave |= layout.getInterleave();
    });
    builder.setInsertionPointToEnd(module.getBody());
    llvm::Expected<rt::FabricPlacement> placement = rt::placeAroundDefects(
        target.getValue(), grid.getHeight(), grid.getWidth());
    if (!placement)
      return module.emitError("convert-mesh-to-core: ")
             << llvm::toString(placement.takeError());
    auto array = [&](const std::vector<int64_t> &v) {
      return v.empty() ? nullptr : builder.getDenseI64ArrayAttr(v);
    };
    program = builder.create<core::ProgramOp>(
        main.getLoc(), grid, target, interleave ? builder.getUnitAttr() : nullptr,
        builder.getArrayAttr({}), nullptr, nullptr, array(placement->rows),
        array(placement->cols));
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
              .Case<mesh::MapOp, mesh::RelayoutOp, mesh::RmsNormOp,
                    mesh::RopeOp,
                    mesh::KvAppendOp, mesh::AttentionOp>(
                  [&](auto op) { return lower(op); })
              .Case<func::ReturnOp>([&](auto op) { return lower(op); })
              .Case<mesh::CollectOp, tfm::WeightOp, tfm::ConstantOp,
                    tfm::ReshapeOp, tfm::EmbedOp, tfm::TransposeOp>(
                  [&](auto) { return success(); })
              .Default([&](Operation *op) {
                return op->emitError("convert-mesh-to-core: cannot lower '")
                       << op->getName() << "'";
              });
      if (failed(result))
        return failure();
    }
    program.setOpsAttr(builder.getArrayAttr(opsInfo));
    if (std::optional<int64_t> capacity = kvCapacityTokens())
      program.setKvCapacityTokens(*capacity);
    main.walk([&](mesh::KvAppendOp append) {
      program.setPositionAttr(builder.getI64IntegerAttr(append.getPosition()));
    });
    return success();
  }

  /// Decode tokens the caches can take after this step: the slots still
  /// empty, then whatever SRAM is left above the program's high-water, one
  /// slot per row at a time: a slot of every cache, and of the largest
  /// attention's scores (its working buffer grows with the slots), filled
  /// on the bottom row only (concat) or on every row (shift).
  std::optional<int64_t> kvCapacityTokens() {
    int64_t perToken = 0, scores = 0;
    std::optional<KvCacheLayout> layout;
    main.walk([&](mesh::KvAppendOp append) {
      perToken += bufferBytes(localElements(append.getNewEntry(), grid),
                              elementOf(append));
      layout = getKvCacheLayout(append);
    });
    main.walk([&](mesh::AttentionOp attention) {
      if (!attention.isDecode())
        return;
      int64_t dim = attention.getKey().getType().getDimSize(3);
      scores = std::max(
          scores,
          bufferBytes(localElements(attention.getQuery(), grid) / dim,
                      elementOf(attention)));
    });
    perToken += scores;
    if (!layout || perToken == 0)
      return std::nullopt;
    int64_t more = (target.getValue().sramBytes - memory.peakBytes) / perToken;
    if (layout->policy == mesh::KvPolicy::concat)
      return layout->slotsPerRow - layout->countAfter(h - 1) + more;
    int64_t spare = 0;
    for (int64_t row = 0; row < h; ++row)
      spare += layout->slotsPerRow - layout->countAfter(row);
    return spare + h * more;
  }

private:
  //===--------------------------------------------------------------------===//
  // Declarations
  //===--------------------------------------------------------------------===//

  /// A buffer of `elements` values of `elementType` (f32 or f16); offsets
  /// stay 4-byte aligned.
  FailureOr<FlatSymbolRefAttr> newBuffer(Location loc, StringRef name,
                                         int64_t elements, Type elementType,
                                         int64_t offset) {
    int64_t bytes = bufferBytes(elements, elementType);
    if (offset + bytes > target.getValue().sramBytes)
      return emitError(loc, "convert-mesh-to-core: per-core SRAM exhausted: "
                            "buffer '")
             << name << "' needs " << bytes << " bytes at offset " << offset
             << " but target '" << target.getName() << "' has "
             << target.getValue().sramBytes << " bytes per core";
    declarations.create<core::BufferOp>(loc, name, elements, elementType,
                                        offset);
    bufferSizes[name] = elements;
    return FlatSymbolRefAttr::get(declarations.getContext(), name);
  }

  /// The buffer holding a distributed value, allocated on first use.
  FailureOr<FlatSymbolRefAttr> bufferFor(Value v) {
    if (FlatSymbolRefAttr existing = buffers.lookup(v))
      return existing;
    auto buffer = newBuffer(
        v.getLoc(), "t" + std::to_string(buffers.size()),
        localElements(v, grid),
        cast<RankedTensorType>(v.getType()).getElementType(),
        memory.valueOffsets.lookup(v));
    if (succeeded(buffer))
      buffers[v] = *buffer;
    return buffer;
  }

  /// The working buffers of an op (CommunicatingOpInterface), by suffix.
  FailureOr<llvm::StringMap<FlatSymbolRefAttr>> scratchFor(Operation *op,
                                                           StringRef tag) {
    llvm::StringMap<FlatSymbolRefAttr> result;
    for (auto [index, scratch] : llvm::enumerate(scratchBuffers(op, grid))) {
      auto buffer = newBuffer(op->getLoc(), (tag + scratch.suffix).str(),
                              scratch.elements, elementOf(op),
                              memory.scratchOffsets.lookup({op, index}));
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

  /// A core.when or core.repeat whose body `body` emits.
  template <typename OpTy, typename Body>
  void nested(Location loc, std::string expression, Body body) {
    auto op = instructions.create<OpTy>(loc, expression);
    op.getBody().emplaceBlock();
    OpBuilder::InsertionGuard guard(instructions);
    instructions.setInsertionPointToStart(&op.getBody().front());
    body();
  }

  template <typename Body>
  void when(Location loc, std::string condition, Body body) {
    nested<core::WhenOp>(loc, std::move(condition), body);
  }

  template <typename Body>
  void repeat(Location loc, std::string count, Body body) {
    nested<core::RepeatOp>(loc, std::move(count), body);
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
    // Host-side reshapes only rename the row-major source's shape.
    Value source = op.getSource();
    auto sourceType = cast<RankedTensorType>(source.getType());
    while (auto reshape = source.getDefiningOp<tfm::ReshapeOp>())
      source = reshape.getInput();
    auto input = bindings.create<core::InputOp>(
        op.getLoc(), *buffer, bindings.getStringAttr(""),
        TypeAttr::get(op.getResult().getType()),
        bindings.getDenseI64ArrayAttr(sourceType.getShape()),
        op.getPermutationAttr(), nullptr, nullptr, nullptr,
        op.getIndexDimAttr(), op.getIndexMapAttr());
    auto argumentName = [&](BlockArgument arg) {
      auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     "tfm.name");
      return name ? name.str() : "input" + std::to_string(arg.getArgNumber());
    };
    if (auto arg = dyn_cast<BlockArgument>(source)) {
      input.setName(argumentName(arg));
    } else if (auto weight = source.getDefiningOp<tfm::WeightOp>()) {
      input.setName(weight.getName());
      input.setWeightFileAttr(weight.getSourceAttr());
    } else if (auto constant = source.getDefiningOp<tfm::ConstantOp>()) {
      input.setName("constant");
      input.setValueAttr(
          cast<DenseElementsAttr>(constant.getValue()).reshape(sourceType));
    } else if (auto embed = source.getDefiningOp<tfm::EmbedOp>()) {
      auto table = embed.getTable().getDefiningOp<tfm::WeightOp>();
      auto ids = dyn_cast<BlockArgument>(embed.getIds());
      if (!table || !ids)
        return op.emitError("convert-mesh-to-core: an embedding is placed "
                            "only from a weight table and a graph input");
      input.setName(table.getName());
      input.setWeightFileAttr(table.getSourceAttr());
      input.setGatherIds(argumentName(ids));
    } else {
      return op.emitError("convert-mesh-to-core: cannot place this host value");
    }
    return success();
  }

  /// What every GEMM lowering starts from: the op's channels, operand and
  /// result buffers, tile sizes (K in lcm(H, W) blocks, the ring of the
  /// block-cyclic layouts) and working buffers, allocated in that order.
  struct GemmPlan {
    SmallVector<FlatSymbolRefAttr> channels;
    FlatSymbolRefAttr a, b, c;
    int64_t ring = 1, mt = 0, kt = 0, nt = 0;
    std::string tag;
    llvm::StringMap<FlatSymbolRefAttr> scratch;
  };
  FailureOr<GemmPlan> planGemm(mesh::GemmOp op);

  LogicalResult lower(mesh::GemmOp op);


  /// GEMM via allgather: every core collects its row panel of A (the
  /// blocks of all W ring positions) and column panel of B by ring shifts,
  /// copying each arrival into its panel, then multiplies the blocks pair
  /// by pair. Block b of A sits in chunk b % W, slot b / W of the panel
  /// (the blocks ring position b % W holds), B's in chunk b % H.
  LogicalResult lowerAllgather(mesh::GemmOp op);


  /// SUMMA with the identity placement: in step i (of lcm(H, W)) the cores
  /// of column i % W send their A block i along the row and those of row
  /// i % H their B block i along the column; every other core receives the
  /// block from the owner's side and forwards it one hop further, so each
  /// hop pays the relay cycles. On a square grid the owner lends its tile by
  /// swapping it into the panel buffer (free) and takes it back after the
  /// multiply; otherwise it copies the block's slot into the panel.
  LogicalResult lowerSumma(mesh::GemmOp op);


  LogicalResult lower(mesh::GemvOp op);

  /// Combines `sum` (message number `message` of the op's AllreduceUse)
  /// over the op's reduction axis with its allreduce, so every core of the
  /// axis ends with the combination; returns the algorithm's name for the
  /// statistics.
  std::string allreduce(Location loc, Operation *op,
                        ArrayRef<FlatSymbolRefAttr> channels,
                        const llvm::StringMap<FlatSymbolRefAttr> &scratch,
                        FlatSymbolRefAttr sum, unsigned message,
                        core::ElementwiseKind combine);

  /// Elements of a declared buffer.
  int64_t localSize(FlatSymbolRefAttr buffer) {
    return bufferSizes.lookup(buffer.getValue());
  }


  /// The K-tree (or pipeline) over `n` ring positions with every message
  /// moved one position at a time: a member's send to the member `stride`
  /// positions before it is received and forwarded by each core in between
  /// (paying the relay cycles of the receive), and so is the broadcast.
  void relayedTree(Location loc, ArrayRef<rt::KTreeLevel> levels,
                   const std::string &pos, int64_t n, FlatSymbolRefAttr sum,
                   FlatSymbolRefAttr partial, FlatSymbolRefAttr hopIn,
                   FlatSymbolRefAttr hopOut, core::ElementwiseKind combine);


  /// Ring allreduce of a ring's partial sums in `sum`: ringSize - 1 steps in
  /// which every core passes the partial it last received (first its own)
  /// to the previous ring position and adds the one arriving from the next.
  void ringAllreduce(Location loc, FlatSymbolRefAttr sum,
                     FlatSymbolRefAttr ring, FlatSymbolRefAttr passing,
                     FlatSymbolRefAttr next, int64_t ringSize,
                     core::ElementwiseKind combine);


  LogicalResult lower(mesh::RelayoutOp op);
  LogicalResult lower(mesh::RmsNormOp op);
  LogicalResult lower(mesh::RopeOp op);
  LogicalResult lower(mesh::KvAppendOp op);
  LogicalResult lower(mesh::AttentionOp op);
  LogicalResult lowerPrefillAttention(mesh::AttentionOp op);

  /// What both attention lowerings start from: channels, the operand and
  /// result buffers and the working buffers, allocated in that order.
  struct AttentionBuffers {
    SmallVector<FlatSymbolRefAttr> channels;
    FlatSymbolRefAttr q, k, v, out;
    llvm::StringMap<FlatSymbolRefAttr> scratch;
  };
  FailureOr<AttentionBuffers> attentionBuffers(mesh::AttentionOp op);

  /// A core.rows instruction (see its description for the sizes).
  core::RowsOp rows(Location loc, core::RowKernel kernel,
                    ArrayRef<FlatSymbolRefAttr> operands, int64_t m,
                    int64_t n, int64_t k = 0, int64_t groups = 1);

  LogicalResult lower(mesh::MapOp op) {
    auto lhs = bufferFor(op.getLhs()), rhs = bufferFor(op.getRhs()),
         out = bufferFor(op.getResult());
    if (failed(lhs) || failed(rhs) || failed(out))
      return failure();
    core::ElementwiseKind kind = core::ElementwiseKind::add;
    if (op.getKind() == mesh::MapKind::mul)
      kind = core::ElementwiseKind::mul;
    else if (op.getKind() == mesh::MapKind::swiglu)
      kind = core::ElementwiseKind::swiglu;
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
      auto sourceType = cast<RankedTensorType>(collect.getSource().getType());
      ArrayRef<int64_t> shape = collect.getResult().getType().getShape();
      bindings.create<core::OutputOp>(
          op.getLoc(), *buffer, bindings.getStringAttr(name),
          TypeAttr::get(sourceType),
          shape == sourceType.getShape() && !collect.getPermutation() &&
                  !collect.getIndexDim()
              ? nullptr
              : bindings.getDenseI64ArrayAttr(shape),
          collect.getPermutationAttr(), collect.getIndexDimAttr(),
          collect.getIndexMapAttr());
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
  llvm::StringMap<int64_t> bufferSizes;
  SmallVector<Attribute> opsInfo;
  /// Where every buffer lives (buffers of dead values are reused).
  MemoryPlan memory;
};

} // namespace wafer::lowering

#endif // WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H
