//===- PlanDecode.cpp - The decode plan of a raised LLaMA ---------------===//
//
// Decode (one token): activations are vectors, [1, E] split along y and
// replicated along x, or split along x after a GEMV; chained GEMVs
// alternate orientation, so no transpose is ever needed. Attention works
// on heads grouped by KV head: q is [1, KVH, G * D] and the caches
// [1, KVH, L, D], KV heads along x and cache positions along y (paper
// sections 4.2-4.4).
//
//===----------------------------------------------------------------------===//
#include "TfmToMeshPlanner.h"

using namespace mlir;
using namespace wafer;

namespace wafer::planning {

/// Looks through the ops between a projection and attention.
static Operation *projectionBehind(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tfm::LinearOp, tfm::MatMulOp>(def))
      return def;
    if (auto concat = dyn_cast<tfm::ConcatOp>(def)) {
      if (concat.getInputs().size() != 2)
        return nullptr;
      v = concat.getInputs()[1];
      continue;
    }
    if (!isa<tfm::ReshapeOp, tfm::TransposeOp, tfm::RopeOp>(def))
      return nullptr;
    v = def->getOperand(0);
  }
  return nullptr;
}

void Planner::findHeadProjections() {
  func.walk([&](tfm::AttentionOp attention) {
    int64_t kvHeads = attention.getNumKvHeads();
    for (Value operand : attention->getOperands())
      if (Operation *projection = projectionBehind(operand))
        headProjections[projection] = kvHeads;
  });
}

bool Planner::isHeadForm(Value v) {
  if (isHostValue(v))
    return false;
  Value planned = plannedValues.lookup(v);
  auto type = cast<RankedTensorType>(planned.getType());
  mesh::LayoutAttr layout = mesh::getLayout(type);
  return type.getRank() == 3 && layout.getAxes()[1] == kX &&
         layout.getAxes()[2] == kNone;
}

Value Planner::distributeWeight(Location loc, Value weight,
                                ArrayRef<int64_t> sourceShape,
                                ArrayRef<int64_t> permutation,
                                ArrayRef<int64_t> shape,
                                mesh::LayoutAttr layout) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  Value source = builder.create<tfm::ReshapeOp>(
      loc, RankedTensorType::get(sourceShape, weightType.getElementType()),
      weight);
  auto distribute = builder.create<mesh::DistributeOp>(
      loc, RankedTensorType::get(shape, elementType, layout), source, nullptr);
  if (!permutation.empty())
    distribute.setPermutation(permutation);
  return distribute.getResult();
}

