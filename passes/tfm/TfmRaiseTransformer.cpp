//===- TfmRaiseTransformer.cpp - Raise exported graphs to transformer ops -===//
//
// Each raise* function looks at one anchor op, checks the subgraph that
// computes it has exactly the meaning of one transformer op, and if so
// builds that op and redirects the anchor's uses. Dead ops are swept after
// each phase, so later phases never match leftovers.
//
//===----------------------------------------------------------------------===//
#include "RaiseMatchers.h"
#include "wafer/Eval/Evaluator.h"
#include "wafer/Passes/Passes.h"

namespace wafer {
#define GEN_PASS_DEF_TFMRAISETRANSFORMER
#include "tfm/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;
using namespace wafer::raise;

namespace {

/// A masking score: below this, exp() of it is 0 in f32 beside any real
/// score, exactly as a -inf mask.
constexpr double kMaskedScore = -1e4;

/// The operand pair of a commutative binary op, in both orders.
template <typename OpTy>
SmallVector<std::pair<Value, Value>> operandOrders(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op)
    return {};
  return {{op.getLhs(), op.getRhs()}, {op.getRhs(), op.getLhs()}};
}

bool isWeight(Value v) { return bool(v.getDefiningOp<tfm::WeightOp>()); }

bool isParameter(Value v) {
  return isWeight(v) || bool(v.getDefiningOp<tfm::ConstantOp>());
}

void replace(Operation *anchor, Operation *raised) {
  anchor->getResult(0).replaceAllUsesWith(raised->getResult(0));
}

//===--------------------------------------------------------------------===//
// embed and linear
//===--------------------------------------------------------------------===//

bool raiseEmbed(tfm::GatherOp gather, OpBuilder &b) {
  if (!isWeight(gather.getInput()) || gather.getAxis() != 0 ||
      shapeOf(gather.getInput()).size() != 2)
    return false;
  replace(gather, b.create<tfm::EmbedOp>(gather.getLoc(), gather.getType(),
                                         gather.getInput(),
                                         gather.getIndices()));
  return true;
}

bool raiseLinear(tfm::MatMulOp matmul, OpBuilder &b) {
  Value weight = matmul.getRhs();
  bool transposed = false;
  if (auto t = weight.getDefiningOp<tfm::TransposeOp>();
      t && isWeight(t.getInput()) &&
      t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    weight = t.getInput();
    transposed = true;
  }
  if (!isWeight(weight) || shapeOf(weight).size() != 2 ||
      shapeOf(matmul.getLhs()).size() < 2 || isParameter(matmul.getLhs()))
    return false;
  auto linear = b.create<tfm::LinearOp>(matmul.getLoc(), matmul.getType(),
                                        matmul.getLhs(), weight);
  if (transposed)
    linear.setTransposeWeight(true);
  replace(matmul, linear);
  return true;
}

//===--------------------------------------------------------------------===//
// rms_norm: w * (x * 1/sqrt(mean(x^2, -1) + eps)) in its written forms
//===--------------------------------------------------------------------===//

/// `s` = sqrt(mean(x^2 over the last axis, keepdims) + eps): returns eps.
std::optional<double> matchRootMeanSquare(Value s, Value x) {
  auto sqrt = s.getDefiningOp<tfm::SqrtOp>();
  if (!sqrt)
    return std::nullopt;
  for (auto [mean, eps] : operandOrders<tfm::AddOp>(sqrt.getInput())) {
    std::optional<double> epsilon = scalarConstant(eps);
    auto reduce = mean.getDefiningOp<tfm::ReduceMeanOp>();
    if (!epsilon || *epsilon < 0 || !reduce || !reduce.getKeepdims())
      continue;
    int64_t rank = shapeOf(x).size();
    if (reduce.getAxes() != ArrayRef<int64_t>{rank - 1})
      continue;
    Value square = reduce.getInput();
    if (auto pow = square.getDefiningOp<tfm::PowOp>()) {
      if (pow.getLhs() == x && scalarConstant(pow.getRhs()) == 2.0)
        return epsilon;
    } else if (auto mul = square.getDefiningOp<tfm::MulOp>()) {
      if (mul.getLhs() == x && mul.getRhs() == x)
        return epsilon;
    }
  }
  return std::nullopt;
}

/// `normed` = x / rms(x) written as a division or a reciprocal product.
std::optional<std::pair<Value, double>> matchNormalized(Value normed) {
  if (auto div = normed.getDefiningOp<tfm::DivOp>())
    if (auto eps = matchRootMeanSquare(div.getRhs(), div.getLhs()))
      return std::pair{div.getLhs(), *eps};
  for (auto [x, inverse] : operandOrders<tfm::MulOp>(normed)) {
    Value root;
    if (auto rec = inverse.getDefiningOp<tfm::ReciprocalOp>())
      root = rec.getInput();
    else if (auto div = inverse.getDefiningOp<tfm::DivOp>();
             div && scalarConstant(div.getLhs()) == 1.0)
      root = div.getRhs();
    if (!root)
      continue;
    if (auto eps = matchRootMeanSquare(root, x))
      return std::pair{x, *eps};
  }
  return std::nullopt;
}

bool raiseRmsNorm(tfm::MulOp mul, OpBuilder &b) {
  for (auto [weight, normed] : operandOrders<tfm::MulOp>(mul.getResult())) {
    auto match = matchNormalized(normed);
    if (!match)
      continue;
    Value x = match->first;
    if (shapeOf(weight) != shapeOf(x).take_back() ||
        mul.getType() != x.getType())
      continue;
    replace(mul, b.create<tfm::RmsNormOp>(mul.getLoc(), mul.getType(), x,
                                          weight,
                                          b.getF64FloatAttr(match->second)));
    return true;
  }
  return false;
}

//===--------------------------------------------------------------------===//
// swiglu and silu
//===--------------------------------------------------------------------===//

/// `v` = g * sigmoid(g): returns g.
Value matchSilu(Value v) {
  for (auto [g, sig] : operandOrders<tfm::MulOp>(v))
    if (auto sigmoid = sig.getDefiningOp<tfm::SigmoidOp>();
        sigmoid && sigmoid.getInput() == g)
      return g;
  return Value();
}

bool raiseSwiglu(tfm::MulOp mul, OpBuilder &b) {
  for (auto [gated, up] : operandOrders<tfm::MulOp>(mul.getResult())) {
    Value gate = matchSilu(gated);
    if (!gate || gate.getType() != up.getType() ||
        up.getType() != mul.getType())
      continue;
    replace(mul, b.create<tfm::SwigluOp>(mul.getLoc(), mul.getType(), gate,
                                         up));
    return true;
  }
  return false;
}

bool raiseSilu(tfm::MulOp mul, OpBuilder &b) {
  Value gate = matchSilu(mul.getResult());
  if (!gate || gate.getType() != mul.getType())
    return false;
  replace(mul, b.create<tfm::SiluOp>(mul.getLoc(), mul.getType(), gate));
  return true;
}

//===--------------------------------------------------------------------===//
// rope: x * cos + R(x) * sin, R a rotation's signed permutation
//===--------------------------------------------------------------------===//

/// Which rotation `probed` (R applied to an index probe of x's shape) is.
std::optional<bool> rotationConvention(const eval::Tensor &probed,
                                       int64_t width) {
  auto matches = [&](bool interleaved) {
    for (int64_t f = 0; f < probed.size(); ++f) {
      int64_t row = f / width, i = f % width, half = width / 2;
      int64_t source = interleaved ? (i ^ 1) : (i < half ? i + half : i - half);
      bool negated = interleaved ? i % 2 == 0 : i < half;
      double expected = double(row * width + source + 1);
      if (probed.data[f] != (negated ? -expected : expected))
        return false;
    }
    return true;
  };
  if (matches(false))
    return false;
  if (matches(true))
    return true;
  return std::nullopt;
}

bool raiseRope(tfm::AddOp add, OpBuilder &b) {
  for (auto [direct, rotated] : operandOrders<tfm::AddOp>(add.getResult())) {
    for (auto [x, cos] : operandOrders<tfm::MulOp>(direct)) {
      for (auto [r, sin] : operandOrders<tfm::MulOp>(rotated)) {
        if (!constantValue(cos) || !constantValue(sin) ||
            isParameter(x) || isParameter(r) || x.getType() != add.getType() ||
            r.getType() != x.getType())
          continue;
        ArrayRef<int64_t> shape = shapeOf(x);
        if (shape.empty() || shape.back() % 2 != 0)
          continue;
        std::optional<eval::Tensor> iota = indexProbe(shape);
        if (!iota)
          continue;
        std::optional<eval::Tensor> probed = probe(r, x, *iota);
        if (!probed)
          continue;
        std::optional<bool> interleaved =
            rotationConvention(*probed, shape.back());
        if (!interleaved)
          continue;
        auto rope = b.create<tfm::RopeOp>(add.getLoc(), add.getType(), x, cos,
                                          sin);
        if (*interleaved)
          rope.setInterleaved(true);
        replace(add, rope);
        return true;
      }
    }
  }
  return false;
}

//===--------------------------------------------------------------------===//
// attention: softmax(q k^T * scale + causal mask) v with grouped KV heads
//===--------------------------------------------------------------------===//

/// Peels multiplications and divisions by scalar constants off `v`.
Value peelScale(Value v, double &scale) {
  while (true) {
    if (auto div = v.getDefiningOp<tfm::DivOp>()) {
      std::optional<double> c = scalarConstant(div.getRhs());
      if (!c || *c == 0 || div.getType() != div.getLhs().getType())
        return v;
      scale /= *c;
      v = div.getLhs();
      continue;
    }
    bool peeled = false;
    for (auto [x, c] : operandOrders<tfm::MulOp>(v)) {
      std::optional<double> factor = scalarConstant(c);
      if (!factor || x.getType() != v.getType())
        continue;
      scale *= *factor;
      v = x;
      peeled = true;
      break;
    }
    if (!peeled)
      return v;
  }
}

/// The [B, KVH, L, D] tensor that `full` ([B, H, L, D]) repeats per group of
/// H / KVH query heads (`full` itself when nothing is repeated).
Value findKvSource(Value full) {
  ArrayRef<int64_t> shape = shapeOf(full);
  Value source = full;
  SmallVector<Value> chain = dataMovementChain(full);
  for (Value candidate : llvm::drop_begin(chain)) {
    ArrayRef<int64_t> c = shapeOf(candidate);
    if (c.size() != 4 || c[0] != shape[0] || c[2] != shape[2] ||
        c[3] != shape[3] || c[1] <= 0 || shape[1] % c[1] != 0)
      continue;
    std::optional<eval::Tensor> iota = indexProbe(c);
    std::optional<eval::Tensor> probed =
        iota ? probe(full, candidate, *iota) : std::nullopt;
    if (!probed)
      continue;
    int64_t group = shape[1] / c[1], perHead = shape[2] * shape[3];
    bool repeats = true;
    for (int64_t f = 0; repeats && f < probed->size(); ++f) {
      int64_t inner = f % perHead, h = (f / perHead) % shape[1],
              batch = f / (perHead * shape[1]);
      int64_t src = (batch * c[1] + h / group) * perHead + inner;
      repeats = probed->data[f] == double(src + 1);
    }
    if (repeats)
      source = candidate;
  }
  return source;
}

/// Whether `masked(i, j)` over the scores' last two dims is the causal mask
/// with the queries at the last positions.
bool isCausal(const eval::Tensor &mask, ArrayRef<int64_t> scores,
              llvm::function_ref<std::optional<bool>(double)> masked) {
  auto shape = tfm::broadcastShapes(mask.shape, scores);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != scores)
    return false;
  eval::Tensor full = eval::broadcastTo(mask, scores);
  int64_t lq = scores[2], lk = scores[3];
  for (int64_t f = 0; f < full.size(); ++f) {
    int64_t j = f % lk, i = (f / lk) % lq;
    std::optional<bool> isMasked = masked(full.data[f]);
    if (!isMasked || *isMasked != (j > i + lk - lq))
      return false;
  }
  return true;
}

