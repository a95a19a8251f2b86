//===- ProgramLowering.h - mesh ops to one core.program ---------*- C++ -*-===//
//
// The state convert-mesh-to-core keeps while it lowers the mesh ops of @main
// in program order: buffers, channels, the single role's instructions and
// the host bindings. Each distributed algorithm's lowering is in its own
// file, Lower<Algorithm>.cpp, next to its plan in
// dialects/mesh/algorithms/<Algorithm>.cpp; ProgramLowering.cpp holds the
// rest.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H
#define WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H

#include "wafer/CostModel/CostModel.h"
#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/FabricPlacement.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Runtime/TimingModel.h"
#include "wafer/Support/ChannelFamilies.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/KvCache.h"
#include "wafer/Support/LocalTile.h"
#include "wafer/Support/LocationName.h"
#include "wafer/Support/MemoryPlan.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
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

/// The element type of a mesh op's (first) result.
inline Type elementOf(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
}

/// An op's channels or working buffers, found by their role in its
/// algorithm (and the K-tree level or allreduce message it serves), as
/// CommunicatingOpInterface reports them.
template <typename Role> class ByRole {
public:
  struct Key {
    Role role;
    unsigned index = 0;
    /// The grid axis of a channel (an allreduce may run along both).
    rt::Axis axis = rt::Axis::None;
  };
  void add(Key key, FlatSymbolRefAttr symbol) {
    entries.push_back({key, symbol});
  }
  /// The symbol of `role`, or null when the op has none (a ring of one
  /// core, say); on `axis` when it is not None.
  FlatSymbolRefAttr get(Role role, unsigned index = 0,
                        rt::Axis axis = rt::Axis::None) const {
    for (const auto &[entry, symbol] : entries)
      if (entry.role == role && entry.index == index &&
          (axis == rt::Axis::None || entry.axis == axis))
        return symbol;
    return nullptr;
  }

private:
  SmallVector<std::pair<Key, FlatSymbolRefAttr>, 4> entries;
};
using OpChannels = ByRole<ChannelRole>;
using OpScratch = ByRole<BufferRole>;

/// Builds one core.program from the mesh ops of @main, in program order.
class ProgramLowering {
public:
  ProgramLowering(ModuleOp module, func::FuncOp main, mesh::GridAttr grid,
                  mesh::TargetAttr target)
      : module(module), main(main), grid(grid), target(target),
        timing(target.getValue()), clock(grid.getHeight(), grid.getWidth()),
        builder(module.getContext()), h(grid.getHeight()), w(grid.getWidth()) {}

  /// Lowers @main into a core.program inserted at the end of the module.
  LogicalResult run();

  /// Decode tokens the caches can take after this step: the slots still
  /// empty, then whatever SRAM is left above the program's high-water, one
  /// slot per row at a time: a slot of every cache, and of the largest
  /// attention's scores (its working buffer grows with the slots), filled
  /// on the bottom row only (concat) or on every row (shift).
  std::optional<int64_t> kvCapacityTokens();

private:
  //===--------------------------------------------------------------------===//
  // Declarations (ProgramLowering.cpp)
  //===--------------------------------------------------------------------===//