/// A GEMV producing heads (q, k, v projections: [1, E] along y ->
/// [1, KVH, N / KVH] along x) or consuming them (the output projection:
/// [1, KVH, X] along x -> [1, N] along y).
LogicalResult Planner::planHeadGemv(Operation *op, Value lhsValue,
                                    Value weight, bool transposeWeight) {
  if (!weight.getDefiningOp<tfm::WeightOp>())
    return op->emitError("convert-tfm-to-mesh: a projection into or out of "
                         "attention heads needs a weight operand");
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t k = weightType.getDimSize(transposeWeight ? 1 : 0),
          n = weightType.getDimSize(transposeWeight ? 0 : 1);
  int64_t h = grid.getHeight(), w = grid.getWidth();
  Location loc = op->getLoc();
  Value lhs, rhs;
  RankedTensorType resultType;
  if (isHeadForm(lhsValue)) {
    // Output projection: K = KVH * X split by heads along x.
    lhs = plannedValues.lookup(lhsValue);
    ArrayRef<int64_t> heads = cast<RankedTensorType>(lhs.getType()).getShape();
    int64_t kvHeads = heads[1], x = heads[2];
    rhs = transposeWeight
              ? distributeWeight(loc, weight, {n, kvHeads, x}, {1, 2, 0},
                                 {kvHeads, x, n},
                                 layout({kX, kNone, kY}, {w, 1, h}))
              : distributeWeight(loc, weight, {kvHeads, x, n}, {},
                                 {kvHeads, x, n},
                                 layout({kX, kNone, kY}, {w, 1, h}));
    resultType = RankedTensorType::get({1, n}, elementType,
                                       layout({kNone, kY}, {1, h}));
  } else {
    int64_t kvHeads = headProjections.lookup(op);
    if (n % kvHeads != 0)
      return op->emitError("convert-tfm-to-mesh: ")
             << n << " outputs do not split into " << kvHeads << " KV heads";
    if (!isHostValue(lhsValue) &&
        splitAxis(plannedValues.lookup(lhsValue)) != kY)
      return op->emitError("convert-tfm-to-mesh: a projection into heads "
                           "needs its input split along y");
    auto planned = materialize(op, lhsValue, {1, k},
                               layout({kNone, kY}, {1, h}));
    if (failed(planned))
      return failure();
    lhs = *planned;
    int64_t x = n / kvHeads;
    rhs = transposeWeight
              ? distributeWeight(loc, weight, {kvHeads, x, k}, {2, 0, 1},
                                 {k, kvHeads, x},
                                 layout({kY, kX, kNone}, {h, w, 1}))
              : distributeWeight(loc, weight, {k, kvHeads, x}, {},
                                 {k, kvHeads, x},
                                 layout({kY, kX, kNone}, {h, w, 1}));
    resultType = RankedTensorType::get(
        {1, kvHeads, x}, elementType, layout({kNone, kX, kNone}, {1, w, 1}));
  }
  int64_t reduced = isHeadForm(lhsValue) ? w : h;
  int64_t outBlocks = isHeadForm(lhsValue) ? h : w;
  auto gemv = builder.create<mesh::GemvOp>(
      loc, resultType, lhs, rhs, allreduceFor(reduced, n, outBlocks), nullptr,
      nullptr);
  plannedValues[op->getResult(0)] = gemv.getResult();
  return success();
}

/// Reshapes and transposes of heads only rename them: the plan's head form
/// already is the layout attention wants.
LogicalResult Planner::planView(Operation *op) {
  Value input = op->getOperand(0);
  if (isHostValue(input))
    return success();
  if (isHeadForm(input) || meshShape(cast<RankedTensorType>(
                               op->getResult(0).getType())) ==
                               meshShape(cast<RankedTensorType>(
                                   input.getType()))) {
    plannedValues[op->getResult(0)] = plannedValues.lookup(input);
    return success();
  }
  return op->emitError("convert-tfm-to-mesh: ")
         << op->getName()
         << " of a computed tensor is not supported by the plan (only "
            "attention heads and unit dimensions)";
}

LogicalResult Planner::planRmsNorm(tfm::RmsNormOp op) {
  SmallVector<int64_t> shape =
      meshShape(cast<RankedTensorType>(op.getInput().getType()));
  if (shape.size() != 2 || shape[0] != 1)
    return op.emitError("convert-tfm-to-mesh: rms_norm of ")
           << shape[0] << " rows (prefill) is not supported yet";
  int64_t h = grid.getHeight(), w = grid.getWidth();
  // Normalise where the vector is; a host input goes along y.
  bool alongX = !isHostValue(op.getInput()) &&
                splitAxis(plannedValues.lookup(op.getInput())) == kX;
  int64_t axis = alongX ? kX : kY, blocks = alongX ? w : h;
  auto input = materialize(op, op.getInput(), shape,
                           layout({kNone, axis}, {1, blocks}));
  if (failed(input))
    return failure();
  auto weight =
      materialize(op, op.getWeight(), {shape[1]}, layout({axis}, {blocks}));
  if (failed(weight))
    return failure();
  auto norm = builder.create<mesh::RmsNormOp>(
      op.getLoc(), input->getType(), *input, *weight, op.getEpsilonAttr(),
      allreduceFor(blocks, 1, 1), nullptr, nullptr);
  plannedValues[op.getResult()] = norm.getResult();
  return success();
}

