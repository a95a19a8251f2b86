//===- Kernels.cpp - Reference tensor kernels for the host evaluator ------===//
//
// Every kernel computes in double and rounds its result once per element
// with `finish` (f32 rounds to float, i64 truncates toward zero, Bool is
// 0/1). Elements are addressed by row-major linear index; operands that are
// broadcast, transposed or sliced are read through per-dimension strides
// (see `offsetOf`).
//
//===----------------------------------------------------------------------===//
#include "wafer/Eval/Kernels.h"
#include "wafer/Support/CheckedMath.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>

using llvm::ArrayRef;

namespace wafer::eval {

Tensor::Tensor(ElementKind kind, std::vector<int64_t> shape, double fill)
    : kind(kind), shape(std::move(shape)),
      data(size_t(elementCount(this->shape)), fill) {}

int64_t elementCount(ArrayRef<int64_t> shape) {
  return checkedElementCount(shape).value_or(
      std::numeric_limits<int64_t>::max());
}

int64_t toIndex(double value) {
  // 2^63 is the first double above INT64_MAX; converting it is undefined.
  constexpr double limit = 9223372036854775808.0;
  if (std::isnan(value))
    return 0;
  if (value >= limit)
    return std::numeric_limits<int64_t>::max();
  if (value <= -limit)
    return std::numeric_limits<int64_t>::min();
  return int64_t(value);
}

namespace {

/// Rounds a computed value to what a tensor of `kind` can hold.
double finish(ElementKind kind, double v) {
  switch (kind) {
  case ElementKind::F32:
    return double(float(v));
  case ElementKind::I64:
    return std::trunc(v);
  case ElementKind::Bool:
    return v != 0.0 ? 1.0 : 0.0;
  }
  return v;
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// numpy broadcasting of two shapes: align trailing dimensions; a dimension
/// of size 1 stretches to the other.
std::vector<int64_t> broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    assert((da == db || da == 1 || db == 1) && "shapes do not broadcast");
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

/// Strides, one per dimension of `out`, that read a tensor of `shape`
/// broadcast to `out`: 0 along missing and stretched size-1 dimensions.
std::vector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> out) {
  std::vector<int64_t> own = stridesOf(shape);
  std::vector<int64_t> strides(out.size(), 0);
  size_t lead = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    strides[lead + d] = shape[d] == out[lead + d] ? own[d] : 0;
  return strides;
}

/// Offset, through `strides`, of the element whose row-major linear index
/// in a tensor of shape `shape` is `linear`.
int64_t offsetOf(int64_t linear, ArrayRef<int64_t> shape,
                 ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    offset += (linear % shape[d]) * strides[d];
    linear /= shape[d];
  }
  return offset;
}

/// A copy of x read as if broadcast to `shape` (no rounding: values move).
Tensor expand(const Tensor &x, ArrayRef<int64_t> shape) {
  Tensor out(x.kind, shape.vec());
  std::vector<int64_t> strides = broadcastStrides(x.shape, shape);
  // Row by row along the last dimension: one offset computation per row.
  int64_t inner = shape.empty() ? 1 : shape.back();
  int64_t step = shape.empty() ? 0 : strides.back();
  for (int64_t row = 0; inner > 0 && row < out.size() / inner; ++row) {
    const double *from = x.data.data() + offsetOf(row * inner, shape, strides);
    double *to = out.data.data() + row * inner;
    for (int64_t j = 0; j < inner; ++j)
      to[j] = from[j * step];
  }
  return out;
}

/// max/min that propagate NaN whichever side it is on (as numpy).
double maxOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double minOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double applyUnary(UnaryFn fn, double x) {
  switch (fn) {
  case UnaryFn::Neg:
    return -x;
  case UnaryFn::Sqrt:
    return std::sqrt(x);
  case UnaryFn::Reciprocal:
    return 1.0 / x;
  case UnaryFn::Sigmoid:
    return sigmoid(x);
  case UnaryFn::Exp:
    return std::exp(x);
  case UnaryFn::Cos:
    return std::cos(x);
  case UnaryFn::Sin:
    return std::sin(x);
  case UnaryFn::Tanh:
    return std::tanh(x);
  case UnaryFn::Erf:
    return std::erf(x);
  case UnaryFn::Abs:
    return std::fabs(x);
  case UnaryFn::Relu:
    return x > 0.0 ? x : 0.0;
  case UnaryFn::Silu:
    return x * sigmoid(x);
  case UnaryFn::Not:
    return x == 0.0 ? 1.0 : 0.0;
  }
  return x;
}

/// Integer Div and Mod, on int64. Div truncates toward zero (ONNX, as C++).
/// Mod is ONNX fmod=0: the remainder takes the divisor's sign, like Python's
/// %. Division by zero, undefined in ONNX, is rejected by evaluateOp before
/// any kernel runs; 0 here only keeps the kernel from trapping.
double integerDivMod(BinaryFn fn, double a, double b) {
  int64_t x = toIndex(a), y = toIndex(b);
  if (y == 0)
    return 0.0;
  if (fn == BinaryFn::Div)
    return double(x / y);
  int64_t r = x % y;
  if (r != 0 && (r < 0) != (y < 0))
    r += y;
  return double(r);
}

double applyBinary(BinaryFn fn, ElementKind kind, double a, double b) {
  switch (fn) {
  case BinaryFn::Add:
    return a + b;
  case BinaryFn::Sub:
    return a - b;
  case BinaryFn::Mul:
    return a * b;
  case BinaryFn::Div:
    return kind == ElementKind::I64 ? integerDivMod(fn, a, b) : a / b;
  case BinaryFn::Pow:
    return std::pow(a, b);
  case BinaryFn::Max:
    return maxOf(a, b);
  case BinaryFn::Min:
    return minOf(a, b);
  case BinaryFn::Mod:
    // Floats: ONNX only allows fmod=1, C fmod (sign of the dividend).
    return kind == ElementKind::I64 ? integerDivMod(fn, a, b) : std::fmod(a, b);
  case BinaryFn::Equal:
    return a == b;
  case BinaryFn::Less:
    return a < b;
  case BinaryFn::LessOrEqual:
    return a <= b;
  case BinaryFn::Greater:
    return a > b;
  case BinaryFn::GreaterOrEqual:
    return a >= b;
  case BinaryFn::And:
    return a != 0.0 && b != 0.0;
  case BinaryFn::Or:
    return a != 0.0 || b != 0.0;
  }
  return 0.0;
}

bool givesBool(BinaryFn fn) {
  switch (fn) {
  case BinaryFn::Equal:
  case BinaryFn::Less:
  case BinaryFn::LessOrEqual:
  case BinaryFn::Greater:
  case BinaryFn::GreaterOrEqual:
  case BinaryFn::And:
  case BinaryFn::Or:
    return true;
  default:
    return false;
  }
}

} // namespace

