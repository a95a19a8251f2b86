//===- TfmRaiseTransformer.cpp - Raise exported graphs to transformer ops -===//
//
// One rewrite pattern per transformer op: each looks at one anchor op,
// checks the subgraph that computes it has exactly the meaning of the
// transformer op, and if so builds that op in the anchor's place. The
// greedy driver applies them until nothing changes and erases what died.
// The matches do not depend on each other's order: swiglu also accepts an
// already raised silu, rotations are recognised from any anchor of their
// subgraph, and attention's KV-head search stops at every arithmetic op,
// raised or not.
//
//===----------------------------------------------------------------------===//
#include "RaiseMatchers.h"
#include "RaisePatterns.h"
#include "wafer/Eval/Evaluator.h"
#include "wafer/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#include <array>
#include <map>
#include <tuple>

#define DEBUG_TYPE "tfm-raise-transformer"

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

/// A rewrite pattern from a function matching and rewriting one op type.
template <typename OpTy>
struct RaisePattern : OpRewritePattern<OpTy> {
  using Fn = LogicalResult (*)(OpTy, PatternRewriter &);
  RaisePattern(MLIRContext *context, Fn fn, StringRef name)
      : OpRewritePattern<OpTy>(context), fn(fn) {
    this->setDebugName(name);
  }
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    return fn(op, rewriter);
  }
  Fn fn;
};

//===--------------------------------------------------------------------===//
// rms_norm: w * (x * 1/sqrt(mean(x^2, -1) + eps)) in its written forms
//===--------------------------------------------------------------------===//