bool raiseAttention(tfm::MatMulOp output, OpBuilder &b) {
  auto softmax = output.getLhs().getDefiningOp<tfm::SoftmaxOp>();
  if (!softmax || !softmax->hasOneUse())
    return false;
  ArrayRef<int64_t> scores = shapeOf(softmax.getResult());
  if (scores.size() != 4 || softmax.getAxis() != 3)
    return false;
  Value s = softmax.getInput();
  bool causal = scores[2] == 1; // one query sees every key
  bool masked = false;
  for (auto [x, m] : operandOrders<tfm::AddOp>(s)) {
    std::optional<eval::Tensor> mask = constantValue(m);
    if (!mask || x.getType() != s.getType())
      continue;
    if (!isCausal(*mask, scores, [](double v) -> std::optional<bool> {
          if (v == 0)
            return false;
          if (v <= kMaskedScore)
            return true;
          return std::nullopt;
        }))
      return false;
    s = x;
    causal = masked = true;
    break;
  }
  if (!masked)
    if (auto where = s.getDefiningOp<tfm::WhereOp>()) {
      std::optional<eval::Tensor> cond = constantValue(where.getCondition());
      std::optional<double> lhs = scalarConstant(where.getLhs());
      std::optional<double> rhs = scalarConstant(where.getRhs());
      bool fillLeft = lhs && *lhs <= kMaskedScore;
      bool fillRight = !fillLeft && rhs && *rhs <= kMaskedScore;
      if (!cond || (!fillLeft && !fillRight))
        return false;
      if (!isCausal(*cond, scores, [&](double v) -> std::optional<bool> {
            return fillLeft ? v != 0 : v == 0;
          }))
        return false;
      s = fillLeft ? where.getRhs() : where.getLhs();
      if (s.getType() != where.getType())
        return false;
      causal = true;
    }
  double scale = 1.0;
  s = peelScale(s, scale);
  auto product = s.getDefiningOp<tfm::MatMulOp>();
  if (!product)
    return false;
  Value q = peelScale(product.getLhs(), scale);
  Value kt = peelScale(product.getRhs(), scale);
  auto transpose = kt.getDefiningOp<tfm::TransposeOp>();
  if (!transpose || shapeOf(q).size() != 4 || shapeOf(kt).size() != 4)
    return false;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (perm[0] != 0) // keep the batch where it is
    return false;
  Value kFull = transpose.getInput();
  if (perm != ArrayRef<int64_t>{0, 1, 3, 2}) {
    SmallVector<int64_t> keyPerm{perm[0], perm[1], perm[3], perm[2]};
    ArrayRef<int64_t> in = shapeOf(kFull);
    SmallVector<int64_t> shape;
    for (int64_t p : keyPerm)
      shape.push_back(in[p]);
    b.setInsertionPoint(transpose);
    kFull = b.create<tfm::TransposeOp>(
        transpose.getLoc(), RankedTensorType::get(shape, b.getF32Type()),
        kFull, keyPerm);
    b.setInsertionPoint(output);
  }
  Value vFull = output.getRhs();
  if (shapeOf(kFull) != shapeOf(vFull) || shapeOf(vFull).size() != 4)
    return false;
  Value k = findKvSource(kFull), v = findKvSource(vFull);
  if (shapeOf(k) != shapeOf(v))
    return false;
  auto attention = b.create<tfm::AttentionOp>(
      output.getLoc(), output.getType(), q, k, v,
      b.getI64IntegerAttr(shapeOf(q)[1]), b.getI64IntegerAttr(shapeOf(k)[1]),
      b.getF64FloatAttr(scale), causal ? b.getUnitAttr() : UnitAttr());
  replace(output, attention);
  return true;
}