Tensor unary(UnaryFn fn, const Tensor &x) {
  Tensor out(x.kind, x.shape);
  for (int64_t i = 0; i < x.size(); ++i)
    out.data[i] = finish(x.kind, applyUnary(fn, x.data[i]));
  return out;
}

/// Calls `row(first, inner, operands' first elements, operands' steps)` for
/// each row along the last dimension of `shape`, the operands read through
/// broadcast strides: one offset computation per row, not per element (a
/// 4096-token causal mask is 2^24 elements).
template <size_t N, typename Row>
static void forEachRow(ArrayRef<int64_t> shape,
                       const std::array<const Tensor *, N> &operands, Row row) {
  std::array<std::vector<int64_t>, N> strides;
  std::array<int64_t, N> steps;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = broadcastStrides(operands[k]->shape, shape);
    steps[k] = shape.empty() ? 0 : strides[k].back();
  }
  int64_t inner = shape.empty() ? 1 : shape.back(), count = 1;
  for (int64_t extent : shape)
    count *= extent;
  for (int64_t first = 0; inner > 0 && first < count; first += inner) {
    std::array<const double *, N> from;
    for (size_t k = 0; k < N; ++k)
      from[k] = operands[k]->data.data() + offsetOf(first, shape, strides[k]);
    row(first, inner, from, steps);
  }
}

