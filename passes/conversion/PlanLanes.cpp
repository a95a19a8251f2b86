//===- PlanLanes.cpp - Attention with heads split into lanes
//---------------===//
//
// On a grid wider than the KV heads, whole heads along x would leave all
// but KVH columns without attention work, q/k/v/o weights or caches. The
// decode plan (and the prefill plan, unless convert-tfm-to-mesh's choice
// keeps whole heads) then splits the head dimension too: a lane is a pair
// of one KV head's dimensions, lanes go along x, and q keeps its G query
// heads per lane ([L, lanes, G * 2]). The host permutes the weights'
// columns (q, k, v) and rows (o), the RoPE tables and the caches into lane
// order, so every permutation is free; attention sums its partial scores
// along x (paper section 4.2's ReduceAdd of Q x K^T along X).
//
//===----------------------------------------------------------------------===//
#include "TfmToMeshPlanner.h"

#include <numeric>

using namespace mlir;
using namespace wafer;

namespace wafer::planning {

SmallVector<Planner::NamedDim> Planner::headDims(const LaneForm &form) {
  int64_t half = form.headDim / 2;
  if (form.rotateHalf)
    return {{'u', 2}, {'i', half}};
  return {{'i', half}, {'u', 2}};
}

mesh::DistributeOp Planner::placeNamed(Location loc, Value v,
                                       ArrayRef<NamedDim> stored,
                                       ArrayRef<NamedDim> target,
                                       ArrayRef<int64_t> shape,
                                       mesh::LayoutAttr layout) {
  SmallVector<int64_t> storedShape, view, permutation;
  for (const NamedDim &d : stored)
    storedShape.push_back(d.size);
  for (const NamedDim &d : target) {
    view.push_back(d.size);
    permutation.push_back(llvm::find_if(stored, [&](const NamedDim &s) {
                            return s.name == d.name;
                          }) -
                          stored.begin());
  }
  auto sourceType = cast<RankedTensorType>(v.getType());
  Value source = builder.create<tfm::ReshapeOp>(
      loc, RankedTensorType::get(storedShape, sourceType.getElementType()), v);
  auto distribute = builder.create<mesh::DistributeOp>(
      loc, distributedType(shape, layout), source);
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    distribute.setPermutation(permutation);
  if (ArrayRef<int64_t>(view) != shape)
    distribute.setView(view);
  return distribute;
}

std::optional<Planner::LaneForm>
Planner::laneFormOf(tfm::AttentionOp attention) {
  auto query = cast<RankedTensorType>(attention.getQuery().getType());
  int64_t kvHeads = attention.getNumKvHeads(), dim = query.getDimSize(3);
  if (grid.getWidth() <= kvHeads || dim % 2 ||
      (query.getDimSize(2) > 1 && !prefillLanes))
    return std::nullopt;
  LaneForm form{kvHeads, dim, false, 0};
  // Lanes that do not divide the columns: ceil-sized blocks may leave the
  // last columns without lanes. Balanced blocks use every column, in parts
  // of whole KV heads (as many as divide both the KV heads and the
  // columns), each part a lane segment of its own. The largest block is
  // the same either way; what differs is the sum of the partial scores
  // along x, over a segment's columns for its KV heads. The parts are
  // taken where their segments are no wider and hold no more KV heads
  // than the ceil-sized blocks' (docs/architecture.md, "Attention over
  // lanes").
  int64_t lanes = form.lanes(), width = grid.getWidth();
  if (lanes > width && lanes % width != 0) {
    int64_t parts = std::gcd(kvHeads, width);
    int64_t tile = ceilDiv(lanes, width), perHead = dim / 2;
    int64_t segmentLanes = std::min(lanes, std::lcm(tile, perHead));
    if (kvHeads / parts <= segmentLanes / perHead &&
        width / parts <= ceilDiv(segmentLanes, tile))
      form.balancedParts = parts;
  }
  // The rope on the query's way from its projection picks the pairs.
  Value v = attention.getQuery();
  while (Operation *def = v.getDefiningOp()) {
    if (auto rope = dyn_cast<tfm::RopeOp>(def))
      form.rotateHalf = !rope.getInterleaved();
    if (!isa<tfm::ReshapeOp, tfm::TransposeOp, tfm::RopeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return form;
}

FailureOr<Planner::LaneWeight> Planner::laneWeight(Operation *op,
                                                   Value lhsValue, Value weight,
                                                   bool transposeWeight) {
  FailureOr<std::pair<int64_t, int64_t>> sizes =
      projectionSizes(op, weight, transposeWeight);
  if (failed(sizes))
    return failure();
  LaneWeight lw;
  std::tie(lw.k, lw.n) = *sizes;
  lw.intoLanes = !isHeadForm(lhsValue);
  LaneForm &form = lw.form;
  form = lw.intoLanes ? laneProjections.lookup(op)
                      : laneValues.lookup(plannedValues.lookup(lhsValue));
  int64_t perHead = form.kvHeads * form.headDim;
  if (perHead <= 0)
    return op->emitError("convert-tfm-to-mesh: a projection into or out of "
                         "lanes without its attention's lane form");
  int64_t features = lw.intoLanes ? lw.n : lw.k;
  if (features % perHead != 0)
    return op->emitError("convert-tfm-to-mesh: ")
           << features << " features do not split into " << form.kvHeads
           << " KV heads of " << form.headDim;
  lw.group = features / perHead;
  // The weight's head side in graph order, [h, g, head dims], and the
  // lanes' order, [h, i, g, u].
  SmallVector<NamedDim> headSide{{'h', form.kvHeads}, {'g', lw.group}};
  llvm::append_range(headSide, headDims(form));
  lw.laneSide = {
      {'h', form.kvHeads}, {'i', form.headDim / 2}, {'g', lw.group}, {'u', 2}};
  lw.other = {'e', lw.intoLanes ? lw.k : lw.n};
  // Stored [K, N], or [N, K] when transposed; the head side is N going
  // into lanes and K coming out.
  if (lw.intoLanes != transposeWeight)
    lw.stored.push_back(lw.other);
  llvm::append_range(lw.stored, headSide);
  if (lw.intoLanes == transposeWeight)
    lw.stored.push_back(lw.other);
  return lw;
}

LogicalResult Planner::planLaneGemm(Operation *op, Value lhsValue, Value weight,
                                    bool transposeWeight) {
  FailureOr<LaneWeight> lw = laneWeight(op, lhsValue, weight, transposeWeight);
  if (failed(lw))
    return failure();
  int64_t m = meshShape(cast<RankedTensorType>(lhsValue.getType()))[0];
  int64_t h = grid.getHeight(), w = grid.getWidth(),
          ring = mesh::GemmOp::kBlocks(h, w);
  int64_t lanes = lw->form.lanes(), width = lw->group * 2;
  Location loc = op->getLoc();
  FailureOr<Value> lhs;
  Value rhs;
  RankedTensorType resultType;
  if (lw->intoLanes) {
    lhs = materialize(op, lhsValue, {m, lw->k},
                      layout({kY, kX}, {h, ring}, {false, true}));
    SmallVector<NamedDim> target{lw->other};
    llvm::append_range(target, lw->laneSide);
    rhs = placeNamed(
        loc, weight, lw->stored, target, {lw->k, lanes, width},
        laneLayout(layout({kY, kX, kNone}, {ring, w, 1}, {true, false, false}),
                   1, lw->form));
    resultType = distributedType(
        {m, lanes, width},
        laneLayout(layout({kY, kX, kNone}, {h, w, 1}), 1, lw->form));
  } else {
    lhs = materialize(
        op, lhsValue, {m, lanes, width},
        laneLayout(layout({kY, kX, kNone}, {h, ring, 1}), 1, lw->form));
    SmallVector<NamedDim> target(lw->laneSide);
    target.push_back(lw->other);
    rhs = placeNamed(
        loc, weight, lw->stored, target, {lanes, width, lw->n},
        laneLayout(layout({kY, kNone, kX}, {ring, 1, w}, {false, false, true}),
                   0, lw->form));
    resultType =
        distributedType({m, lw->n}, layout({kY, kX}, {h, w}, {false, true}));
  }
  if (failed(lhs))
    return failure();
  mesh::GemmOp gemm = planGemm(op, resultType, *lhs, rhs);
  if (lw->intoLanes)
    laneValues[gemm.getResult()] = lw->form;
  return success();
}

LogicalResult Planner::planLaneGemv(Operation *op, Value lhsValue, Value weight,
                                    bool transposeWeight) {
  FailureOr<LaneWeight> laneWeights =
      laneWeight(op, lhsValue, weight, transposeWeight);
  if (failed(laneWeights))
    return failure();
  const LaneWeight &lw = *laneWeights;
  int64_t k = lw.k, n = lw.n;
  int64_t h = grid.getHeight(), w = grid.getWidth();
  Location loc = op->getLoc();
  bool intoLanes = lw.intoLanes;
  const LaneForm &form = lw.form;
  int64_t lanes = form.lanes(), group = lw.group;
  const SmallVector<NamedDim> &stored = lw.stored, &laneSide = lw.laneSide;
  NamedDim other = lw.other;
  Value lhs;
  Value rhs;
  RankedTensorType resultType;
  if (intoLanes) {
    FailureOr<Value> planned = headProjectionInput(op, lhsValue, k);
    if (failed(planned))
      return failure();
    lhs = *planned;
    SmallVector<NamedDim> target{other};
    llvm::append_range(target, laneSide);
    rhs = placeNamed(
        loc, weight, stored, target, {k, lanes, group * 2},
        laneLayout(layout({kY, kX, kNone}, {h, w, 1}, {true, false, false}), 1,
                   form));
    resultType = distributedType(
        {1, lanes, group * 2},
        laneLayout(layout({kNone, kX, kNone}, {1, w, 1}), 1, form));
  } else {
    lhs = plannedValues.lookup(lhsValue);
    SmallVector<NamedDim> target(laneSide);
    target.push_back(other);
    rhs = placeNamed(
        loc, weight, stored, target, {lanes, group * 2, n},
        laneLayout(layout({kX, kNone, kY}, {w, 1, h}, {false, false, true}), 0,
                   form));
    resultType =
        distributedType({1, n}, layout({kNone, kY}, {1, h}, {false, true}));
  }
  auto gemv = builder.create<mesh::GemvOp>(loc, resultType, lhs, rhs,
                                          allreduceAttr(), nullptr, nullptr);
  plannedValues[op->getResult(0)] = gemv.getResult();
  if (intoLanes)
    laneValues[gemv.getResult()] = form;
  return success();
}

LogicalResult Planner::planLaneRope(tfm::RopeOp op, LaneForm form) {
  Value input = plannedValues.lookup(op.getInput());
  auto inputType = cast<RankedTensorType>(input.getType());
  auto cosType = cast<RankedTensorType>(op.getCos().getType());
  // One row of factors per position: the decode step's one, or the
  // prompt's.
  int64_t positions = inputType.getDimSize(0);
  if (cosType.getNumElements() != positions * form.headDim)
    return op.emitError("convert-tfm-to-mesh: rope over lanes needs one row "
                        "of factors per position");
  // Each lane's pair takes the factors of its two dimensions, for every
  // KV head and query head: one factor per element, as interleaved rope.
  int64_t group = inputType.getDimSize(2) / 2;
  SmallVector<NamedDim> stored{{'r', positions}, {'h', 1}, {'g', 1}};
  llvm::append_range(stored, headDims(form));
  SmallVector<NamedDim> target{{'r', positions},
                               {'h', form.kvHeads},
                               {'i', form.headDim / 2},
                               {'g', group},
                               {'u', 2}};
  mesh::LayoutAttr layout = mesh::getLayout(inputType);
  Value cos = placeNamed(op.getLoc(), op.getCos(), stored, target,
                         inputType.getShape(), layout);
  Value sin = placeNamed(op.getLoc(), op.getSin(), stored, target,
                         inputType.getShape(), layout);
  auto rope = builder.create<mesh::RopeOp>(
      op.getLoc(), inputType, input, cos, sin, builder.getI64IntegerAttr(2),
      builder.getUnitAttr());
  plannedValues[op.getResult()] = rope.getResult();
  laneValues[rope.getResult()] = form;
  if (headsFirst.contains(op.getInput()))
    headsFirst.insert(op.getResult());
  return success();
}

LogicalResult Planner::planLaneConcat(tfm::ConcatOp op, LaneForm form) {
  int64_t h = grid.getHeight(), w = grid.getWidth();
  Value past = op.getInputs()[0];
  KvCacheLayout cacheLayout;
  cacheLayout.rows = h;
  cacheLayout.past = cast<RankedTensorType>(past.getType()).getDimSize(2);
  cacheLayout.policy = mesh::KvPolicy::concat;
  cacheLayout.slotsPerRow =
      kvSlotsPerRow(h, cacheLayout.past, /*capacity=*/0, cacheLayout.policy);
  // Checked below against a core's SRAM; the past comes from the command
  // line.
  int64_t slots = saturatingMul(h, cacheLayout.slotsPerRow);
  // The past [1, KVH, P, D] in lane order [1, KVH, D / 2, slots, 2].
  SmallVector<NamedDim> stored{
      {'b', 1}, {'h', form.kvHeads}, {'p', cacheLayout.past}};
  llvm::append_range(stored, headDims(form));
  SmallVector<NamedDim> target{{'b', 1},
                               {'h', form.kvHeads},
                               {'i', form.headDim / 2},
                               {'p', slots},
                               {'u', 2}};
  mesh::DistributeOp cache = placeNamed(
      op.getLoc(), past, stored, target, {1, form.lanes(), slots, 2},
      laneLayout(layout({kNone, kX, kY, kNone}, {1, w, h, 1}), 1, form));
  if (failed(checkKvCacheFits(op, cache.getType(), cacheLayout.slotsPerRow,
                              "convert-tfm-to-mesh")))
    return failure();
  SmallVector<int64_t> placement(slots, -1);
  for (auto [position, slot] : llvm::enumerate(cacheLayout.pastSlots()))
    placement[slot] = int64_t(position);
  cache.setIndexDim(3);
  cache.setIndexMap(placement);
  auto append = builder.create<mesh::KvAppendOp>(
      op.getLoc(), cache.getType(), cache,
      plannedValues.lookup(op.getInputs()[1]),
      builder.getI64IntegerAttr(cacheLayout.past),
      mesh::KvPolicyAttr::get(op.getContext(), cacheLayout.policy), nullptr);
  plannedValues[op.getResult()] = append.getResult();
  laneValues[append.getResult()] = form;
  return success();
}

bool Planner::isPrefillKv(Value planned) {
  auto type = cast<RankedTensorType>(planned.getType());
  return type.getRank() == 3 && type.getDimSize(0) > 1 &&
         type.getDimSize(2) == 2 &&
         llvm::any_of(planned.getUsers(), [&](Operation *user) {
           auto attention = dyn_cast<mesh::AttentionOp>(user);
           return attention && (attention.getKey() == planned ||
                                attention.getValue() == planned);
         });
}

void Planner::collectLanes(mesh::CollectOp collect, const LaneForm &form,
                           bool headsFirst) {
  auto source = cast<RankedTensorType>(collect.getSource().getType());
  if (source.getRank() == 3) {
    // Prefill keys or values [L, KVH * D / 2, 2]: viewed [L, KVH, i, u],
    // returned [KVH, L, head dims] (or positions first).
    collect.setView(ArrayRef<int64_t>{source.getDimSize(0), form.kvHeads,
                                      form.headDim / 2, 2});
    SmallVector<int64_t> order =
        headsFirst ? SmallVector<int64_t>{1, 0} : SmallVector<int64_t>{0, 1};
    if (form.rotateHalf)
      order.append({3, 2});
    else
      order.append({2, 3});
    collect.setPermutation(order);
    return;
  }
  auto cache = source;
  collect.setView(ArrayRef<int64_t>{1, form.kvHeads, form.headDim / 2,
                                    cache.getDimSize(2), 2});
  collect.setIndexDim(3);
  // [1, KVH, i, positions, u] to [1, KVH, positions, head dims].
  collect.setPermutation(form.rotateHalf ? ArrayRef<int64_t>{0, 1, 3, 4, 2}
                                         : ArrayRef<int64_t>{0, 1, 3, 2, 4});
}

} // namespace wafer::planning
