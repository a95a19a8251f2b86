//===- TfmToMeshPlanner.h - Plans of tfm graphs on a grid -------*- C++ -*-===//
//
// convert-tfm-to-mesh's state: it walks @main in order and replaces each
// tfm op with the mesh ops of its plan. Products (GEMM, GEMV) are planned
// here; the decode plan's transformer ops in PlanTransformer.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_CONVERSION_TFMTOMESHPLANNER_H
#define WAFER_PASSES_CONVERSION_TFMTOMESHPLANNER_H

#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/KvCache.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"


// Scoped to this header: its inline members trace under this name.
#define DEBUG_TYPE "convert-tfm-to-mesh"

namespace wafer::planning {

// The MLIR names this header uses (no using-directive in a header).
using mlir::ArrayRef;
using mlir::BlockArgument;
using mlir::cast;
using mlir::DenseMap;
using mlir::dyn_cast;
using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::isa;
using mlir::Location;
using mlir::LogicalResult;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::OpOperand;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::success;
using mlir::Type;
using mlir::Value;
namespace func = mlir::func;

constexpr int64_t kNone = mesh::LayoutAttr::kNone;
constexpr int64_t kX = mesh::LayoutAttr::kX;
constexpr int64_t kY = mesh::LayoutAttr::kY;

/// Rewrites the tfm ops of one function into mesh ops, keeping host-side
/// values (arguments, weights, constants, transposes of them) on the host.
class Planner {
public:
  Planner(func::FuncOp func, mesh::GridAttr grid,
          mesh::GemmAlgorithm gemmAlgorithm,
          mesh::AllreduceAlgorithm allreduce, int64_t ktreeK,
          Type elementType)
      : func(func), grid(grid), gemmAlgorithm(gemmAlgorithm),
        allreduce(allreduce), ktreeK(ktreeK), elementType(elementType),
        builder(func.getContext()) {}

  LogicalResult run() {
    findHeadProjections();
    SmallVector<Operation *> worklist;
    for (Operation &op : func.getBody().front())
      worklist.push_back(&op);
    for (Operation *op : worklist) {
      builder.setInsertionPoint(op);
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<tfm::MatMulOp>([&](auto op) { return planMatMul(op); })
              .Case<tfm::LinearOp>([&](auto op) { return planLinear(op); })
              .Case<tfm::AddOp>([&](auto op) {
                return planMap(op, mesh::MapKind::add);
              })
              .Case<tfm::MulOp>([&](auto op) {
                return planMap(op, mesh::MapKind::mul);
              })
              .Case<tfm::TransposeOp, tfm::ReshapeOp>(
                  [&](auto op) { return planView(op); })
              .Case<tfm::RmsNormOp>([&](auto op) { return planRmsNorm(op); })
              .Case<tfm::SwigluOp>([&](auto op) { return planSwiglu(op); })
              .Case<tfm::RopeOp>([&](auto op) { return planRope(op); })
              .Case<tfm::ConcatOp>([&](auto op) { return planConcat(op); })
              .Case<tfm::AttentionOp>(
                  [&](auto op) { return planAttention(op); })
              .Case<tfm::WeightOp, tfm::ConstantOp, tfm::EmbedOp>(
                  [&](auto) { return success(); })
              .Case<func::ReturnOp>([&](auto op) { return planReturn(op); })
              .Default([&](Operation *op) { return noPlan(op); });
      if (failed(result))
        return failure();
      LLVM_DEBUG(traceOp(op));
    }
    // Compute ops are replaced; host ops stay only while distributes use them.
    for (Operation *op : llvm::reverse(worklist))
      if (!isa<func::ReturnOp>(op) && op->use_empty())
        op->erase();
    return success();
  }

private:
  /// Prints, under -debug-only=convert-tfm-to-mesh, the layouts chosen for
  /// an op's results.
  void traceOp(Operation *op) {
    for (Value result : op->getResults())
      if (Value planned = plannedValues.lookup(result))
        llvm::dbgs() << "convert-tfm-to-mesh: " << op->getName() << " at "
                     << op->getLoc() << " -> " << planned.getType() << "\n";
  }