LogicalResult Planner::planSwiglu(tfm::SwigluOp op) {
  return planElementwise(op, op.getGate(), op.getUp(),
                         mesh::MapKind::swiglu);
}

LogicalResult Planner::planRope(tfm::RopeOp op) {
  if (op.getInterleaved())
    return op.emitError("convert-tfm-to-mesh: interleaved RoPE is not "
                        "supported yet (rotate-half only)");
  if (!isHeadForm(op.getInput()))
    return op.emitError("convert-tfm-to-mesh: rope is planned only on the "
                        "heads of a decode step");
  Value input = plannedValues.lookup(op.getInput());
  auto cosType = cast<RankedTensorType>(op.getCos().getType());
  int64_t dim = cosType.getShape().back();
  if (cosType.getNumElements() != dim)
    return op.emitError("convert-tfm-to-mesh: rope factors of more than one "
                        "position (prefill) are not supported yet");
  mesh::LayoutAttr whole = layout({kNone, kNone}, {1, 1});
  auto cos = materialize(op, op.getCos(), {1, dim}, whole);
  auto sin = materialize(op, op.getSin(), {1, dim}, whole);
  if (failed(cos) || failed(sin))
    return failure();
  auto rope = builder.create<mesh::RopeOp>(op.getLoc(), input.getType(),
                                           input, *cos, *sin,
                                           builder.getI64IntegerAttr(dim));
  plannedValues[op.getResult()] = rope.getResult();
  return success();
}

/// concat(past, new) along the positions: the past is placed into the
/// cache of the present length and the new token's row written into it.
LogicalResult Planner::planConcat(tfm::ConcatOp op) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  if (op.getInputs().size() != 2 || type.getRank() != 4 || op.getAxis() != 2 ||
      !isa<BlockArgument>(op.getInputs()[0]) ||
      !isHeadForm(op.getInputs()[1]))
    return op.emitError("convert-tfm-to-mesh: concat is planned only as the "
                        "KV cache append of a decode step (past input, new "
                        "heads, along positions)");
  int64_t h = grid.getHeight(), w = grid.getWidth();
  auto cacheType = RankedTensorType::get(
      type.getShape(), elementType,
      layout({kNone, kX, kY, kNone}, {1, w, h, 1}));
  Value past = op.getInputs()[0];
  auto cache = builder.create<mesh::DistributeOp>(op.getLoc(), cacheType, past,
                                                  nullptr);
  cache.setPadded(true);
  int64_t position = cast<RankedTensorType>(past.getType()).getDimSize(2);
  auto append = builder.create<mesh::KvAppendOp>(
      op.getLoc(), cacheType, cache, plannedValues.lookup(op.getInputs()[1]),
      builder.getI64IntegerAttr(position));
  plannedValues[op.getResult()] = append.getResult();
  return success();
}

LogicalResult Planner::planAttention(tfm::AttentionOp op) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  if (query.getDimSize(2) != 1)
    return op.emitError("convert-tfm-to-mesh: attention over ")
           << query.getDimSize(2)
           << " queries (prefill) is not supported yet";
  if (!isHeadForm(op.getQuery()) || isHostValue(op.getKey()) ||
      isHostValue(op.getValue()))
    return op.emitError("convert-tfm-to-mesh: attention needs planned query "
                        "heads and KV caches");
  Value q = plannedValues.lookup(op.getQuery()),
        k = plannedValues.lookup(op.getKey()),
        v = plannedValues.lookup(op.getValue());
  int64_t length = cast<RankedTensorType>(k.getType()).getDimSize(2);
  int64_t group = cast<RankedTensorType>(q.getType()).getDimSize(2);
  auto attention = builder.create<mesh::AttentionOp>(
      op.getLoc(), q.getType(), q, k, v, op.getScaleAttr(),
      builder.getI64IntegerAttr(length),
      allreduceFor(grid.getHeight(), group, 1), nullptr, nullptr);
  plannedValues[op.getResult()] = attention.getResult();
  return success();
}

} // namespace wafer::planning
