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

/// A rotation's tables, each element's cos and sin.
struct Tables {
  eval::Tensor cos, sin;
};

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

/// The pair checks of a rotation's tables (both members of a pair share
/// the angle, cos^2 + sin^2 = 1).
bool isRotationTable(const Tables &r,
                     llvm::function_ref<int64_t(int64_t)> partner) {
  int64_t w = r.cos.shape.back();
  for (int64_t e = 0; e < r.cos.size(); ++e) {
    int64_t p = e - e % w + partner(e % w);
    double c = r.cos.data[e], s = r.sin.data[e];
    // Negated comparisons, so that NaN tables fail.
    if (!(std::abs(c - r.cos.data[p]) <= 1e-6) ||
        !(std::abs(s - r.sin.data[p]) <= 1e-6) ||
        !(std::abs(c * c + s * s - 1.0) <= 1e-3))
      return false;
  }
  return true;
}

/// The rotation the linear map `f` is, pairing the last axis (width `w`)
/// by halves or by adjacent elements.
std::optional<Tables> rotationOf(
    llvm::function_ref<std::optional<eval::Tensor>(const eval::Tensor &)> f,
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
  Tables r;
  r.cos = r.sin = leading;
  for (int64_t e = 0; e < leading.size(); ++e) {
    bool lead = leads(e % w);
    r.cos.data[e] = (lead ? a : b)->data[e];
    double other = (lead ? b : a)->data[e];
    r.sin.data[e] = lead ? -other : other;
  }
  if (!isRotationTable(r, partner))
    return std::nullopt;
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

/// The tables as tfm.rope's constants, broadcast dimensions collapsed.
raise::RotationTables finish(Tables tables, MLIRContext *context) {
  collapseBroadcast(tables.cos, tables.sin);
  auto attr = [&](const eval::Tensor &t) {
    return eval::attrFromTensor(
        t, RankedTensorType::get(t.shape, Float32Type::get(context)));
  };
  return {attr(tables.cos), attr(tables.sin)};
}

/// The attribute of a tfm.constant (the caller checked it is one).
Attribute constantAttr(Value v) {
  return v.getDefiningOp<tfm::ConstantOp>().getValue();
}

/// `v` = slice(x) over [lo, hi) of the last axis, whole along the others.
bool isLastAxisSlice(Value v, Value x, int64_t lo, int64_t hi) {
  auto slice = v.getDefiningOp<tfm::SliceOp>();
  if (!slice || slice.getInput() != x)
    return false;
  ArrayRef<int64_t> shape = raise::shapeOf(x);
  size_t last = shape.size() - 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (slice.getSteps()[d] != 1 ||
        slice.getStarts()[d] != (d == last ? lo : 0) ||
        slice.getEnds()[d] != (d == last ? hi : shape[d]))
      return false;
  return true;
}

/// The constant `v` as a table of `shape`'s rank (unit dimensions
/// prefixed); empty unless its last axis is `shape`'s and every other
/// dimension is 1 or `shape`'s.
std::optional<eval::Tensor> broadcastTable(Value v, ArrayRef<int64_t> shape) {
  std::optional<eval::Tensor> t = raise::constantValue(v);
  if (!t || t->rank() == 0 || t->rank() > int64_t(shape.size()) ||
      t->shape.back() != shape.back())
    return std::nullopt;
  std::vector<int64_t> full(shape.size() - t->rank(), 1);
  llvm::append_range(full, t->shape);
  for (size_t d = 0; d < full.size(); ++d)
    if (full[d] != 1 && full[d] != shape[d])
      return std::nullopt;
  return eval::reshape(*t, full);
}

/// The rotate-half rotation written as PyTorch exports LLaMA's
/// `q * cos + rotate_half(q) * sin`, with rotate_half = cat(-x[.., D/2:],
/// x[.., :D/2]) and constant tables, recognised by its ops rather than
/// probed: the probe evaluates the subgraph on whole tensors, too slow for
/// long prompts (a 4096-token LLaMA3-8B query is 2^24 values), while the
/// tables here are checked at their own, broadcast size.
std::optional<raise::Rotation> rotateHalfOf(Value root,
                                            raise::RotationCache &cache) {
  auto add = root.getDefiningOp<tfm::AddOp>();
  if (!add)
    return std::nullopt;
  ArrayRef<int64_t> shape = raise::shapeOf(root);
  int64_t w = shape.back(), half = w / 2;
  // (a value, a constant) of a product, either way round.
  auto factors = [](Value v) -> std::optional<std::pair<Value, Value>> {
    auto mul = v.getDefiningOp<tfm::MulOp>();
    if (!mul)
      return std::nullopt;
    Value a = mul.getLhs(), b = mul.getRhs();
    if (a.getDefiningOp<tfm::ConstantOp>())
      std::swap(a, b);
    if (!b.getDefiningOp<tfm::ConstantOp>())
      return std::nullopt;
    return std::make_pair(a, b);
  };
  for (auto [direct, rotated] : {std::make_pair(add.getLhs(), add.getRhs()),
                                 std::make_pair(add.getRhs(), add.getLhs())}) {
    auto cosTerm = factors(direct), sinTerm = factors(rotated);
    if (!cosTerm || !sinTerm)
      continue;
    Value x = cosTerm->first;
    if (raise::shapeOf(x) != shape)
      continue;
    auto concat = sinTerm->first.getDefiningOp<tfm::ConcatOp>();
    if (!concat || concat.getInputs().size() != 2 ||
        int64_t(concat.getAxis()) != int64_t(shape.size()) - 1)
      continue;
    auto neg = concat.getInputs()[0].getDefiningOp<tfm::NegOp>();
    if (!neg || !isLastAxisSlice(neg.getInput(), x, half, w) ||
        !isLastAxisSlice(concat.getInputs()[1], x, 0, half))
      continue;
    auto checked = [&]() -> std::optional<raise::RotationTables> {
      std::optional<eval::Tensor> cos = broadcastTable(cosTerm->second, shape);
      std::optional<eval::Tensor> sin = broadcastTable(sinTerm->second, shape);
      if (!cos || !sin || cos->shape != sin->shape)
        return std::nullopt;
      Tables tables{std::move(*cos), std::move(*sin)};
      if (!isRotationTable(tables, [&](int64_t i) {
            return i < half ? i + half : i - half;
          }))
        return std::nullopt;
      return finish(std::move(tables), root.getContext());
    };
    auto key = std::make_tuple(constantAttr(cosTerm->second),
                               constantAttr(sinTerm->second), root.getType());
    auto [it, inserted] = cache.rotateHalf.try_emplace(key);
    if (inserted)
      it->second = checked();
    if (it->second)
      return raise::Rotation{x, *it->second, false};
  }
  return std::nullopt;
}

} // namespace