/// `m` = mean(x^2 over the last axis, keepdims) + eps: returns eps.
std::optional<double> matchMeanSquare(Value m, Value x) {
  for (auto [mean, eps] : operandOrders<tfm::AddOp>(m)) {
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

/// `s` = sqrt(mean(x^2 over the last axis, keepdims) + eps): returns eps.
std::optional<double> matchRootMeanSquare(Value s, Value x) {
  auto sqrt = s.getDefiningOp<tfm::SqrtOp>();
  if (!sqrt)
    return std::nullopt;
  return matchMeanSquare(sqrt.getInput(), x);
}

/// `normed` = x / rms(x) written as a division, a reciprocal product or a
/// product with (mean(x^2) + eps) ^ -0.5.
std::optional<std::pair<Value, double>> matchNormalized(Value normed) {
  if (auto div = normed.getDefiningOp<tfm::DivOp>())
    if (auto eps = matchRootMeanSquare(div.getRhs(), div.getLhs()))
      return std::pair{div.getLhs(), *eps};
  for (auto [x, inverse] : operandOrders<tfm::MulOp>(normed)) {
    if (auto pow = inverse.getDefiningOp<tfm::PowOp>();
        pow && scalarConstant(pow.getRhs()) == -0.5)
      if (auto eps = matchMeanSquare(pow.getLhs(), x))
        return std::pair{x, *eps};
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

LogicalResult raiseRmsNorm(tfm::MulOp mul, PatternRewriter &b) {
  for (auto [weight, normed] : operandOrders<tfm::MulOp>(mul.getResult())) {
    auto match = matchNormalized(normed);
    if (!match)
      continue;
    Value x = match->first;
    if (shapeOf(weight) != shapeOf(x).take_back() ||
        mul.getType() != x.getType())
      continue;
    return raised(b, mul,
                  b.create<tfm::RmsNormOp>(mul.getLoc(), mul.getType(), x,
                                           weight,
                                           b.getF64FloatAttr(match->second)));
  }
  return failure();
}

//===--------------------------------------------------------------------===//
// swiglu and silu
//===--------------------------------------------------------------------===//

/// `v` = g * sigmoid(g) (or an already raised silu): returns g.
Value matchSilu(Value v) {
  if (auto silu = v.getDefiningOp<tfm::SiluOp>())
    return silu.getInput();
  for (auto [g, sig] : operandOrders<tfm::MulOp>(v))
    if (auto sigmoid = sig.getDefiningOp<tfm::SigmoidOp>();
        sigmoid && sigmoid.getInput() == g)
      return g;
  return Value();
}

LogicalResult raiseSwiglu(tfm::MulOp mul, PatternRewriter &b) {
  for (auto [gated, up] : operandOrders<tfm::MulOp>(mul.getResult())) {
    Value gate = matchSilu(gated);
    if (!gate || gate.getType() != up.getType() ||
        up.getType() != mul.getType())
      continue;
    return raised(b, mul,
                  b.create<tfm::SwigluOp>(mul.getLoc(), mul.getType(), gate,
                                          up));
  }
  return failure();
}

LogicalResult raiseSilu(tfm::MulOp mul, PatternRewriter &b) {
  Value gate = matchSilu(mul.getResult());
  if (!gate || gate.getType() != mul.getType())
    return failure();
  return raised(b, mul,
                b.create<tfm::SiluOp>(mul.getLoc(), mul.getType(), gate));
}

//===--------------------------------------------------------------------===//
// rope: a rotation of pairs of the last axis by per-position angles
//===--------------------------------------------------------------------===//

/// Raises `anchor` when its result is a rotary embedding in any written
/// form (matchRotation probes the meaning): rotate-half by slices or
/// Split, `cat([a*c - b*s, b*c + a*s])`, adjacent pairs by reshape to
/// [.., D/2, 2] with gathers, splits or slices and stack or
/// unsqueeze+concat. The anchors are the ops such a subgraph ends in.
template <typename OpTy> struct RaiseRopePattern : OpRewritePattern<OpTy> {
  explicit RaiseRopePattern(MLIRContext *context)
      : OpRewritePattern<OpTy>(context) {
    this->setDebugName("rope");
  }
  LogicalResult matchAndRewrite(OpTy anchor,
                                PatternRewriter &b) const override {
    std::optional<Rotation> rotation =
        matchRotation(anchor->getResult(0), rotations);
    if (!rotation)
      return failure();
    auto table = [&](DenseElementsAttr values) -> Value {
      return b.create<tfm::ConstantOp>(anchor.getLoc(), values);
    };
    auto rope = b.create<tfm::RopeOp>(
        anchor.getLoc(), anchor.getType(), rotation->input,
        table(rotation->tables.cos), table(rotation->tables.sin));
    if (rotation->interleaved)
      rope.setInterleaved(true);
    return raised(b, anchor, rope);
  }
  mutable RotationCache rotations;
};

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

/// The tensor that `full` ([B, H, L, D]) repeats per group of H / KVH
/// query heads: [B, KVH, L, D], or [B, L, KVH, D] (`swapped`) when the
/// repetition happens before the heads are swapped with the positions
/// (Meta's repeat_kv); `full` itself when nothing is repeated.
struct KvSource {
  Value value;
  bool swapped = false;
};

/// The KV heads `full` repeats as PyTorch exports repeat_kv: reshape
/// [B, KVH, T, D] -> [B, KVH, 1, T, D], expand to [B, KVH, G, T, D],
/// reshape to [B, KVH * G, T, D], so that head h is head h / G of the
/// source. Recognised by its ops: probing evaluates the whole keys, 2^24
/// values and more per layer at a 4096-token context.
std::optional<Value> repeatedKvHeads(Value full) {
  auto merge = full.getDefiningOp<tfm::ReshapeOp>();
  auto expand = merge ? merge.getInput().getDefiningOp<tfm::ExpandOp>()
                      : tfm::ExpandOp();
  auto split = expand ? expand.getInput().getDefiningOp<tfm::ReshapeOp>()
                      : tfm::ReshapeOp();
  if (!split)
    return std::nullopt;
  Value source = split.getInput();
  ArrayRef<int64_t> in = shapeOf(source), unit = shapeOf(split.getResult()),
                    repeated = shapeOf(expand.getResult()),
                    out = shapeOf(full);
  if (in.size() != 4 || out.size() != 4)
    return std::nullopt;
  int64_t b = in[0], heads = in[1], t = in[2], d = in[3];
  int64_t group = repeated.size() == 5 ? repeated[2] : 0;
  if (ArrayRef<int64_t>(unit) != ArrayRef<int64_t>{b, heads, 1, t, d} ||
      ArrayRef<int64_t>(repeated) !=
          ArrayRef<int64_t>{b, heads, group, t, d} ||
      ArrayRef<int64_t>(out) != ArrayRef<int64_t>{b, heads * group, t, d})
    return std::nullopt;
  return source;
}

KvSource findKvSource(Value full) {
  ArrayRef<int64_t> shape = shapeOf(full);
  KvSource best{full};
  int64_t bestHeads = shape[1], length = shape[2], width = shape[3];
  if (std::optional<Value> source = repeatedKvHeads(full)) {
    best.value = *source;
    bestHeads = shapeOf(*source)[1];
  }
  SmallVector<Value> chain = dataMovementChain(full);
  for (Value candidate : llvm::drop_begin(chain)) {
    if (candidate == best.value)
      continue;
    ArrayRef<int64_t> c = shapeOf(candidate);
    if (c.size() != 4)
      continue;
    for (bool swapped : {false, true}) {
      int64_t heads = swapped ? c[2] : c[1];
      if (c[0] != shape[0] || (swapped ? c[1] : c[2]) != length ||
          c[3] != width || heads <= 0 || shape[1] % heads != 0 ||
          heads > bestHeads || (heads == bestHeads && swapped))
        continue;
      std::optional<eval::Tensor> iota = indexProbe(c);
      std::optional<eval::Tensor> probed =
          iota ? probe(full, candidate, *iota) : std::nullopt;
      if (!probed)
        continue;
      // Element (batch, h, l, d) of `full` must be the candidate's element
      // of KV head h / group (1-based, as the probe numbers them); nested
      // loops rather than dividing each flat index (a 4096-token decode's
      // keys are 2^24 values per layer).
      int64_t group = shape[1] / heads;
      auto repeatsCandidate = [&] {
        const double *value = probed->data.data();
        for (int64_t batch = 0; batch < shape[0]; ++batch)
          for (int64_t h = 0; h < shape[1]; ++h)
            for (int64_t l = 0; l < length; ++l) {
              int64_t kv = h / group;
              int64_t first = swapped
                                  ? ((batch * length + l) * heads + kv) * width
                                  : ((batch * heads + kv) * length + l) * width;
              for (int64_t d = 0; d < width; ++d)
                if (*value++ != double(first + d + 1))
                  return false;
            }
        return true;
      };
      if (repeatsCandidate()) {
        best = {candidate, swapped};
        bestHeads = heads;
      }
    }
  }
  return best;
}

/// Whether `masked(i, j)` over the scores' last two dims is the causal mask
/// with the queries at the last positions.
bool isCausal(const eval::Tensor &mask, ArrayRef<int64_t> scores,
              llvm::function_ref<std::optional<bool>(double)> masked) {
  auto shape = tfm::broadcastShapes(mask.shape, scores);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != scores)
    return false;
  // Over the mask's own elements (a 4096-token mask broadcast over 32 heads
  // would be 537M): each covers the query rows and key columns it is
  // broadcast along.
  int64_t rank = int64_t(mask.shape.size()), lq = scores[2], lk = scores[3];
  int64_t rows = rank >= 2 ? mask.shape[rank - 2] : 1,
          columns = rank >= 1 ? mask.shape[rank - 1] : 1;
  for (int64_t f = 0; f < mask.size(); ++f) {
    std::optional<bool> isMasked = masked(mask.data[f]);
    if (!isMasked)
      return false;
    int64_t j0 = f % columns, i0 = (f / columns) % rows;
    for (int64_t i = rows == 1 ? 0 : i0; i < (rows == 1 ? lq : i0 + 1); ++i)
      for (int64_t j = columns == 1 ? 0 : j0; j < (columns == 1 ? lk : j0 + 1);
           ++j)
        if (*isMasked != (j > i + lk - lq))
          return false;
  }
  return true;
}

/// How a constant's values mask the scores.
enum class MaskReading {
  Added,       // added to the scores: 0 keeps, <= kMaskedScore masks
  NonzeroFill, // a where's condition: nonzero takes the masking fill
  ZeroFill,    // a where's condition: zero takes the masking fill
};

/// What isCausal answered, per mask attribute, scores shape and reading:
/// the layers of a model mask with the same constant, which for a
/// 4096-token prompt is 2^24 values (32 times over in LLaMA3-8B). Held by
/// one pass run's pattern, so the uniqued attributes outlive it.
class CausalMasks {
public:
  bool isCausal(Attribute mask, ArrayRef<int64_t> scores,
                MaskReading reading) {
    Key key{mask.getAsOpaquePointer(), reading, {}};
    llvm::copy(scores, key.scores.begin());
    auto [it, inserted] = known.try_emplace(key, false);
    if (inserted)
      it->second = ::isCausal(eval::tensorFromAttr(cast<ElementsAttr>(mask)),
                              scores, [&](double v) -> std::optional<bool> {
                                switch (reading) {
                                case MaskReading::NonzeroFill:
                                  return v != 0;
                                case MaskReading::ZeroFill:
                                  return v == 0;
                                case MaskReading::Added:
                                  break;
                                }
                                if (v == 0)
                                  return false;
                                if (v <= kMaskedScore)
                                  return true;
                                return std::nullopt;
                              });
    return it->second;
  }

private:
  struct Key {
    const void *mask;
    MaskReading reading;
    std::array<int64_t, 4> scores;
    bool operator<(const Key &o) const {
      return std::tie(mask, reading, scores) <
             std::tie(o.mask, o.reading, o.scores);
    }
  };
  std::map<Key, bool> known;
};

LogicalResult raiseAttention(tfm::MatMulOp output, PatternRewriter &b,
                             CausalMasks &masks) {
  auto softmax = output.getLhs().getDefiningOp<tfm::SoftmaxOp>();
  if (!softmax || !softmax->hasOneUse())
    return failure();
  ArrayRef<int64_t> scores = shapeOf(softmax.getResult());
  if (scores.size() != 4 || softmax.getAxis() != 3)
    return failure();
  Value s = softmax.getInput();
  bool causal = scores[2] == 1; // one query sees every key
  bool masked = false;
  for (auto [x, m] : operandOrders<tfm::AddOp>(s)) {
    auto mask = m.getDefiningOp<tfm::ConstantOp>();
    if (!mask || x.getType() != s.getType())
      continue;
    if (!masks.isCausal(mask.getValue(), scores, MaskReading::Added))
      return failure();
    s = x;
    causal = masked = true;
    break;
  }
  if (!masked)
    if (auto where = s.getDefiningOp<tfm::WhereOp>()) {
      auto cond = where.getCondition().getDefiningOp<tfm::ConstantOp>();
      std::optional<double> lhs = scalarConstant(where.getLhs());
      std::optional<double> rhs = scalarConstant(where.getRhs());
      bool fillLeft = lhs && *lhs <= kMaskedScore;
      bool fillRight = !fillLeft && rhs && *rhs <= kMaskedScore;
      if (!cond || (!fillLeft && !fillRight))
        return failure();
      if (!masks.isCausal(cond.getValue(), scores,
                          fillLeft ? MaskReading::NonzeroFill
                                   : MaskReading::ZeroFill))
        return failure();
      s = fillLeft ? where.getRhs() : where.getLhs();
      if (s.getType() != where.getType())
        return failure();
      causal = true;
    }
  double scale = 1.0;
  s = peelScale(s, scale);
  auto product = s.getDefiningOp<tfm::MatMulOp>();
  if (!product)
    return failure();
  Value q = peelScale(product.getLhs(), scale);
  Value kt = peelScale(product.getRhs(), scale);
  auto transpose = kt.getDefiningOp<tfm::TransposeOp>();
  if (!transpose || shapeOf(q).size() != 4 || shapeOf(kt).size() != 4)
    return failure();
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (perm[0] != 0) // keep the batch where it is
    return failure();
  Value kFull = transpose.getInput();
  // A key transpose built for the match, erased if the match fails.
  Operation *created = nullptr;
  auto fail = [&] {
    if (created)
      b.eraseOp(created);
    return failure();
  };
  if (perm != ArrayRef<int64_t>{0, 1, 3, 2}) {
    SmallVector<int64_t> keyPerm{perm[0], perm[1], perm[3], perm[2]};
    ArrayRef<int64_t> in = shapeOf(kFull);
    SmallVector<int64_t> shape;
    for (int64_t p : keyPerm)
      shape.push_back(in[p]);
    b.setInsertionPoint(transpose);
    created = b.create<tfm::TransposeOp>(
        transpose.getLoc(), RankedTensorType::get(shape, b.getF32Type()),
        kFull, keyPerm);
    kFull = created->getResult(0);
    b.setInsertionPoint(output);
  }
  Value vFull = output.getRhs();
  if (shapeOf(kFull) != shapeOf(vFull) || shapeOf(vFull).size() != 4)
    return fail();
  KvSource kSource = findKvSource(kFull), vSource = findKvSource(vFull);
  auto heads = [](KvSource s) {
    ArrayRef<int64_t> shape = shapeOf(s.value);
    return s.swapped ? shape[2] : shape[1];
  };
  if (heads(kSource) != heads(vSource))
    return fail();
  // A source repeated before the heads were swapped with the positions
  // is swapped here, once.
  auto heads4 = [&](KvSource s) -> Value {
    if (!s.swapped)
      return s.value;
    ArrayRef<int64_t> in = shapeOf(s.value);
    b.setInsertionPointAfterValue(s.value);
    Value t = b.create<tfm::TransposeOp>(
        s.value.getLoc(),
        RankedTensorType::get({in[0], in[2], in[1], in[3]}, b.getF32Type()),
        s.value, ArrayRef<int64_t>{0, 2, 1, 3});
    b.setInsertionPoint(output);
    return t;
  };
  Value k = heads4(kSource), v = heads4(vSource);
  auto attention = b.create<tfm::AttentionOp>(
      output.getLoc(), output.getType(), q, k, v,
      b.getI64IntegerAttr(shapeOf(q)[1]), b.getI64IntegerAttr(shapeOf(k)[1]),
      b.getF64FloatAttr(scale), causal ? b.getUnitAttr() : UnitAttr());
  return raised(b, output, attention);
}

/// raiseAttention with the masks it has checked.
struct RaiseAttentionPattern : OpRewritePattern<tfm::MatMulOp> {
  explicit RaiseAttentionPattern(MLIRContext *context)
      : OpRewritePattern<tfm::MatMulOp>(context) {
    setDebugName("attention");
  }
  LogicalResult matchAndRewrite(tfm::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    return raiseAttention(op, rewriter, masks);
  }
  mutable CausalMasks masks;
};

struct TfmRaiseTransformerPass
    : public wafer::impl::TfmRaiseTransformerBase<TfmRaiseTransformerPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTfmRaiseTransformerPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void wafer::populateTfmRaiseTransformerPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<RaisePattern<tfm::GatherOp>>(context, raiseEmbed, "embed");
  patterns.add<RaisePattern<tfm::MatMulOp>>(context, raiseLinear, "linear");
  patterns.add<RaisePattern<tfm::SliceOp>>(context, raiseProjectionPart,
                                           "projection part");
  patterns.add<RaiseAttentionPattern>(context);
  patterns.add<RaisePattern<tfm::MulOp>>(context, raiseRmsNorm, "rms_norm");
  patterns.add<RaisePattern<tfm::MulOp>>(context, raiseSwiglu, "swiglu");
  patterns.add<RaisePattern<tfm::MulOp>>(context, raiseSilu, "silu");
  patterns
      .add<RaiseRopePattern<tfm::AddOp>, RaiseRopePattern<tfm::SubOp>,
           RaiseRopePattern<tfm::ConcatOp>, RaiseRopePattern<tfm::ReshapeOp>>(
          context);
}