  /// A buffer of `elements` values of `elementType` (f32 or f16); offsets
  /// stay 4-byte aligned.
  FailureOr<FlatSymbolRefAttr> newBuffer(Location loc, StringRef name,
                                         int64_t elements, Type elementType,
                                         int64_t offset);
  /// The buffer holding a distributed value, allocated on first use.
  FailureOr<FlatSymbolRefAttr> bufferFor(Value v);
  /// The working buffers of an op, named `tag` + their suffix.
  FailureOr<OpScratch> scratchFor(Operation *op, StringRef tag);
  /// The channel of a family, declared on first use from `baseColor` on.
  FlatSymbolRefAttr channelFor(const ChannelFamily &family, int32_t baseColor);
  /// The channels of a communicating op, one per family, using the colors
  /// mesh-allocate-routes recorded.
  FailureOr<OpChannels> channelsFor(Operation *op);
  /// What a communicating op's lowering starts from: its channels, the
  /// buffers of `values` (its operands and results) and its working buffers,
  /// named after `kind` and the op's index, allocated in that order.
  struct OpResources {
    OpChannels channels;
    SmallVector<FlatSymbolRefAttr> buffers;
    OpScratch scratch;
  };
  FailureOr<OpResources> resourcesFor(Operation *op, StringRef kind,
                                      ArrayRef<Value> values);
  /// Records the op and its cycle estimate for the statistics; returns its
  /// index for core.mark.
  int64_t recordOp(Operation *op, StringRef kind, StringRef algorithm);
  /// Elements of a declared buffer.
  int64_t localSize(FlatSymbolRefAttr buffer) {
    return bufferSizes.lookup(buffer.getValue());
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
  void startShift(Location loc, const RingShift &s);
  void finishShift(Location loc, const RingShift &s);

  /// Shows every core each tile of its ring along x or y (relayout and
  /// kv_handoff): its own `source` first, then, after each of the extent - 1
  /// shifts, the tile that arrives in the op's Passing buffer (over its Ring
  /// channel, Arriving taking it in). `visit(tile, from)` emits what a core
  /// does with a tile; `from` is the expression of the ring position the
  /// tile comes from.
  void visitRingTiles(
      Location loc, const OpChannels &channels, const OpScratch &scratch,
      FlatSymbolRefAttr source, bool alongX,
      llvm::function_ref<void(FlatSymbolRefAttr, const std::string &)> visit);

  /// A core.rows instruction (see its description for the sizes).
  core::RowsOp rows(Location loc, core::RowKernel kernel,
                    ArrayRef<FlatSymbolRefAttr> operands, int64_t m,
                    int64_t n, int64_t k = 0, int64_t groups = 1);

  //===--------------------------------------------------------------------===//
  // Ops without an algorithm of their own (ProgramLowering.cpp)
  //===--------------------------------------------------------------------===//

  LogicalResult lower(mesh::DistributeOp op);
  LogicalResult lower(mesh::MapOp op);
  LogicalResult lower(func::ReturnOp op);

  //===--------------------------------------------------------------------===//
  // MeshGEMM, Cannon, SUMMA, allgather (LowerGemm.cpp)
  //===--------------------------------------------------------------------===//

  /// What every GEMM lowering starts from: the op's channels, operand and
  /// result buffers, tiling and working buffers, allocated in that order.
  struct GemmPlan {
    OpChannels channels;
    FlatSymbolRefAttr a, b, c;
    cost::GemmTiling tiling;
    OpScratch scratch;
  };
  FailureOr<GemmPlan> planGemm(mesh::GemmOp op);
  LogicalResult lower(mesh::GemmOp op);
  LogicalResult lowerAllgather(mesh::GemmOp op);
  LogicalResult lowerSumma(mesh::GemmOp op);

  //===--------------------------------------------------------------------===//
  // K-tree, pipeline and ring allreduce; GEMV, rms_norm (LowerAllreduce.cpp)
  //===--------------------------------------------------------------------===//

  /// Combines `sum` (message number `message` of the op's AllreduceUse)
  /// over the op's reduction axis with its allreduce, so every core of the
  /// axis ends with the combination; returns the algorithm's name for the
  /// statistics.
  std::string allreduce(Location loc, Operation *op, const OpChannels &channels,
                        const OpScratch &scratch, FlatSymbolRefAttr sum,
                        unsigned message, core::ElementwiseKind combine);
  void treeAllreduce(Location loc, const AllreduceUse &use, unsigned message,
                     const std::string &coord, int64_t reduced,
                     unsigned joinLevel, const OpChannels &channels,
                     const OpScratch &scratch, FlatSymbolRefAttr sum,
                     core::ElementwiseKind combine);
  void relayedTree(Location loc, ArrayRef<rt::KTreeLevel> levels,
                   const std::string &pos, int64_t n, FlatSymbolRefAttr sum,
                   FlatSymbolRefAttr partial, FlatSymbolRefAttr hopIn,
                   FlatSymbolRefAttr hopOut, core::ElementwiseKind combine);
  void ringAllreduce(Location loc, FlatSymbolRefAttr sum,
                     FlatSymbolRefAttr ring, FlatSymbolRefAttr passing,
                     FlatSymbolRefAttr next, int64_t ringSize,
                     core::ElementwiseKind combine);
  LogicalResult lower(mesh::GemvOp op);
  LogicalResult lower(mesh::RmsNormOp op);

  //===--------------------------------------------------------------------===//
  // The other algorithms, one file each
  //===--------------------------------------------------------------------===//

  /// LowerAttention.cpp. What both attention lowerings start from:
  /// channels, the operand and result buffers and the working buffers,
  /// allocated in that order.
  struct AttentionBuffers {
    OpChannels channels;
    FlatSymbolRefAttr q, k, v, out;
    OpScratch scratch;
  };
  FailureOr<AttentionBuffers> attentionBuffers(mesh::AttentionOp op);
  LogicalResult lower(mesh::AttentionOp op);
  LogicalResult lowerPrefillAttention(mesh::AttentionOp op);
  std::string firstLaneExpr(mesh::AttentionOp op, int64_t lanes);
  LogicalResult lowerLaneAttention(mesh::AttentionOp op);
  LogicalResult lowerPrefillLaneAttention(mesh::AttentionOp op);
  void shiftKeysAndValues(Location loc, const AttentionBuffers &a, int64_t tile,
                          llvm::function_ref<void(const std::string &)> step);
  /// LowerKvAppend.cpp.
  LogicalResult lower(mesh::KvAppendOp op);
  /// LowerKvHandoff.cpp.
  LogicalResult lower(mesh::KvHandoffOp op);
  /// LowerRelayout.cpp.
  LogicalResult lower(mesh::RelayoutOp op);
  /// LowerRowKernels.cpp: RoPE, a local row kernel.
  LogicalResult lower(mesh::RopeOp op);

  ModuleOp module;
  func::FuncOp main;
  mesh::GridAttr grid;
  mesh::TargetAttr target;
  /// The prices of the ops' cycle estimates.
  rt::TimingModel timing;
  /// When each core is done with the ops recorded so far, as estimated.
  cost::CoreClock clock;
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
  /// The estimated time of the last core after each op in opsInfo (the
  /// clock's latest(), revised while the op's run goes on).
  SmallVector<int64_t> latestAfterOp;
  /// Where every buffer lives (buffers of dead values are reused).
  MemoryPlan memory;
};

} // namespace wafer::lowering

#endif // WAFER_PASSES_CONVERSION_PROGRAMLOWERING_H
