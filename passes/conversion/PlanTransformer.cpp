//===- PlanTransformer.cpp - Prefill and decode plans of a raised LLaMA --===//
//
// Prefill (L tokens): activations [L, E] are split on both axes
// ([y:H, x:W], the paper's L_y E_x) and projections are MeshGEMMs; heads
// are [L, KVH, X] with the KV heads along x, so RoPE is local and
// attention shifts keys and values along y (no transpose).
//
// Decode (one token): activations are vectors, [1, E] split along y and
// replicated along x, or split along x after a GEMV; chained GEMVs
// alternate orientation, so no transpose is ever needed. Attention works
// on heads grouped by KV head: q is [1, KVH, G * D] and the caches
// [1, KVH, L, D], KV heads along x and cache positions along y (paper
// sections 4.1-4.4).
//
//===----------------------------------------------------------------------===//
#include "TfmToMeshPlanner.h"
#include "wafer/Support/KvCache.h"

using namespace mlir;
using namespace wafer;

namespace wafer::planning {

/// Whether `v` is a bias: a weight or constant vector, or a part of one.
static bool isBias(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank() == 1 &&
         isParameterOrPart(v);
}

/// Looks through the ops between a projection and attention.
static Operation *projectionBehind(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tfm::LinearOp, tfm::MatMulOp>(def))
      return def;
    // A projection's bias (QWen2's q, k and v).
    if (auto add = dyn_cast<tfm::AddOp>(def)) {
      if (isBias(add.getLhs()) == isBias(add.getRhs()))
        return nullptr;
      v = isBias(add.getLhs()) ? add.getRhs() : add.getLhs();
      continue;
    }
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
    std::optional<LaneForm> lanes = laneFormOf(attention);
    for (Value operand : attention->getOperands())
      if (Operation *projection = projectionBehind(operand)) {
        headProjections[projection] = kvHeads;
        if (lanes)
          laneProjections[projection] = *lanes;
      }
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

FailureOr<std::pair<int64_t, int64_t>>
Planner::projectionSizes(Operation *op, Value weight, bool transposed) {
  // The importer keeps small initializers as constants: placed alike, and
  // so are the parts of a fused projection's weight.
  if (!isParameterOrPart(weight))
    return op->emitError("convert-tfm-to-mesh: a projection into or out of "
                         "attention heads needs a weight operand");
  auto type = cast<RankedTensorType>(weight.getType());
  return std::make_pair(type.getDimSize(transposed ? 1 : 0),
                        type.getDimSize(transposed ? 0 : 1));
}

Value Planner::placeHeadWeight(Location loc, Value weight, bool transposed,
                               bool splitInput, int64_t kvHeads, int64_t x,
                               mesh::LayoutAttr layout) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t other = weightType.getDimSize(splitInput == transposed ? 0 : 1);
  // The stored weight's row-major view with the split dimension as
  // [kvHeads, x], and the permutation that makes it [K..., N...].
  SmallVector<int64_t> view, permutation;
  if (!transposed)
    view = splitInput ? SmallVector<int64_t>{kvHeads, x, other}
                      : SmallVector<int64_t>{other, kvHeads, x};
  else if (splitInput)
    view = {other, kvHeads, x}, permutation = {1, 2, 0};
  else
    view = {kvHeads, x, other}, permutation = {2, 0, 1};
  SmallVector<int64_t> shape = splitInput
                                   ? SmallVector<int64_t>{kvHeads, x, other}
                                   : SmallVector<int64_t>{other, kvHeads, x};
  Value source = builder.create<tfm::ReshapeOp>(
      loc, RankedTensorType::get(view, weightType.getElementType()), weight);
  auto distribute = builder.create<mesh::DistributeOp>(
      loc, distributedType(shape, layout), source);
  if (!permutation.empty())
    distribute.setPermutation(permutation);
  return distribute.getResult();
}