Tensor binary(BinaryFn fn, const Tensor &lhs, const Tensor &rhs) {
  std::vector<int64_t> shape = broadcastShape(lhs.shape, rhs.shape);
  Tensor out(givesBool(fn) ? ElementKind::Bool : lhs.kind, shape);
  forEachRow<2>(shape, {&lhs, &rhs},
                [&](int64_t first, int64_t inner, auto from, auto steps) {
                  double *to = out.data.data() + first;
                  for (int64_t j = 0; j < inner; ++j)
                    to[j] =
                        finish(out.kind,
                               applyBinary(fn, lhs.kind, from[0][j * steps[0]],
                                           from[1][j * steps[1]]));
                });
  return out;
}

Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) {
  std::vector<int64_t> shape =
      broadcastShape(broadcastShape(cond.shape, a.shape), b.shape);
  Tensor out(a.kind, shape);
  forEachRow<3>(shape, {&cond, &a, &b},
                [&](int64_t first, int64_t inner, auto from, auto steps) {
                  double *to = out.data.data() + first;
                  for (int64_t j = 0; j < inner; ++j)
                    to[j] = from[0][j * steps[0]] != 0.0
                                ? from[1][j * steps[1]]
                                : from[2][j * steps[2]];
                });
  return out;
}

Tensor cast(const Tensor &x, ElementKind kind) {
  Tensor out(kind, x.shape);
  for (int64_t i = 0; i < x.size(); ++i)
    out.data[i] = finish(kind, x.data[i]);
  return out;
}

Tensor matmul(const Tensor &a, const Tensor &b) {
  // numpy: a 1-D a is a row [1, K], a 1-D b a column [K, 1]; the promoted
  // dimension is removed from the result.
  std::vector<int64_t> aShape = a.shape, bShape = b.shape;
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    aShape.insert(aShape.begin(), 1);
  if (bVector)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t n = bShape.back();
  assert(bShape[bShape.size() - 2] == k && "matmul inner dimensions differ");

  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  std::vector<int64_t> batch = broadcastShape(aBatch, bBatch);
  // Strides in units of whole matrices.
  std::vector<int64_t> aStrides = broadcastStrides(aBatch, batch);
  std::vector<int64_t> bStrides = broadcastStrides(bBatch, batch);

  std::vector<int64_t> shape = batch;
  if (!aVector)
    shape.push_back(m);
  if (!bVector)
    shape.push_back(n);
  Tensor out(a.kind, shape);

  std::vector<double> acc(size_t(m * n));
  for (int64_t bi = 0, count = elementCount(batch); bi < count; ++bi) {
    const double *am = a.data.data() + offsetOf(bi, batch, aStrides) * m * k;
    const double *bm = b.data.data() + offsetOf(bi, batch, bStrides) * k * n;
    std::fill(acc.begin(), acc.end(), 0.0);
    // i-k-j order: the innermost loop walks contiguous rows of b and acc.
    for (int64_t i = 0; i < m; ++i) {
      double *row = acc.data() + i * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        double aik = am[i * k + kk];
        const double *brow = bm + kk * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += aik * brow[j];
      }
    }
    for (int64_t e = 0; e < m * n; ++e)
      out.data[bi * m * n + e] = finish(out.kind, acc[e]);
  }
  return out;
}

Tensor transpose(const Tensor &x, ArrayRef<int64_t> perm) {
  std::vector<int64_t> own = stridesOf(x.shape);
  std::vector<int64_t> shape(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = x.shape[perm[i]];
    strides[i] = own[perm[i]];
  }
  Tensor out(x.kind, shape);
  for (int64_t i = 0; i < out.size(); ++i)
    out.data[i] = x.data[offsetOf(i, shape, strides)];
  return out;
}

Tensor reshape(const Tensor &x, ArrayRef<int64_t> shape) {
  assert(elementCount(shape) == x.size() && "reshape changes element count");
  Tensor out = x;
  out.shape = shape.vec();
  return out;
}

Tensor broadcastTo(const Tensor &x, ArrayRef<int64_t> shape) {
  return expand(x, shape);
}