  /// The error for an op the grid does not compute. Constant computations
  /// (masks, position tables) reach here only when tfm-fold-shapes found
  /// them too large to fold, which a long sequence causes: say so.
  LogicalResult noPlan(Operation *op) {
    auto type = op->getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                    : RankedTensorType();
    int64_t limit = TfmFoldShapesOptions().maxElements;
    std::optional<int64_t> count =
        type ? checkedElementCount(type.getShape()) : std::nullopt;
    bool constantInputs = llvm::all_of(op->getOperands(), [](Value v) {
      return v.getDefiningOp<tfm::ConstantOp>();
    });
    if (type && constantInputs && (!count || *count > limit))
      return op->emitError("convert-tfm-to-mesh: '")
             << op->getName() << "' computes a constant " << type
             << " larger than tfm-fold-shapes folds (" << limit
             << " elements), and the grid does not compute it; the sequence "
                "is too long for this model's masks";
    return op->emitError("convert-tfm-to-mesh: no mesh plan for '")
           << op->getName() << "'";
  }

  mesh::LayoutAttr layout(ArrayRef<int64_t> axes, ArrayRef<int64_t> blocks) {
    return mesh::LayoutAttr::get(func.getContext(), axes, blocks, false);
  }

  /// The layout element-wise results use when no operand imposes one: the
  /// last two dimensions split over y and x.
  mesh::LayoutAttr defaultLayout(int64_t rank) {
    SmallVector<int64_t> axes(rank, kNone), blocks(rank, 1);
    if (rank >= 1) {
      axes[rank - 1] = kX;
      blocks[rank - 1] = grid.getWidth();
    }
    if (rank >= 2) {
      axes[rank - 2] = kY;
      blocks[rank - 2] = grid.getHeight();
    }
    return layout(axes, blocks);
  }

  bool isHostValue(Value v) {
    if (isa<BlockArgument>(v))
      return true;
    Operation *def = v.getDefiningOp();
    if (isa<tfm::WeightOp, tfm::ConstantOp>(def))
      return true;
    if (isa<tfm::TransposeOp, tfm::ReshapeOp>(def))
      return isHostValue(def->getOperand(0));
    // The host places embedding rows (core.input gather_ids).
    if (auto embed = dyn_cast<tfm::EmbedOp>(def))
      return isa<BlockArgument>(embed.getIds()) &&
             embed.getTable().getDefiningOp<tfm::WeightOp>();
    return false;
  }

  /// `v` on the grid with shape `shape` in `layout`: a distribute of a host
  /// value (folding host-side transposes, and `outerPermutation` applied
  /// after them) or the mesh value computed for it.
  FailureOr<Value> materialize(Operation *user, Value v,
                               ArrayRef<int64_t> shape,
                               mesh::LayoutAttr layout,
                               ArrayRef<int64_t> outerPermutation = {}) {
    auto type = RankedTensorType::get(shape, elementType, layout);
    if (isHostValue(v)) {
      SmallVector<int64_t> permutation(outerPermutation);
      Value source = v;
      // Unit dimensions the plan drops are dropped on the host too.
      auto sourceType = cast<RankedTensorType>(v.getType());
      if (outerPermutation.empty() && sourceType.getRank() > int64_t(shape.size()) &&
          sourceType.getNumElements() == type.getNumElements())
        source = builder.create<tfm::ReshapeOp>(
            user->getLoc(),
            RankedTensorType::get(shape, sourceType.getElementType()), v);
      // Compose host-side transposes into one permutation of the source.
      while (auto transpose = source.getDefiningOp<tfm::TransposeOp>()) {
        if (!isa<BlockArgument>(transpose.getInput()) &&
            !isa<tfm::WeightOp, tfm::ConstantOp>(
                transpose.getInput().getDefiningOp()))
          break;
        ArrayRef<int64_t> perm = transpose.getPermutation();
        if (permutation.empty())
          permutation.assign(perm.begin(), perm.end());
        else
          for (int64_t &p : permutation)
            p = perm[p];
        source = transpose.getInput();
      }
      auto distribute =
          builder.create<mesh::DistributeOp>(user->getLoc(), type, source,
                                             nullptr, nullptr, nullptr);
      if (!permutation.empty())
        distribute.setPermutation(permutation);
      return distribute.getResult();
    }
    if (!outerPermutation.empty())
      return user->emitError("convert-tfm-to-mesh: transposing a computed "
                             "tensor is not supported yet");
    Value planned = plannedValues.lookup(v);
    if (planned.getType() == type)
      return planned;
    if (isRelayout(cast<RankedTensorType>(planned.getType()), type))
      return builder
          .create<mesh::RelayoutOp>(user->getLoc(), type, planned, nullptr)
          .getResult();
    return user->emitError("convert-tfm-to-mesh: operand is laid out as ")
           << planned.getType() << " but this op needs " << type
           << "; only re-blocking one split dimension is supported";
  }