FailureOr<Value> Planner::headProjectionInput(Operation *op, Value lhs,
                                              int64_t k) {
  if (!isHostValue(lhs) && splitAxis(plannedValues.lookup(lhs)) != kY)
    return op->emitError("convert-tfm-to-mesh: a projection into heads "
                         "needs its input split along y");
  return materialize(op, lhs, {1, k},
                     layout({kNone, kY}, {1, grid.getHeight()}, {false, true}));
}

/// A GEMV producing heads (q, k, v projections: [1, E] along y ->
/// [1, KVH, N / KVH] along x) or consuming them (the output projection:
/// [1, KVH, X] along x -> [1, N] along y).
LogicalResult Planner::planHeadGemv(Operation *op, Value lhsValue,
                                    Value weight, bool transposeWeight) {
  FailureOr<std::pair<int64_t, int64_t>> sizes =
      projectionSizes(op, weight, transposeWeight);
  if (failed(sizes))
    return failure();
  auto [k, n] = *sizes;
  if (laneProjections.count(op) ||
      (isHeadForm(lhsValue) &&
       laneValues.count(plannedValues.lookup(lhsValue))))
    return planLaneGemv(op, lhsValue, weight, transposeWeight);
  int64_t h = grid.getHeight(), w = grid.getWidth();
  Location loc = op->getLoc();
  Value lhs, rhs;
  RankedTensorType resultType;
  if (isHeadForm(lhsValue)) {
    // Output projection: K = KVH * X split by heads along x.
    lhs = plannedValues.lookup(lhsValue);
    ArrayRef<int64_t> heads = cast<RankedTensorType>(lhs.getType()).getShape();
    int64_t kvHeads = heads[1], x = heads[2];
    rhs = placeHeadWeight(
        loc, weight, transposeWeight, /*splitInput=*/true, kvHeads, x,
        layout({kX, kNone, kY}, {w, 1, h}, {false, false, true}));
    resultType =
        distributedType({1, n}, layout({kNone, kY}, {1, h}, {false, true}));
  } else {
    int64_t kvHeads = headProjections.lookup(op);
    if (n % kvHeads != 0)
      return op->emitError("convert-tfm-to-mesh: ")
             << n << " outputs do not split into " << kvHeads << " KV heads";
    FailureOr<Value> planned = headProjectionInput(op, lhsValue, k);
    if (failed(planned))
      return failure();
    lhs = *planned;
    int64_t x = n / kvHeads;
    rhs = placeHeadWeight(
        loc, weight, transposeWeight, /*splitInput=*/false, kvHeads, x,
        layout({kY, kX, kNone}, {h, w, 1}, {true, false, false}));
    resultType = RankedTensorType::get(
        {1, kvHeads, x}, elementType, layout({kNone, kX, kNone}, {1, w, 1}));
  }
  auto gemv = builder.create<mesh::GemvOp>(loc, resultType, lhs, rhs,
                                          allreduceAttr(), nullptr, nullptr);
  plannedValues[op->getResult(0)] = gemv.getResult();
  return success();
}