Tensor concat(ArrayRef<Tensor> parts, int64_t axis) {
  std::vector<int64_t> shape = parts.front().shape;
  shape[axis] = 0;
  for (const Tensor &p : parts)
    shape[axis] += p.shape[axis];
  Tensor out(parts.front().kind, shape);
  // Each part contributes one contiguous chunk per index of the dimensions
  // before `axis`.
  int64_t outer = elementCount(ArrayRef<int64_t>(shape).take_front(axis));
  auto dst = out.data.begin();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor &p : parts) {
      int64_t chunk = p.size() / outer;
      auto src = p.data.begin() + o * chunk;
      dst = std::copy(src, src + chunk, dst);
    }
  }
  return out;
}

Tensor slice(const Tensor &x, ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
             ArrayRef<int64_t> steps) {
  std::vector<int64_t> own = stridesOf(x.shape);
  std::vector<int64_t> shape(x.shape.size()), strides(x.shape.size());
  int64_t base = 0;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    int64_t step = steps[d];
    // Indices start + i*step strictly before end, in the step's direction.
    int64_t span = step > 0 ? ends[d] - starts[d] : starts[d] - ends[d];
    int64_t stride = step > 0 ? step : -step;
    shape[d] = span > 0 ? (span + stride - 1) / stride : 0;
    strides[d] = step * own[d];
    base += starts[d] * own[d];
  }
  Tensor out(x.kind, shape);
  for (int64_t i = 0; i < out.size(); ++i)
    out.data[i] = x.data[base + offsetOf(i, shape, strides)];
  return out;
}

Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis) {
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  Tensor out(x.kind, shape);
  int64_t dim = x.shape[axis];
  int64_t outer = elementCount(ArrayRef<int64_t>(x.shape).take_front(axis));
  int64_t inner = elementCount(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  auto dst = out.data.begin();
  for (int64_t o = 0; o < outer; ++o) {
    for (double v : indices.data) {
      int64_t index = toIndex(v);
      if (index < 0)
        index += dim;
      assert(index >= 0 && index < dim && "gather index out of range");
      auto src = x.data.begin() + (o * dim + index) * inner;
      dst = std::copy(src, src + inner, dst);
    }
  }
  return out;
}

Tensor reduce(ReduceFn fn, const Tensor &x, ArrayRef<int64_t> axes,
              bool keepdims) {
  // The kept-dims shape has the same row-major layout as the dropped one,
  // so each input element accumulates into the output element found through
  // the kept-dims strides with the reduced axes' strides zeroed.
  std::vector<int64_t> kept = x.shape, dropped;
  int64_t count = 1;
  for (int64_t a : axes) {
    kept[a] = 1;
    count *= x.shape[a];
  }
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!llvm::is_contained(axes, int64_t(d)))
      dropped.push_back(x.shape[d]);
  std::vector<int64_t> strides = broadcastStrides(kept, x.shape);

  double init = fn == ReduceFn::Max   ? -INFINITY
                : fn == ReduceFn::Min ? INFINITY
                                      : 0.0;
  Tensor out(x.kind, keepdims ? kept : dropped, init);
  for (int64_t i = 0; i < x.size(); ++i) {
    double &acc = out.data[offsetOf(i, x.shape, strides)];
    double v = x.data[i];
    acc = fn == ReduceFn::Max   ? maxOf(acc, v)
          : fn == ReduceFn::Min ? minOf(acc, v)
                                : acc + v;
  }
  for (double &v : out.data)
    v = finish(x.kind, fn == ReduceFn::Mean ? v / double(count) : v);
  return out;
}

Tensor softmax(const Tensor &x, int64_t axis) {
  int64_t dim = x.shape[axis];
  int64_t outer = elementCount(ArrayRef<int64_t>(x.shape).take_front(axis));
  int64_t inner = elementCount(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  Tensor out(x.kind, x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      // Elements of one softmax row are `inner` apart.
      int64_t first = o * dim * inner + in;
      double max = -INFINITY;
      for (int64_t j = 0; j < dim; ++j)
        max = std::max(max, x.data[first + j * inner]);
      double sum = 0.0;
      for (int64_t j = 0; j < dim; ++j)
        sum += std::exp(x.data[first + j * inner] - max);
      for (int64_t j = 0; j < dim; ++j) {
        int64_t e = first + j * inner;
        out.data[e] = finish(x.kind, std::exp(x.data[e] - max) / sum);
      }
    }
  }
  return out;
}

