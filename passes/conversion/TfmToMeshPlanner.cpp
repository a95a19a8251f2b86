//===- TfmToMeshPlanner.cpp - Products, maps and outputs on a grid --------===//
#include "TfmToMeshPlanner.h"

#define DEBUG_TYPE "convert-tfm-to-mesh"

using namespace mlir;
using namespace wafer;

namespace wafer::planning {

LogicalResult Planner::run() {
  moveRowSelections(func);
  findHeadProjections();
  SmallVector<Operation *> worklist;
  for (Operation &op : func.getBody().front())
    worklist.push_back(&op);
  // No plan runs a softmax alone: one left over is an attention written in
  // a form tfm-raise-transformer does not recognise, and the ops around it
  // (the head reshapes) would fail first, far from the cause. A mask too
  // large to fold also leaves its attention unraised; noPlan names that.
  for (Operation *op : worklist) {
    if (unfoldedConstantType(op))
      break;
    if (isa<tfm::SoftmaxOp>(op))
      return op->emitError(
          "convert-tfm-to-mesh: this softmax is not part of an attention "
          "tfm-raise-transformer recognises: softmax over the last axis of "
          "q k^T (scaled by constants, with a constant causal mask added or "
          "applied by a where) times v, each [batch, heads, positions, head "
          "dim]");
  }
  for (Operation *op : worklist) {
    builder.setInsertionPoint(op);
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<tfm::MatMulOp>([&](auto op) { return planMatMul(op); })
            .Case<tfm::LinearOp>([&](auto op) { return planLinear(op); })
            .Case<tfm::AddOp>(
                [&](auto op) { return planMap(op, mesh::MapKind::add); })
            .Case<tfm::MulOp>(
                [&](auto op) { return planMap(op, mesh::MapKind::mul); })
            .Case<tfm::TransposeOp, tfm::ReshapeOp>(
                [&](auto op) { return planView(op); })
            .Case<tfm::RmsNormOp>([&](auto op) { return planRmsNorm(op); })
            .Case<tfm::SwigluOp>([&](auto op) { return planSwiglu(op); })
            .Case<tfm::RopeOp>([&](auto op) { return planRope(op); })
            .Case<tfm::ConcatOp>([&](auto op) { return planConcat(op); })
            .Case<tfm::AttentionOp>([&](auto op) { return planAttention(op); })
            .Case<tfm::WeightOp, tfm::ConstantOp>(
                [&](auto) { return success(); })
            .Case<tfm::SliceOp>([&](auto op) {
              return isHostValue(op) || keptRows(op).has_value() ? success()
                                                                 : noPlan(op);
            })
            .Case<tfm::EmbedOp>([&](auto op) { return planEmbed(op); })
            .Case<func::ReturnOp>([&](auto op) { return planReturn(op); })
            .Default([&](Operation *op) { return noPlan(op); });
    if (failed(result))
      return failure();
    LLVM_DEBUG(traceOp(op));
  }
  if (failed(readWeightParts(func)))
    return failure();
  // Compute ops are replaced; host ops stay only while distributes use them.
  for (Operation *op : llvm::reverse(worklist))
    if (!isa<func::ReturnOp>(op) && op->use_empty())
      op->erase();
  // So do the planner's views of weights' parts that readWeightParts
  // replaced (users come after what they use).
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
    if (isa<tfm::ReshapeOp, tfm::SliceOp>(op) && op.use_empty())
      op.erase();
  return success();
}

void Planner::traceOp(Operation *op) {
  for (Value result : op->getResults())
    if (Value planned = plannedValues.lookup(result))
      llvm::dbgs() << "convert-tfm-to-mesh: " << op->getName() << " at "
                   << op->getLoc() << " -> " << planned.getType() << "\n";
}

RankedTensorType Planner::unfoldedConstantType(Operation *op) {
  if (isa<tfm::ConstantOp, tfm::WeightOp>(op))
    return RankedTensorType();
  auto type = op->getNumResults() == 1
                  ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                  : RankedTensorType();
  std::optional<int64_t> count =
      type ? checkedElementCount(type.getShape()) : std::nullopt;
  bool constantInputs = llvm::all_of(op->getOperands(), [](Value v) {
    return v.getDefiningOp<tfm::ConstantOp>();
  });
  if (type && constantInputs &&
      (!count || *count > TfmFoldShapesOptions().maxElements))
    return type;
  return RankedTensorType();
}

LogicalResult Planner::noPlan(Operation *op) {
  if (RankedTensorType type = unfoldedConstantType(op))
    return op->emitError("convert-tfm-to-mesh: '")
           << op->getName() << "' computes a constant " << type
           << " larger than tfm-fold-shapes folds ("
           << TfmFoldShapesOptions().maxElements
           << " elements), and the grid does not compute it; the sequence "
              "is too long for this model's masks";
  // A model exported without its parameters has its tables as inputs.
  if (auto gather = dyn_cast<tfm::GatherOp>(op);
      gather && isa<BlockArgument>(gather->getOperand(0)) &&
      isa<FloatType>(getElementTypeOrSelf(gather->getOperand(0))))
    return op->emitError("convert-tfm-to-mesh: a gather from a graph input: "
                         "an embedding table must be an initializer (export "
                         "the model with its weights, e.g. "
                         "torch.onnx.export(export_params=True))");
  // The plans take token ids and KV caches from the graph's inputs; name
  // any other input an unplanned op reads, directly or through one-operand
  // ops (a cast of attention_mask, a reshape of position_ids).
  for (Value operand : op->getOperands()) {
    Value source = operand;
    while (Operation *def = source.getDefiningOp()) {
      if (def->getNumOperands() != 1)
        break;
      source = def->getOperand(0);
    }
    if (auto input = dyn_cast<BlockArgument>(source))
      if (auto function =
              dyn_cast<func::FuncOp>(input.getOwner()->getParentOp()))
        return op->emitError("convert-tfm-to-mesh: no mesh plan for '")
               << op->getName() << "' of graph input '"
               << tfm::inputName(function, input.getArgNumber())
               << "' (the plans read only token ids and KV caches from "
                  "graph inputs)";
  }
  return op->emitError("convert-tfm-to-mesh: no mesh plan for '")
         << op->getName() << "'";
}

RankedTensorType Planner::distributedType(ArrayRef<int64_t> shape,
                                          mesh::LayoutAttr layout) {
  for (auto [d, size] : llvm::enumerate(shape))
    if (layout.isBalanced(d) && size % layout.getBlocks()[d] == 0)
      layout = layout.withBalanced(d, false);
  return RankedTensorType::get(shape, elementType, layout);
}

mesh::LayoutAttr Planner::defaultLayout(int64_t rank) {
  SmallVector<int64_t> axes(rank, kNone), blocks(rank, 1);
  if (rank >= 1) {
    axes[rank - 1] = kX;
    blocks[rank - 1] = grid.getWidth();
  }
  if (rank >= 2) {
    axes[rank - 2] = kY;
    blocks[rank - 2] = grid.getHeight();
  }
  SmallVector<bool> balanced(rank, false);
  if (rank >= 1)
    balanced.back() = true;
  return layout(axes, blocks, balanced);
}

bool isParameterOrPart(Value v) {
  if (auto slice = v.getDefiningOp<tfm::SliceOp>()) {
    if (!tfm::axisRangeOf(slice))
      return false;
    v = slice.getInput();
  }
  return isa_and_nonnull<tfm::WeightOp, tfm::ConstantOp>(v.getDefiningOp());
}

bool Planner::isHostValue(Value v) {
  if (isa<BlockArgument>(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (isa<tfm::WeightOp, tfm::ConstantOp>(def))
    return true;
  if (isa<tfm::TransposeOp, tfm::ReshapeOp>(def))
    return isHostValue(def->getOperand(0));
  // A fused projection's part: read from the whole weight (readWeightParts).
  if (isa<tfm::SliceOp>(def))
    return isParameterOrPart(v);
  // The host places embedding rows (core.input gather_ids).
  if (auto embed = dyn_cast<tfm::EmbedOp>(def))
    return isa<BlockArgument>(embed.getIds()) &&
           embed.getTable().getDefiningOp<tfm::WeightOp>();
  return false;
}

LogicalResult Planner::planEmbed(tfm::EmbedOp op) {
  // Nothing runs on the grid: the host gathers the rows as it places them.
  if (!isHostValue(op.getResult()))
    return op.emitError("convert-tfm-to-mesh: an embedding is gathered by "
                        "the host, from a weight table (tfm.weight) by "
                        "token ids that are a graph input");
  // Every later op would fail on the batch dimension, far from the cause.
  ArrayRef<int64_t> ids = op.getIds().getType().getShape();
  if (ids.size() >= 2 && ids[0] > 1)
    return op.emitError("convert-tfm-to-mesh: token ids of batch ")
           << ids[0] << ": the mesh plans run one sequence at a time "
           << "(batch 1)";
  return success();
}

FailureOr<Value> Planner::materialize(Operation *user, Value v,
                                      ArrayRef<int64_t> shape,
                                      mesh::LayoutAttr layout,
                                      ArrayRef<int64_t> outerPermutation) {
  auto type = distributedType(shape, layout);
  if (isHostValue(v)) {
    SmallVector<int64_t> permutation(outerPermutation);
    Value source = v;
    // Unit dimensions the plan drops are dropped on the host too.
    auto sourceType = cast<RankedTensorType>(v.getType());
    if (outerPermutation.empty() &&
        sourceType.getRank() > int64_t(shape.size()) &&
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
    auto distribute = builder.create<mesh::DistributeOp>(
        user->getLoc(), type, source);
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
  if (isRelayout(cast<RankedTensorType>(planned.getType()), type)) {
    // One relayout serves every op that needs it (q, k and v read the
    // same norm).
    Value &relayout = relayouts[{planned, type}];
    if (!relayout)
      relayout =
          builder
              .create<mesh::RelayoutOp>(user->getLoc(), type, planned, nullptr)
              .getResult();
    return relayout;
  }
  return user->emitError("convert-tfm-to-mesh: operand is laid out as ")
         << planned.getType() << " but this op needs " << type
         << "; only re-blocking one split dimension is supported";
}

bool Planner::isRelayout(RankedTensorType from, RankedTensorType to) {
  mesh::LayoutAttr a = mesh::getLayout(from), b = mesh::getLayout(to);
  if (from.getShape() != to.getShape() ||
      from.getElementType() != to.getElementType() || !a || !b ||
      a.getAxes() != b.getAxes())
    return false;
  for (size_t d = 0; d < a.getAxes().size(); ++d)
    if (!mesh::sameBlocks(from, d, to, d))
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

LogicalResult Planner::planProduct(Operation *op, Value lhsValue,
                                   Value rhsValue, bool transposeRhs) {
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
                           layout({kNone, in}, {1, inBlocks}, {false, true}));
    if (failed(lhs))
      return failure();
    auto rhs = materialize(
        op, rhsValue, {k, n},
        layout({in, out}, {inBlocks, outBlocks}, {true, true}), rhsPermutation);
    if (failed(rhs))
      return failure();
    auto resultType = distributedType(
        {1, n}, layout({kNone, out}, {1, outBlocks}, {false, true}));
    auto gemv =
        builder.create<mesh::GemvOp>(op->getLoc(), resultType, *lhs, *rhs,
                                     allreduceAttr(), nullptr, nullptr);
    plannedValues[op->getResult(0)] = gemv.getResult();
    return success();
  }
  int64_t ring = mesh::GemmOp::kBlocks(h, w);
  auto lhs = materialize(op, lhsValue, {m, k},
                         layout({kY, kX}, {h, ring}, {false, true}));
  if (failed(lhs))
    return failure();
  auto rhs =
      materialize(op, rhsValue, {k, n},
                  layout({kY, kX}, {ring, w}, {true, true}), rhsPermutation);
  if (failed(rhs))
    return failure();
  auto resultType =
      distributedType({m, n}, layout({kY, kX}, {h, w}, {false, true}));
  planGemm(op, resultType, *lhs, *rhs);
  return success();
}

mesh::GemmOp Planner::planGemm(Operation *op, RankedTensorType resultType,
                               Value lhs, Value rhs) {
  auto gemm = builder.create<mesh::GemmOp>(
      op->getLoc(), resultType, lhs, rhs,
      mesh::GemmAlgorithmAttr::get(op->getContext(), gemmAlgorithm), nullptr);
  plannedValues[op->getResult(0)] = gemm.getResult();
  return gemm;
}

LogicalResult Planner::planElementwise(Operation *op, Value lhsValue,
                                       Value rhsValue, mesh::MapKind kind) {
  // A bias on a projection into attention heads.
  if (auto add = dyn_cast<tfm::AddOp>(op); add && kind == mesh::MapKind::add)
    for (auto [heads, bias] : {std::pair(lhsValue, rhsValue),
                               std::pair(rhsValue, lhsValue)})
      if (isHostValue(bias) && isHeadForm(heads))
        return planHeadBias(add, heads, bias);
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
  // A decode vector made of host values alone (a scaled embedding) lies
  // along y, where the host places a decode vector for rms_norm.
  if (!chosen && shape.size() == 2 && shape[0] == 1)
    chosen = layout({kNone, kY}, {1, grid.getHeight()}, {false, true});
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

SmallVector<int64_t> Planner::meshShape(RankedTensorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  while (shape.size() > 2 && shape.front() == 1)
    shape = shape.drop_front();
  return SmallVector<int64_t>(shape);
}

int64_t Planner::splitAxis(Value planned) {
  mesh::LayoutAttr layout = mesh::getLayout(planned.getType());
  if (!layout)
    return kNone;
  for (int64_t axis : layout.getAxes().drop_front())
    if (axis != kNone)
      return axis;
  return kNone;
}

std::optional<std::pair<Value, tfm::AxisRange>>
Planner::keptRows(tfm::SliceOp slice) {
  std::optional<tfm::AxisRange> range = tfm::axisRangeOf(slice);
  Value whole = slice.getInput();
  if (!range || isHostValue(whole) ||
      !llvm::all_of(slice->getUsers(),
                    [](Operation *user) { return isa<func::ReturnOp>(user); }))
    return std::nullopt;
  // Only of a tensor the host reads back as planned, leading unit
  // dimensions aside.
  Value planned = plannedValues.lookup(whole);
  if (!planned)
    return std::nullopt;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(whole.getType()).getShape();
  ArrayRef<int64_t> plannedShape =
      cast<RankedTensorType>(planned.getType()).getShape();
  int64_t dropped = int64_t(shape.size()) - int64_t(plannedShape.size());
  if (dropped < 0 || range->axis < dropped ||
      shape.drop_front(dropped) != plannedShape ||
      llvm::any_of(shape.take_front(dropped),
                   [](int64_t d) { return d != 1; }) ||
      headsFirst.contains(whole) || laneValues.count(planned) ||
      planned.getDefiningOp<mesh::KvAppendOp>())
    return std::nullopt;
  range->axis -= dropped;
  return std::make_pair(whole, *range);
}

LogicalResult Planner::planReturn(func::ReturnOp op) {
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (isHostValue(v))
      continue;
    // A range the graph keeps of a computed tensor: read back from all of
    // it.
    if (auto slice = v.getDefiningOp<tfm::SliceOp>()) {
      auto [whole, range] = *keptRows(slice);
      auto collect = builder.create<mesh::CollectOp>(
          op.getLoc(), v.getType(), plannedValues.lookup(whole));
      collect.setIndexDim(range.axis);
      collect.setIndexMap(llvm::to_vector(llvm::seq(range.start, range.end)));
      operand.set(collect.getResult());
      continue;
    }
    auto collect = builder.create<mesh::CollectOp>(op.getLoc(), v.getType(),
                                                   plannedValues.lookup(v));
    // Prefill keys and values are planned positions first; the graph
    // returns them heads first.
    if (headsFirst.contains(v))
      collect.setPermutation(ArrayRef<int64_t>{1, 0, 2});
    // A KV cache returns its positions out of its slots.
    auto append = collect.getSource().getDefiningOp<mesh::KvAppendOp>();
    if (append) {
      collect.setIndexDim(2);
      collect.setIndexMap(getKvCacheLayout(append).presentSlots());
    }
    if (auto lanes = laneValues.find(collect.getSource());
        lanes != laneValues.end()) {
      if (!append && !isPrefillKv(collect.getSource()))
        return op.emitError("convert-tfm-to-mesh: only the keys and values "
                            "of attention lanes can be returned");
      collectLanes(collect, lanes->second, headsFirst.contains(v));
    }
    operand.set(collect.getResult());
  }
  return success();
}

} // namespace wafer::planning