/// A GEMM producing heads (q, k, v: [L, E] -> [L, KVH, N / KVH]) or
/// consuming them (the output projection: [L, KVH, X] -> [L, N]); the head
/// dimension is split along x like a matrix's columns.
LogicalResult Planner::planHeadGemm(Operation *op, Value lhsValue,
                                    Value weight, bool transposeWeight) {
  FailureOr<std::pair<int64_t, int64_t>> sizes =
      projectionSizes(op, weight, transposeWeight);
  if (failed(sizes))
    return failure();
  auto [k, n] = *sizes;
  if (laneProjections.count(op) ||
      (isHeadForm(lhsValue) &&
       laneValues.count(plannedValues.lookup(lhsValue))))
    return planLaneGemm(op, lhsValue, weight, transposeWeight);
  int64_t m = meshShape(cast<RankedTensorType>(lhsValue.getType()))[0];
  int64_t h = grid.getHeight(), w = grid.getWidth(),
          ring = mesh::GemmOp::kBlocks(h, w);
  Location loc = op->getLoc();
  FailureOr<Value> lhs;
  Value rhs;
  RankedTensorType resultType;
  if (isHeadForm(lhsValue)) {
    ArrayRef<int64_t> heads =
        cast<RankedTensorType>(plannedValues.lookup(lhsValue).getType())
            .getShape();
    int64_t kvHeads = heads[1], x = heads[2];
    lhs = materialize(op, lhsValue, {m, kvHeads, x},
                      layout({kY, kX, kNone}, {h, ring, 1}));
    mesh::LayoutAttr placed =
        layout({kY, kNone, kX}, {ring, 1, w}, {false, false, true});
    rhs = placeHeadWeight(loc, weight, transposeWeight, /*splitInput=*/true,
                          kvHeads, x, placed);
    resultType =
        distributedType({m, n}, layout({kY, kX}, {h, w}, {false, true}));
  } else {
    int64_t kvHeads = headProjections.lookup(op);
    if (n % kvHeads != 0)
      return op->emitError("convert-tfm-to-mesh: ")
             << n << " outputs do not split into " << kvHeads << " KV heads";
    int64_t x = n / kvHeads;
    lhs = materialize(op, lhsValue, {m, k},
                      layout({kY, kX}, {h, ring}, {false, true}));
    mesh::LayoutAttr placed =
        layout({kY, kX, kNone}, {ring, w, 1}, {true, false, false});
    rhs = placeHeadWeight(loc, weight, transposeWeight, /*splitInput=*/false,
                          kvHeads, x, placed);
    resultType = RankedTensorType::get({m, kvHeads, x}, elementType,
                                       layout({kY, kX, kNone}, {h, w, 1}));
  }
  if (failed(lhs))
    return failure();
  planGemm(op, resultType, *lhs, rhs);
  return success();
}

/// Reshapes and transposes of heads only rename them: the plan's head form
/// already is the layout attention wants.
LogicalResult Planner::planView(Operation *op) {
  Value input = op->getOperand(0);
  if (isHostValue(input))
    return success();
  auto inputType = cast<RankedTensorType>(input.getType());
  // Outside heads, a view must keep the elements in order: a reshape, or
  // a transpose that moves only unit dimensions.
  bool keepsOrder = meshShape(cast<RankedTensorType>(
                        op->getResult(0).getType())) == meshShape(inputType);
  if (auto transpose = dyn_cast<tfm::TransposeOp>(op)) {
    int64_t last = -1;
    for (int64_t p : transpose.getPermutation())
      if (inputType.getDimSize(p) != 1) {
        keepsOrder &= p > last;
        last = p;
      }
  }
  if (isHeadForm(input) && !keepsOrder) {
    // Heads may only be split from or merged into the model dimension, or
    // swapped with the positions.
    ArrayRef<int64_t> heads =
        cast<RankedTensorType>(plannedValues.lookup(input).getType())
            .getShape();
    int64_t width = heads[1] * heads[2];
    // Lanes hold a share of every KV head: splits count whole KV heads.
    int64_t kvHeads = heads[1];
    if (auto lanes = laneValues.find(plannedValues.lookup(input));
        lanes != laneValues.end())
      kvHeads = lanes->second.kvHeads;
    ArrayRef<int64_t> result =
        cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    bool allowed = false;
    if (auto transpose = dyn_cast<tfm::TransposeOp>(op))
      allowed = transpose.getPermutation() == ArrayRef<int64_t>{0, 2, 1, 3};
    else if (!result.empty())
      allowed = result.back() == width ||
                (result.size() >= 2 &&
                 result[result.size() - 2] * result.back() == width &&
                 result[result.size() - 2] % kvHeads == 0);
    if (!allowed)
      return op->emitError("convert-tfm-to-mesh: ")
             << op->getName()
             << " of attention heads other than splitting, merging or "
                "swapping them with the positions is not supported";
  }
  if (isHeadForm(input) || keepsOrder) {
    plannedValues[op->getResult(0)] = plannedValues.lookup(input);
    // Swapping positions and heads changes only the graph's order.
    bool swaps = false;
    if (auto transpose = dyn_cast<tfm::TransposeOp>(op))
      swaps = transpose.getPermutation() == ArrayRef<int64_t>{0, 2, 1, 3};
    if (headsFirst.contains(input) != swaps)
      headsFirst.insert(op->getResult(0));
    return success();
  }
  return op->emitError("convert-tfm-to-mesh: ")
         << op->getName()
         << " of a computed tensor is not supported by the plan (only "
            "attention heads and unit dimensions)";
}