Tensor trilu(const Tensor &x, bool upper, int64_t k) {
  int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  Tensor out(x.kind, x.shape);
  for (int64_t e = 0; e < x.size(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    out.data[e] = keep ? x.data[e] : 0.0;
  }
  return out;
}

Tensor range(ElementKind kind, double start, double limit, double delta) {
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  Tensor out(kind, {toIndex(count)});
  for (int64_t i = 0; i < out.size(); ++i)
    out.data[i] = finish(kind, start + double(i) * delta);
  return out;
}

Tensor rmsNorm(const Tensor &x, const Tensor &weight, double epsilon) {
  int64_t width = x.shape.back();
  Tensor out(x.kind, x.shape);
  for (int64_t row = 0; row < x.size(); row += width) {
    double sumSquares = 0.0;
    for (int64_t j = 0; j < width; ++j)
      sumSquares += x.data[row + j] * x.data[row + j];
    double rms = std::sqrt(sumSquares / double(width) + epsilon);
    for (int64_t j = 0; j < width; ++j)
      out.data[row + j] =
          finish(x.kind, x.data[row + j] / rms * weight.data[j]);
  }
  return out;
}

Tensor rope(const Tensor &x, const Tensor &cos, const Tensor &sin,
            bool interleaved) {
  Tensor c = expand(cos, x.shape), s = expand(sin, x.shape);
  int64_t width = x.shape.back(), half = width / 2;
  Tensor out(x.kind, x.shape);
  for (int64_t e = 0; e < x.size(); ++e) {
    int64_t j = e % width;
    // The partner element and its sign in the rotation.
    double partner;
    if (interleaved)
      partner = j % 2 == 0 ? -x.data[e + 1] : x.data[e - 1];
    else
      partner = j < half ? -x.data[e + half] : x.data[e - half];
    out.data[e] = finish(x.kind, x.data[e] * c.data[e] + partner * s.data[e]);
  }
  return out;
}

Tensor attention(const Tensor &q, const Tensor &k, const Tensor &v,
                 double scale, bool causal) {
  int64_t batch = q.shape[0], heads = q.shape[1], lq = q.shape[2];
  int64_t depth = q.shape[3];
  int64_t kvHeads = k.shape[1], lk = k.shape[2];
  int64_t group = heads / kvHeads;
  Tensor out(q.kind, q.shape);
  std::vector<double> scores(lk, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvBase = (b * kvHeads + h / group) * lk * depth;
      for (int64_t i = 0; i < lq; ++i) {
        const double *qi = q.data.data() + ((b * heads + h) * lq + i) * depth;
        // A row whose keys are all masked (only when Lq > Lk) gets NaN, as
        // a -inf mask followed by softmax does.
        double max = -INFINITY;
        for (int64_t j = 0; j < lk; ++j) {
          const double *kj = k.data.data() + kvBase + j * depth;
          double dot = 0.0;
          for (int64_t d = 0; d < depth; ++d)
            dot += qi[d] * kj[d];
          bool masked = causal && j > i + (lk - lq);
          scores[j] = masked ? -INFINITY : dot * scale;
          max = std::max(max, scores[j]);
        }
        double sum = 0.0;
        for (double &s : scores) {
          s = std::exp(s - max);
          sum += s;
        }
        double *oi = out.data.data() + ((b * heads + h) * lq + i) * depth;
        for (int64_t d = 0; d < depth; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < lk; ++j)
            acc += scores[j] * v.data[kvBase + j * depth + d];
          oi[d] = finish(q.kind, acc / sum);
        }
      }
    }
  }
  return out;
}

Tensor swiglu(const Tensor &gate, const Tensor &up) {
  Tensor out(gate.kind, gate.shape);
  for (int64_t i = 0; i < gate.size(); ++i) {
    double g = gate.data[i];
    out.data[i] = finish(gate.kind, g * sigmoid(g) * up.data[i]);
  }
  return out;
}

Tensor embed(const Tensor &table, const Tensor &ids) {
  // Exactly Gather along axis 0: ids.shape + [E], negative ids from the end.
  return gather(table, ids, 0);
}

} // namespace wafer::eval
