//===- RaiseMatchers.cpp - Helpers of tfm-raise-transformer ---------------===//
#include "RaiseMatchers.h"

#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Eval/Evaluator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tfm-raise-transformer"

using namespace mlir;
using namespace wafer;

std::optional<eval::Tensor> raise::constantValue(Value v) {
  if (auto constant = v.getDefiningOp<tfm::ConstantOp>())
    return eval::tensorFromAttr(constant.getValue());
  return std::nullopt;
}

std::optional<double> raise::scalarConstant(Value v) {
  auto constant = v.getDefiningOp<tfm::ConstantOp>();
  if (!constant || constant.getValue().getNumElements() != 1)
    return std::nullopt;
  return eval::tensorFromAttr(constant.getValue()).data[0];
}

ArrayRef<int64_t> raise::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static bool isDataMovement(Operation *op) {
  return isa<tfm::ReshapeOp, tfm::ExpandOp, tfm::TransposeOp, tfm::SliceOp,
             tfm::ConcatOp, tfm::GatherOp, tfm::NegOp>(op);
}

static bool isLinearStep(Operation *op) {
  return isDataMovement(op) || isa<tfm::MulOp, tfm::AddOp, tfm::SubOp>(op);
}

std::optional<eval::Tensor> raise::probe(Value root, Value leaf,
                                         const eval::Tensor &input,
                                         int maxOps, bool arithmetic) {
  llvm::DenseMap<Value, eval::Tensor> memo;
  int budget = maxOps;
  std::function<const eval::Tensor *(Value)> evaluate =
      [&](Value v) -> const eval::Tensor * {
    if (v == leaf)
      return &input;
    if (auto it = memo.find(v); it != memo.end())
      return &it->second;
    if (std::optional<eval::Tensor> c = constantValue(v))
      return &(memo[v] = std::move(*c));
    Operation *op = v.getDefiningOp();
    if (!op || !(arithmetic ? isLinearStep(op) : isDataMovement(op)) ||
        --budget < 0)
      return nullptr;
    SmallVector<const eval::Tensor *> operands;
    for (Value operand : op->getOperands()) {
      const eval::Tensor *value = evaluate(operand);
      if (!value)
        return nullptr;
      operands.push_back(value);
    }
    FailureOr<eval::Tensor> result = eval::evaluateOp(op, operands);
    if (failed(result))
      return nullptr;
    return &(memo[v] = std::move(*result));
  };
  const eval::Tensor *result = evaluate(root);
  if (!result)
    return std::nullopt;
  return *result;
}

std::optional<eval::Tensor> raise::indexProbe(ArrayRef<int64_t> shape) {
  eval::Tensor t(eval::ElementKind::F32, {shape.begin(), shape.end()});
  if (t.size() >= (int64_t(1) << 24))
    return std::nullopt;
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[i] = double(i + 1);
  return t;
}

SmallVector<Value> raise::dataMovementChain(Value v) {
  SmallVector<Value> chain{v};
  while (Operation *op = chain.back().getDefiningOp()) {
    if (!isDataMovement(op) || isa<tfm::NegOp>(op))
      break;
    Value next;
    int dynamic = 0;
    for (Value operand : op->getOperands())
      if (!operand.getDefiningOp<tfm::ConstantOp>()) {
        next = operand;
        ++dynamic;
      }
    if (dynamic != 1)
      break;
    chain.push_back(next);
  }
  return chain;
}

namespace {

/// The values `root` is computed from by linear steps (isLinearStep) from
/// constants, weights and one outside value, those of root's type first ordered as
/// in the block (closest to the outside value first); empty when there are
/// more outside values, no product, or more than `maxOps` ops.
SmallVector<Value> linearCone(Value root, int maxOps) {
  SmallVector<Value> candidates, stack{root};
  llvm::DenseSet<Value> seen;
  Value outside;
  bool product = false;
  int ops = 0;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (v != root && v.getType() == root.getType())
      candidates.push_back(v);
    Operation *def = v.getDefiningOp();
    // Fixed values, not the outside value: constants and weights (a
    // projection's bias behind the rotation's input).
    if (def && isa<tfm::ConstantOp, tfm::WeightOp>(def))
      continue;
    if (!def || !isLinearStep(def)) {
      if (outside && outside != v)
        return {};
      outside = v;
      continue;
    }
    if (++ops > maxOps)
      return {};
    product |= isa<tfm::MulOp>(def);
    llvm::append_range(stack, def->getOperands());
  }
  if (!outside || !product)
    return {};
  auto order = [](Value v) -> Operation * { return v.getDefiningOp(); };
  llvm::stable_sort(candidates, [&](Value a, Value b) {
    Operation *x = order(a), *y = order(b);
    if (!x || !y)
      return !x && y;
    return x->isBeforeInBlock(y);
  });
  return candidates;
}