LogicalResult Planner::planHeadBias(tfm::AddOp op, Value heads, Value bias) {
  Value planned = plannedValues.lookup(heads);
  auto type = cast<RankedTensorType>(planned.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (cast<RankedTensorType>(bias.getType()).getDimSize(0) !=
      shape[1] * shape[2])
    return op.emitError("convert-tfm-to-mesh: a bias of attention heads must "
                        "hold one value per projection output");
  Value placed;
  std::optional<LaneForm> lanes;
  if (auto found = laneValues.find(planned); found != laneValues.end())
    lanes = found->second;
  if (lanes) {
    // In lane order, as the projection's weight columns, broadcast over
    // the positions.
    int64_t group = shape[2] / 2;
    SmallVector<NamedDim> stored{{'r', 1}, {'h', lanes->kvHeads}, {'g', group}};
    llvm::append_range(stored, headDims(*lanes));
    placed = placeNamed(op.getLoc(), bias, stored,
                        {{'r', shape[0]},
                         {'h', lanes->kvHeads},
                         {'i', lanes->headDim / 2},
                         {'g', group},
                         {'u', 2}},
                        shape, mesh::getLayout(type));
  } else {
    // [KVH, X] in graph order, broadcast over the rows.
    Value rows = builder.create<tfm::ReshapeOp>(
        op.getLoc(),
        RankedTensorType::get({shape[1], shape[2]}, builder.getF32Type()),
        bias);
    placed = builder.create<mesh::DistributeOp>(op.getLoc(), type, rows);
  }
  auto map = builder.create<mesh::MapOp>(
      op.getLoc(), type,
      mesh::MapKindAttr::get(op.getContext(), mesh::MapKind::add), planned,
      placed);
  plannedValues[op.getResult()] = map.getResult();
  if (lanes)
    laneValues[map.getResult()] = *lanes;
  if (headsFirst.contains(heads))
    headsFirst.insert(op.getResult());
  return success();
}

LogicalResult Planner::planRmsNorm(tfm::RmsNormOp op) {
  SmallVector<int64_t> shape =
      meshShape(cast<RankedTensorType>(op.getInput().getType()));
  if (shape.size() != 2)
    return op.emitError("convert-tfm-to-mesh: rms_norm of a rank-")
           << shape.size() << " activation is not supported";
  int64_t h = grid.getHeight(), w = grid.getWidth();
  // Prefill rows are split along y and normalised along x; a decode vector
  // is normalised where it is (a host input goes along y).
  bool prefill = shape[0] > 1;
  bool alongX = prefill || (!isHostValue(op.getInput()) &&
                            splitAxis(plannedValues.lookup(op.getInput())) ==
                                kX);
  int64_t axis = alongX ? kX : kY, blocks = alongX ? w : h;
  auto input =
      materialize(op, op.getInput(), shape,
                  prefill ? layout({kY, kX}, {h, w}, {false, true})
                          : layout({kNone, axis}, {1, blocks}, {false, true}));
  if (failed(input))
    return failure();
  auto weight = materialize(op, op.getWeight(), {shape[1]},
                            layout({axis}, {blocks}, {true}));
  if (failed(weight))
    return failure();
  auto norm = builder.create<mesh::RmsNormOp>(
      op.getLoc(), input->getType(), *input, *weight, op.getEpsilonAttr(),
      allreduceAttr(), nullptr, nullptr);
  plannedValues[op.getResult()] = norm.getResult();
  return success();
}

LogicalResult Planner::planSwiglu(tfm::SwigluOp op) {
  return planElementwise(op, op.getGate(), op.getUp(),
                         mesh::MapKind::swiglu);
}

/// The factors of an interleaved rope, one per element of the heads
/// `[rows, KVH, X]` (X a multiple of D): `table` ([rows, D] in row-major
/// order) repeated along X as `[rows, 1, X]`, for the host to broadcast
/// over the KV heads.
static FailureOr<Value> pairFactors(OpBuilder &builder, tfm::RopeOp op,
                                    Value table, int64_t rows, int64_t dim,
                                    int64_t width) {
  auto constant = table.getDefiningOp<tfm::ConstantOp>();
  auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                         : DenseElementsAttr();
  if (!values || width % dim != 0)
    return op.emitError("convert-tfm-to-mesh: interleaved rope needs "
                        "constant cos and sin tables");
  SmallVector<float> source(values.getValues<float>());
  SmallVector<float> tiled(rows * width);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j)
      tiled[r * width + j] = source[r * dim + j % dim];
  auto type = RankedTensorType::get({rows, 1, width}, builder.getF32Type());
  return builder
      .create<tfm::ConstantOp>(op.getLoc(),
                               DenseElementsAttr::get(type, ArrayRef(tiled)))
      .getResult();
}