  /// Whether mesh.relayout turns `from` into `to`: one dimension's block
  /// count differs, every other split keeps one block per core.
  bool isRelayout(RankedTensorType from, RankedTensorType to) {
    mesh::LayoutAttr a = mesh::getLayout(from), b = mesh::getLayout(to);
    if (from.getShape() != to.getShape() ||
        from.getElementType() != to.getElementType() || !a || !b ||
        a.getAxes() != b.getAxes())
      return false;
    int changed = 0;
    for (auto [axis, x, y] :
         llvm::zip(a.getAxes(), a.getBlocks(), b.getBlocks())) {
      int64_t extent = axis == kX   ? grid.getWidth()
                       : axis == kY ? grid.getHeight()
                                    : 1;
      if (x != y)
        ++changed;
      else if (x != extent)
        return false;
    }
    return changed == 1;
  }

  LogicalResult planMatMul(tfm::MatMulOp op) {
    return planProduct(op, op.getLhs(), op.getRhs(), false);
  }

  /// tfm.linear is x @ W (or x @ W^T, the transpose done by the host's
  /// view of the weight).
  LogicalResult planLinear(tfm::LinearOp op) {
    return planProduct(op, op.getInput(), op.getWeight(),
                       op.getTransposeWeight());
  }

  /// result = lhs @ rhs (rhs^T when `transposeRhs`) as a mesh.gemm, or a
  /// mesh.gemv when lhs has one row.
  LogicalResult planProduct(Operation *op, Value lhsValue, Value rhsValue,
                            bool transposeRhs) {
    auto lhsType = cast<RankedTensorType>(lhsValue.getType());
    auto rhsType = cast<RankedTensorType>(rhsValue.getType());
    // Leading unit dimensions ([1, L, E] activations) are dropped.
    SmallVector<int64_t> lhsShape = meshShape(lhsType);
    if (lhsShape.size() != 2 || rhsType.getRank() != 2)
      return op->emitError("convert-tfm-to-mesh: a product of rank-")
             << lhsType.getRank() << " and rank-" << rhsType.getRank()
             << " operands is not supported yet (only matrices)";
    if (headProjections.count(op) || isHeadForm(lhsValue))
      return lhsShape[0] == 1
                 ? planHeadGemv(op, lhsValue, rhsValue, transposeRhs)
                 : planHeadGemm(op, lhsValue, rhsValue, transposeRhs);
    SmallVector<int64_t> rhsPermutation;
    if (transposeRhs)
      rhsPermutation = {1, 0};
    int64_t m = lhsShape[0], k = lhsShape[1],
            n = rhsType.getDimSize(transposeRhs ? 0 : 1);
    int64_t h = grid.getHeight(), w = grid.getWidth();
    if (m == 1) {
      // A vector a previous GEMV left split along x feeds the transposed
      // orientation (the weight is placed [x:W, y:H]), so chained GEMVs
      // alternate between the two and never relayout.
      bool alongX = !isHostValue(lhsValue) &&
                    splitAxis(plannedValues.lookup(lhsValue)) == kX;
      int64_t in = alongX ? kX : kY, out = alongX ? kY : kX;
      int64_t inBlocks = alongX ? w : h, outBlocks = alongX ? h : w;
      auto lhs = materialize(op, lhsValue, {1, k},
                             layout({kNone, in}, {1, inBlocks}));
      if (failed(lhs))
        return failure();
      auto rhs = materialize(op, rhsValue, {k, n},
                             layout({in, out}, {inBlocks, outBlocks}),
                             rhsPermutation);
      if (failed(rhs))
        return failure();
      auto resultType = RankedTensorType::get(
          {1, n}, elementType, layout({kNone, out}, {1, outBlocks}));
      auto gemv = builder.create<mesh::GemvOp>(
          op->getLoc(), resultType, *lhs, *rhs,
          allreduceAttr(), nullptr, nullptr);
      plannedValues[op->getResult(0)] = gemv.getResult();
      return success();
    }
    int64_t ring = mesh::GemmOp::kBlocks(h, w);
    auto lhs = materialize(op, lhsValue, {m, k}, layout({kY, kX}, {h, ring}));
    if (failed(lhs))
      return failure();
    auto rhs = materialize(op, rhsValue, {k, n}, layout({kY, kX}, {ring, w}),
                           rhsPermutation);
    if (failed(rhs))
      return failure();
    auto resultType =
        RankedTensorType::get({m, n}, elementType, layout({kY, kX}, {h, w}));
    auto gemm = builder.create<mesh::GemmOp>(
        op->getLoc(), resultType, *lhs, *rhs,
        mesh::GemmAlgorithmAttr::get(op->getContext(), gemmAlgorithm),
        nullptr);
    plannedValues[op->getResult(0)] = gemm.getResult();
    return success();
  }