/// Collapses the dimensions (all but the last) along which both tables are
/// constant, then drops leading unit dimensions down to rank 2.
void collapseBroadcast(eval::Tensor &cos, eval::Tensor &sin) {
  for (int64_t d = 0; d + 1 < cos.rank(); ++d) {
    int64_t extent = cos.shape[d];
    if (extent == 1)
      continue;
    int64_t inner = eval::elementCount(ArrayRef(cos.shape).drop_front(d + 1));
    bool constant = true;
    for (int64_t f = 0; constant && f < cos.size(); ++f) {
      int64_t base = f - ((f / inner) % extent) * inner;
      constant = cos.data[f] == cos.data[base] && sin.data[f] == sin.data[base];
    }
    if (!constant)
      continue;
    for (eval::Tensor *t : {&cos, &sin}) {
      std::vector<int64_t> starts(t->rank(), 0), ends = t->shape,
                           steps(t->rank(), 1);
      ends[d] = 1;
      *t = eval::slice(*t, starts, ends, steps);
    }
  }
  while (cos.rank() > 2 && cos.shape[0] == 1) {
    std::vector<int64_t> shape(cos.shape.begin() + 1, cos.shape.end());
    cos = eval::reshape(cos, shape);
    sin = eval::reshape(sin, shape);
  }
}

/// The rotation the linear map `f` is, pairing the last axis (width `w`)
/// by halves or by adjacent elements.
std::optional<raise::Rotation>
rotationOf(llvm::function_ref<std::optional<eval::Tensor>(const eval::Tensor &)>
               f,
           ArrayRef<int64_t> shape, bool interleaved) {
  int64_t w = shape.back(), half = w / 2;
  auto leads = [&](int64_t i) { return interleaved ? i % 2 == 0 : i < half; };
  auto partner = [&](int64_t i) {
    return interleaved ? i ^ 1 : (i < half ? i + half : i - half);
  };
  eval::Tensor leading(eval::ElementKind::F32, {shape.begin(), shape.end()});
  eval::Tensor trailing = leading;
  for (int64_t e = 0; e < leading.size(); ++e)
    (leads(e % w) ? leading : trailing).data[e] = 1.0;
  // On a basis of one pair member, the map's output is cos at that member
  // and +-sin at its partner.
  std::optional<eval::Tensor> a = f(leading), b = f(trailing);
  if (!a || !b || a->shape != leading.shape || b->shape != leading.shape)
    return std::nullopt;
  raise::Rotation r;
  r.cos = r.sin = leading;
  r.interleaved = interleaved;
  for (int64_t e = 0; e < leading.size(); ++e) {
    bool lead = leads(e % w);
    r.cos.data[e] = (lead ? a : b)->data[e];
    double other = (lead ? b : a)->data[e];
    r.sin.data[e] = lead ? -other : other;
  }
  for (int64_t e = 0; e < leading.size(); ++e) {
    int64_t p = e - e % w + partner(e % w);
    double c = r.cos.data[e], s = r.sin.data[e];
    if (std::abs(c - r.cos.data[p]) > 1e-6 ||
        std::abs(s - r.sin.data[p]) > 1e-6 ||
        std::abs(c * c + s * s - 1.0) > 1e-3)
      return std::nullopt;
  }
  // Linear maps agreeing on the basis agree everywhere; a pseudo-random
  // input catches anything else (a product of the input with itself,
  // elements mixed across pairs).
  eval::Tensor random = leading;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (double &v : random.data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = double(float(double(state >> 40) / double(1 << 24) * 2.0 - 1.0));
  }
  std::optional<eval::Tensor> y = f(random);
  if (!y || y->shape != random.shape)
    return std::nullopt;
  for (int64_t e = 0; e < random.size(); ++e) {
    int64_t i = e % w, p = e - i + partner(i);
    double rotated = leads(i) ? -random.data[p] : random.data[p];
    double expected = random.data[e] * r.cos.data[e] + rotated * r.sin.data[e];
    if (std::abs(y->data[e] - expected) > 1e-5)
      return std::nullopt;
  }
  return r;
}

} // namespace

std::optional<raise::Rotation> raise::matchRotation(Value root, int maxOps) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || !type.getElementType().isF32() || type.getRank() == 0 ||
      !type.hasStaticShape() || type.getShape().back() < 2 ||
      type.getShape().back() % 2 != 0 || type.getNumElements() > (1 << 22))
    return std::nullopt;
  for (Value x : linearCone(root, maxOps)) {
    auto f = [&](const eval::Tensor &in) {
      return probe(root, x, in, maxOps, /*arithmetic=*/true);
    };
    for (bool interleaved : {false, true})
      if (std::optional<raise::Rotation> r = rotationOf(f, type.getShape(),
                                                 interleaved)) {
        r->input = x;
        collapseBroadcast(r->cos, r->sin);
        LLVM_DEBUG(llvm::dbgs() << "rotation (" << (interleaved ? "adjacent"
                                                                : "half")
                                << " pairs) at " << root.getLoc() << "\n");
        return r;
      }
  }
  return std::nullopt;
}