LogicalResult Planner::planRope(tfm::RopeOp op) {
  if (!isHeadForm(op.getInput()))
    return op.emitError("convert-tfm-to-mesh: rope is planned only on "
                        "attention heads");
  Value input = plannedValues.lookup(op.getInput());
  if (auto lanes = laneValues.find(input); lanes != laneValues.end())
    return planLaneRope(op, lanes->second);
  auto inputType = cast<RankedTensorType>(input.getType());
  auto cosType = cast<RankedTensorType>(op.getCos().getType());
  int64_t dim = cosType.getShape().back(), rowCount = inputType.getDimSize(0);
  if (cosType.getNumElements() != rowCount * dim)
    return op.emitError("convert-tfm-to-mesh: rope factors must hold one "
                        "row per position");
  FailureOr<Value> cos, sin;
  mesh::LayoutAttr rowsLayout = mesh::getLayout(inputType);
  if (op.getInterleaved()) {
    // Adjacent pairs: a factor per element, laid out like the heads.
    ArrayRef<int64_t> heads = inputType.getShape();
    FailureOr<Value> cosTable = pairFactors(builder, op, op.getCos(),
                                            rowCount, dim, heads[2]);
    FailureOr<Value> sinTable = pairFactors(builder, op, op.getSin(),
                                            rowCount, dim, heads[2]);
    if (failed(cosTable) || failed(sinTable))
      return failure();
    cos = materialize(op, *cosTable, heads, rowsLayout);
    sin = materialize(op, *sinTable, heads, rowsLayout);
  } else {
    // The factors of a row go where its positions are.
    mesh::LayoutAttr factors = layout({rowsLayout.getAxes()[0], kNone},
                                      {rowsLayout.getBlocks()[0], 1});
    cos = materialize(op, op.getCos(), {rowCount, dim}, factors);
    sin = materialize(op, op.getSin(), {rowCount, dim}, factors);
  }
  if (failed(cos) || failed(sin))
    return failure();
  auto rope = builder.create<mesh::RopeOp>(
      op.getLoc(), input.getType(), input, *cos, *sin,
      builder.getI64IntegerAttr(dim),
      op.getInterleaved() ? builder.getUnitAttr() : nullptr);
  plannedValues[op.getResult()] = rope.getResult();
  if (headsFirst.contains(op.getInput()))
    headsFirst.insert(op.getResult());
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
  if (auto lanes = laneValues.find(plannedValues.lookup(op.getInputs()[1]));
      lanes != laneValues.end())
    return planLaneConcat(op, lanes->second);
  int64_t h = grid.getHeight(), w = grid.getWidth();
  Value past = op.getInputs()[0];
  // Room for this step's token, appended to the bottom row:
  // mesh-plan-kv-cache chooses the policy and sizes the caches for it.
  KvCacheLayout cacheLayout;
  cacheLayout.rows = h;
  cacheLayout.past = cast<RankedTensorType>(past.getType()).getDimSize(2);
  cacheLayout.policy = mesh::KvPolicy::concat;
  cacheLayout.slotsPerRow =
      kvSlotsPerRow(h, cacheLayout.past, /*capacity=*/0, cacheLayout.policy);
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = saturatingMul(h, cacheLayout.slotsPerRow);
  auto cacheType = RankedTensorType::get(
      shape, elementType, layout({kNone, kX, kY, kNone}, {1, w, h, 1}));
  if (failed(checkKvCacheFits(op, cacheType, cacheLayout.slotsPerRow,
                              "convert-tfm-to-mesh")))
    return failure();
  SmallVector<int64_t> placement(shape[2], -1);
  for (auto [position, slot] : llvm::enumerate(cacheLayout.pastSlots()))
    placement[slot] = int64_t(position);
  auto cache = builder.create<mesh::DistributeOp>(
      op.getLoc(), cacheType, past);
  cache.setIndexDim(2);
  cache.setIndexMap(placement);
  auto append = builder.create<mesh::KvAppendOp>(
      op.getLoc(), cacheType, cache, plannedValues.lookup(op.getInputs()[1]),
      builder.getI64IntegerAttr(cacheLayout.past),
      mesh::KvPolicyAttr::get(op.getContext(), cacheLayout.policy), nullptr);
  plannedValues[op.getResult()] = append.getResult();
  return success();
}