  /// The allreduce of a GEMV, rms_norm or decode attention: a K-tree with
  /// K = `ktreeK`, left open when it is 0 (mesh-choose-ktree picks it once
  /// the placement is known), or a baseline.
  mesh::AllreduceAttr allreduceAttr() {
    return mesh::AllreduceAttr::get(
        func.getContext(), allreduce,
        allreduce == mesh::AllreduceAlgorithm::ktree ? ktreeK : 0);
  }

  template <typename BinaryOp>
  LogicalResult planMap(BinaryOp op, mesh::MapKind kind) {
    return planElementwise(op, op.getLhs(), op.getRhs(), kind);
  }

  LogicalResult planElementwise(Operation *op, Value lhsValue, Value rhsValue,
                                mesh::MapKind kind) {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // A computed operand of the full shape imposes its layout and shape.
    mesh::LayoutAttr chosen;
    SmallVector<int64_t> shape = meshShape(resultType);
    for (Value operand : {lhsValue, rhsValue})
      if (!isHostValue(operand) &&
          cast<RankedTensorType>(operand.getType()).getShape() ==
              resultType.getShape()) {
        auto planned =
            cast<RankedTensorType>(plannedValues.lookup(operand).getType());
        chosen = mesh::getLayout(planned);
        shape.assign(planned.getShape().begin(), planned.getShape().end());
      }
    if (!chosen)
      chosen = defaultLayout(shape.size());
    auto lhs = materialize(op, lhsValue, shape, chosen);
    if (failed(lhs))
      return failure();
    auto rhs = materialize(op, rhsValue, shape, chosen);
    if (failed(rhs))
      return failure();
    auto map = builder.create<mesh::MapOp>(
        op->getLoc(), lhs->getType(),
        mesh::MapKindAttr::get(op->getContext(), kind), *lhs, *rhs);
    plannedValues[op->getResult(0)] = map.getResult();
    return success();
  }

  /// The shape a tfm value has on the grid: leading unit dimensions
  /// dropped down to a matrix.
  static SmallVector<int64_t> meshShape(RankedTensorType type) {
    ArrayRef<int64_t> shape = type.getShape();
    while (shape.size() > 2 && shape.front() == 1)
      shape = shape.drop_front();
    return SmallVector<int64_t>(shape);
  }