void eraseDeadOps(Block &body) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isa<tfm::TfmDialect>(op.getDialect()) && op.use_empty() &&
        isMemoryEffectFree(&op))
      op.erase();
}

/// Applies `raise` to every op of type OpTy, then sweeps the dead.
template <typename OpTy>
void raiseAll(Block &body, bool (*raise)(OpTy, OpBuilder &)) {
  OpBuilder builder(body.getParentOp()->getContext());
  for (Operation &op : llvm::make_early_inc_range(body))
    if (auto typed = dyn_cast<OpTy>(op); typed && !op.use_empty()) {
      builder.setInsertionPoint(&op);
      raise(typed, builder);
    }
  eraseDeadOps(body);
}

struct TfmRaiseTransformerPass
    : public wafer::impl::TfmRaiseTransformerBase<TfmRaiseTransformerPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    Block &body = func.getBody().front();
    // Rotations before attention: the KV-head search stops at tfm.rope.
    raiseAll<tfm::GatherOp>(body, raiseEmbed);
    raiseAll<tfm::MatMulOp>(body, raiseLinear);
    raiseAll<tfm::MulOp>(body, raiseRmsNorm);
    raiseAll<tfm::MulOp>(body, raiseSwiglu);
    raiseAll<tfm::MulOp>(body, raiseSilu);
    raiseAll<tfm::AddOp>(body, raiseRope);
    raiseAll<tfm::MatMulOp>(body, raiseAttention);
  }
};

} // namespace