LogicalResult Planner::planAttention(tfm::AttentionOp op) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  if (!isHeadForm(op.getQuery()) || isHostValue(op.getKey()) ||
      isHostValue(op.getValue()))
    return op.emitError("convert-tfm-to-mesh: attention needs planned query "
                        "heads and keys and values");
  bool caches = isa_and_nonnull<tfm::ConcatOp>(op.getKey().getDefiningOp());
  if (query.getDimSize(2) == 1 && !caches)
    return op.emitError("convert-tfm-to-mesh: attention of a one-token "
                        "prompt is not supported (wafer-run generate runs "
                        "one through the decode graph, at position 0)");
  if (query.getDimSize(2) > 1) {
    if (caches)
      return op.emitError("convert-tfm-to-mesh: attention of ")
             << query.getDimSize(2)
             << " new tokens after a past KV cache (a chunked prefill) is "
                "not planned: run the prompt as a prefill on an empty past, "
                "then one token per step";
    // Prefill: queries, keys and values all [L, KVH, X].
    if (!op.getCausal() || !isHeadForm(op.getKey()) ||
        !isHeadForm(op.getValue()))
      return op.emitError("convert-tfm-to-mesh: prefill attention is "
                          "planned for causal self-attention only");
  }
  Value q = plannedValues.lookup(op.getQuery()),
        k = plannedValues.lookup(op.getKey()),
        v = plannedValues.lookup(op.getValue());
  // Tokens in the caches after this step (the caches hold more slots), or
  // the prompt's.
  int64_t length = cast<RankedTensorType>(op.getKey().getType()).getDimSize(2);
  std::optional<LaneForm> lanes;
  if (auto found = laneValues.find(q); found != laneValues.end())
    lanes = found->second;
  bool lanesEverywhere = lanes && laneValues.count(k) && laneValues.count(v);
  if ((lanes || laneValues.count(k) || laneValues.count(v)) &&
      !lanesEverywhere)
    return op.emitError("convert-tfm-to-mesh: attention's query, keys and "
                        "values must all come from projections planned as "
                        "lanes");
  bool prefill = query.getDimSize(2) > 1;
  auto attention = builder.create<mesh::AttentionOp>(
      op.getLoc(), q.getType(), q, k, v, op.getScaleAttr(),
      builder.getI64IntegerAttr(length),
      prefill && !lanesEverywhere ? nullptr : allreduceAttr(), nullptr, nullptr,
      lanesEverywhere ? builder.getI64IntegerAttr(lanes->headDim / 2)
                      : nullptr);
  plannedValues[op.getResult()] = attention.getResult();
  if (lanesEverywhere)
    laneValues[attention.getResult()] = *lanes;
  return success();
}

} // namespace wafer::planning
