//===- TfmToMeshPlanner.h - Plans of tfm graphs on a grid -------*- C++ -*-===//
//
// convert-tfm-to-mesh's state: it walks @main in order and replaces each
// tfm op with the mesh ops of its plan. Products (GEMM, GEMV), element-wise
// ops and the outputs are planned in TfmToMeshPlanner.cpp; the transformer
// ops in PlanTransformer.cpp.
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
          mesh::GemmAlgorithm gemmAlgorithm, mesh::AllreduceAlgorithm allreduce,
          int64_t ktreeK, Type elementType, bool prefillLanes)
      : func(func), grid(grid), gemmAlgorithm(gemmAlgorithm),
        allreduce(allreduce), ktreeK(ktreeK), elementType(elementType),
        prefillLanes(prefillLanes), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// Prints, under -debug-only=convert-tfm-to-mesh, the layouts chosen for
  /// an op's results.
  void traceOp(Operation *op);

  /// The error for an op the grid does not compute. Constant computations
  /// (masks, position tables) reach here only when tfm-fold-shapes found
  /// them too large to fold, which a long sequence causes: say so.
  LogicalResult noPlan(Operation *op);
  /// The type of what `op` computes when that is a constant, from constant
  /// operands, larger than tfm-fold-shapes folds (a long prompt's mask);
  /// null otherwise.
  static RankedTensorType unfoldedConstantType(Operation *op);

  /// `balanced` flags the feature dimensions (hidden size, FFN width,
  /// vocabulary), whose blocks are balanced; positions, heads and lanes
  /// keep ceil-sized blocks, which the attention kernels index.
  mesh::LayoutAttr layout(ArrayRef<int64_t> axes, ArrayRef<int64_t> blocks,
                          ArrayRef<bool> balanced = {}) {
    return mesh::LayoutAttr::get(func.getContext(), axes, blocks, false,
                                 balanced);
  }

  /// A planned tensor of `shape` in `layout`, without the balanced flags of
  /// the dimensions its blocks divide evenly (their blocks are the same
  /// either way), so that one value serves every op that splits it alike
  /// (x @ x on a grid that divides x).
  RankedTensorType distributedType(ArrayRef<int64_t> shape,
                                   mesh::LayoutAttr layout);

  /// The layout element-wise results use when no operand imposes one: the
  /// last two dimensions split over y and x, the last (features) balanced.
  mesh::LayoutAttr defaultLayout(int64_t rank);

  /// For a slice only the graph's return reads, keeping a range of one
  /// axis (the kept positions after moveRowSelections, or any other): the
  /// computed tensor it reads, and the range in that tensor's planned
  /// dimensions; nullopt for any other slice.
  std::optional<std::pair<Value, tfm::AxisRange>> keptRows(tfm::SliceOp slice);

  /// Whether `v` stays on the host: arguments, weights, constants, views
  /// of them, a range of one axis of a weight or constant, and embedding
  /// gathers of a weight table by a graph input.
  bool isHostValue(Value v);

  /// `v` on the grid with shape `shape` in `layout`: a distribute of a host
  /// value (folding host-side transposes, and `outerPermutation` applied
  /// after them) or the mesh value computed for it.
  FailureOr<Value> materialize(Operation *user, Value v,
                               ArrayRef<int64_t> shape,
                               mesh::LayoutAttr layout,
                               ArrayRef<int64_t> outerPermutation = {});

  /// Whether mesh.relayout turns `from` into `to`: one dimension's block
  /// count differs, every other split keeps one block per core.
  bool isRelayout(RankedTensorType from, RankedTensorType to);

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
                            bool transposeRhs);
  /// A mesh.gemm with the --gemm algorithm planned for `op`'s result.
  mesh::GemmOp planGemm(Operation *op, RankedTensorType resultType, Value lhs,
                        Value rhs);

  /// The allreduce of a GEMV, rms_norm or attention (decode, or prefill
  /// over lanes): a K-tree with
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
                                mesh::MapKind kind);

  /// The shape a tfm value has on the grid: leading unit dimensions
  /// dropped down to a matrix.
  static SmallVector<int64_t> meshShape(RankedTensorType type);

  /// The grid axis splitting a distributed value's dimensions after the
  /// first (the vector of a decode step), or kNone.
  static int64_t splitAxis(Value planned);

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
  /// A decode projection's input into heads or lanes: the vector [1, k]
  /// split along y (an error when a previous GEMV left it along x).
  FailureOr<Value> headProjectionInput(Operation *op, Value lhs, int64_t k);
  LogicalResult planHeadGemm(Operation *op, Value lhs, Value weight,
                             bool transposeWeight);
  LogicalResult planView(Operation *op);
  /// heads + bias (a vector of the projection's outputs), the bias placed
  /// in the heads' order.
  LogicalResult planHeadBias(tfm::AddOp op, Value heads, Value bias);
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

  //===--------------------------------------------------------------------===//
  // Attention over lanes (PlanLanes.cpp)
  //===--------------------------------------------------------------------===//

  /// How one attention's heads are split into lanes: a lane is a pair of a
  /// KV head's dimensions, (d, d + D/2) for rotate-half RoPE and (2i,
  /// 2i + 1) otherwise, so RoPE stays local.
  struct LaneForm {
    int64_t kvHeads = 0, headDim = 0;
    bool rotateHalf = false;
    /// The parts of whole KV heads the lanes' blocks are balanced in (one
    /// lane segment each); 0 keeps them ceil-sized.
    int64_t balancedParts = 0;
    int64_t lanes() const { return kvHeads * headDim / 2; }
  };
  /// `layout` with its lane dimension `d` split as `form` says.
  mesh::LayoutAttr laneLayout(mesh::LayoutAttr layout, size_t d,
                              const LaneForm &form) {
    return form.balancedParts > 0
               ? layout.withBalanced(d, true, form.balancedParts)
               : layout;
  }
  /// A dimension of a host tensor's view, named for matching source and
  /// target: 'e' the projection's other side, 'h' KV heads, 'g' query heads
  /// per KV head, 'i' lane within a head, 'u' which of its pair, 'b' a
  /// unit batch, 'p' positions, 'r' rope rows.
  struct NamedDim {
    char name;
    int64_t size;
  };
  /// A projection's weight into lanes (q, k, v) or out of them (o): its
  /// sizes, the lane form, the query heads per KV head, and its named
  /// dimensions as stored and in lane order.
  struct LaneWeight {
    int64_t k = 0, n = 0, group = 0;
    bool intoLanes = false;
    LaneForm form;
    SmallVector<NamedDim> stored, laneSide;
    NamedDim other{'e', 0};
  };
  FailureOr<LaneWeight> laneWeight(Operation *op, Value lhs, Value weight,
                                   bool transposeWeight);
  /// A prefill projection into or out of lanes: MeshGEMM with the weight's
  /// columns (rows) placed in lane order.
  LogicalResult planLaneGemm(Operation *op, Value lhs, Value weight,
                             bool transposeWeight);
  /// The head dimension of a lane form stored in graph order: [u, i]
  /// (rotate-half) or [i, u].
  static SmallVector<NamedDim> headDims(const LaneForm &form);
  /// Places host value `v`, viewed row-major as `stored`, on the grid as
  /// `target` (the same names; a size-1 stored dimension broadcasts)
  /// reshaped to `shape` in `layout`.
  mesh::DistributeOp placeNamed(Location loc, Value v,
                                ArrayRef<NamedDim> stored,
                                ArrayRef<NamedDim> target,
                                ArrayRef<int64_t> shape,
                                mesh::LayoutAttr layout);
  /// Whether an attention on this grid splits its heads into lanes: the
  /// grid is wider than its KV heads (and, in prefill, the plan chose
  /// lanes).
  std::optional<LaneForm> laneFormOf(tfm::AttentionOp attention);
  /// A GEMV into lanes (q, k, v: [1, lanes, G * 2]) or out of them (the
  /// output projection).
  LogicalResult planLaneGemv(Operation *op, Value lhs, Value weight,
                             bool transposeWeight);
  // Lane forms are taken by value: the callers find them in laneValues,
  // which these insert into.
  LogicalResult planLaneRope(tfm::RopeOp op, LaneForm form);
  LogicalResult planLaneConcat(tfm::ConcatOp op, LaneForm form);
  /// The host's view reading back a cache of lanes (decode) or keys or
  /// values over lanes (prefill) in graph order.
  void collectLanes(mesh::CollectOp collect, const LaneForm &form,
                    bool headsFirst);
  /// Whether a planned value is a prefill attention's keys or values.
  bool isPrefillKv(Value planned);

  LogicalResult planEmbed(tfm::EmbedOp op);
  LogicalResult planReturn(func::ReturnOp op);

  func::FuncOp func;
  mesh::GridAttr grid;
  mesh::GemmAlgorithm gemmAlgorithm;
  mesh::AllreduceAlgorithm allreduce;
  /// K of every K-tree, or 0: one K for all, chosen by mesh-choose-ktree.
  int64_t ktreeK;
  /// Element type of every distributed tensor (--dtype).
  Type elementType;
  /// Whether prefill attention on a grid wider than the KV heads splits
  /// them into lanes (decode always does).
  bool prefillLanes;
  OpBuilder builder;
  /// The mesh value computed for each tfm value.
  DenseMap<Value, Value> plannedValues;
  /// Relayouts made so far, by planned value and the layout made.
  DenseMap<std::pair<Value, Type>, Value> relayouts;
  /// Projections attention reads as heads: their KV head count.
  DenseMap<Operation *, int64_t> headProjections;
  /// Projections attention reads as lanes.
  DenseMap<Operation *, LaneForm> laneProjections;
  /// Planned (mesh) values in lane form.
  DenseMap<Value, LaneForm> laneValues;
  /// tfm values of prefill heads whose graph order is heads before
  /// positions ([1, KVH, L, D]); the plan keeps [L, KVH, D].
  llvm::DenseSet<Value> headsFirst;
};

/// Whether `v` is a weight or constant, or a range of one axis of one (a
/// fused projection's part, tfm.slice).
bool isParameterOrPart(Value v);

/// Drops the slices of `func` that keep every element and moves each
/// range of positions of a computed tensor past the projections and norms
/// that read it (PlanRowSelections.cpp), so that the graph's return reads
/// it (Hugging Face's logits_to_keep=1).
void moveRowSelections(func::FuncOp func);

/// Makes each distribute of a weight's part (a tfm.slice the planner
/// placed, through its views) read the whole weight with an index map
/// instead (PlanWeightParts.cpp); an error where the plan's view of the
/// part cannot be read that way.
LogicalResult readWeightParts(func::FuncOp func);

} // namespace wafer::planning

#endif // WAFER_PASSES_CONVERSION_TFMTOMESHPLANNER_H