  /// The grid axis splitting a distributed value's dimensions after the
  /// first (the vector of a decode step), or kNone.
  static int64_t splitAxis(Value planned) {
    mesh::LayoutAttr layout = mesh::getLayout(planned.getType());
    if (!layout)
      return kNone;
    for (int64_t axis : layout.getAxes().drop_front())
      if (axis != kNone)
        return axis;
    return kNone;
  }

  //===--------------------------------------------------------------------===//
  // The decode plan's transformer ops (PlanTransformer.cpp)
  //===--------------------------------------------------------------------===//

  /// Finds the projections whose results attention reads as heads (through
  /// reshape, transpose, rope and the KV concat) and records each one's
  /// number of KV heads.
  void findHeadProjections();
  /// Whether a computed value is planned as heads, [1, KVH, X] split along
  /// x.
  bool isHeadForm(Value v);
  LogicalResult planHeadGemv(Operation *op, Value lhs, Value weight,
                             bool transposeWeight);
  LogicalResult planHeadGemm(Operation *op, Value lhs, Value weight,
                             bool transposeWeight);
  LogicalResult planView(Operation *op);
  LogicalResult planRmsNorm(tfm::RmsNormOp op);
  LogicalResult planSwiglu(tfm::SwigluOp op);
  LogicalResult planRope(tfm::RopeOp op);
  LogicalResult planConcat(tfm::ConcatOp op);
  LogicalResult planAttention(tfm::AttentionOp op);
  /// K and N of a projection's weight [K, N] (stored [N, K] when
  /// `transposed`); an error unless it is a tfm.weight.
  FailureOr<std::pair<int64_t, int64_t>>
  projectionSizes(Operation *op, Value weight, bool transposed);
  /// A projection's weight with its K (`splitInput`) or N dimension split
  /// into [kvHeads, x], placed as [kvHeads, x, N] or [K, kvHeads, x] in
  /// `layout`: a reshape and permutation of the host's view.
  Value placeHeadWeight(Location loc, Value weight, bool transposed,
                        bool splitInput, int64_t kvHeads, int64_t x,
                        mesh::LayoutAttr layout);

  LogicalResult planReturn(func::ReturnOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (isHostValue(v))
        continue;
      auto collect = builder.create<mesh::CollectOp>(
          op.getLoc(), v.getType(), plannedValues.lookup(v), nullptr,
          nullptr, nullptr);
      // Prefill keys and values are planned positions first; the graph
      // returns them heads first.
      if (headsFirst.contains(v))
        collect.setPermutation(ArrayRef<int64_t>{1, 0, 2});
      // A KV cache returns its positions out of its slots.
      if (auto append = collect.getSource().getDefiningOp<mesh::KvAppendOp>()) {
        collect.setIndexDim(2);
        collect.setIndexMap(getKvCacheLayout(append).presentSlots());
      }
      operand.set(collect.getResult());
    }
    return success();
  }

  func::FuncOp func;
  mesh::GridAttr grid;
  mesh::GemmAlgorithm gemmAlgorithm;
  mesh::AllreduceAlgorithm allreduce;
  /// K of every K-tree, or 0: chosen per op by mesh-choose-ktree.
  int64_t ktreeK;
  /// Element type of every distributed tensor (--dtype).
  Type elementType;
  OpBuilder builder;
  /// The mesh value computed for each tfm value.
  DenseMap<Value, Value> plannedValues;
  /// Projections attention reads as heads: their KV head count.
  DenseMap<Operation *, int64_t> headProjections;
  /// tfm values of prefill heads whose graph order is heads before
  /// positions ([1, KVH, L, D]); the plan keeps [L, KVH, D].
  llvm::DenseSet<Value> headsFirst;
};


} // namespace wafer::planning

#undef DEBUG_TYPE

#endif // WAFER_PASSES_CONVERSION_TFMTOMESHPLANNER_H