std::optional<raise::Rotation>
raise::matchRotation(Value root, RotationCache &cache, int maxOps) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || !type.getElementType().isF32() || type.getRank() == 0 ||
      !type.hasStaticShape() || type.getShape().back() < 2 ||
      type.getShape().back() % 2 != 0)
    return std::nullopt;
  if (std::optional<raise::Rotation> r = rotateHalfOf(root, cache)) {
    LLVM_DEBUG(llvm::dbgs() << "rotate-half by its ops at " << root.getLoc()
                            << "\n");
    return r;
  }
  // Probing evaluates the subgraph on whole tensors a few times.
  if (type.getNumElements() > (1 << 22))
    return std::nullopt;
  for (Value x : linearCone(root, maxOps)) {
    auto f = [&](const eval::Tensor &in) {
      return probe(root, x, in, maxOps, /*arithmetic=*/true);
    };
    for (bool interleaved : {false, true})
      if (std::optional<Tables> tables =
              rotationOf(f, type.getShape(), interleaved)) {
        LLVM_DEBUG(llvm::dbgs() << "rotation (" << (interleaved ? "adjacent"
                                                                : "half")
                                << " pairs) at " << root.getLoc() << "\n");
        return raise::Rotation{x, finish(std::move(*tables), root.getContext()),
                               interleaved};
      }
  }
  return std::nullopt;
}
