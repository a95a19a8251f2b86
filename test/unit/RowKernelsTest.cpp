//===- RowKernelsTest.cpp - The emulator's element-wise and row kernels ---===//
//
// kernels::elementwise, kernels::rowKernel for every row opcode and
// rowKernelExtents. Expected values are computed in the tests in
// double precision from the same inputs. Tolerances: results of exact float
// arithmetic on small integers are compared exactly; a single exp, sqrt or
// dot product within 1e-6 relative (plus 1e-6 absolute near zero); the whole
// flash attention against the direct softmax within 1e-5 of the largest
// output magnitude.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/RowKernels.h"
#include "wafer/Runtime/RowShapes.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace wafer::rt;
using namespace wafer::rt::kernels;
using namespace wafer::rt::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();

bool isNegInf(float v) { return std::isinf(v) && v < 0; }

/// |actual - expected| <= 1e-6 * |expected| + 1e-6.
void expectClose(float actual, double expected, const std::string &what) {
  EXPECT_NEAR(double(actual), expected, 1e-6 * std::fabs(expected) + 1e-6)
      << what;
}

/// Uniform values in [-1, 1) from a fixed seed.
std::vector<float> randomValues(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(count);
  for (float &v : out)
    v = dist(gen);
  return out;
}

//===----------------------------------------------------------------------===//
// elementwise
//===----------------------------------------------------------------------===//

/// One element through the elementwise kernel.
float elementwise(Opcode op, float a, float b) {
  float out = 0;
  kernels::elementwise(op, &a, &b, &out, 1);
  return out;
}

TEST(RowKernels, ElementwiseKinds) {
  EXPECT_EQ(elementwise(Opcode::Add, 2.0f, 3.5f), 5.5f);
  EXPECT_EQ(elementwise(Opcode::Mul, -2.0f, 3.5f), -7.0f);
  EXPECT_EQ(elementwise(Opcode::Max, -1.0f, -2.0f), -1.0f);
  EXPECT_EQ(elementwise(Opcode::Max, -kInf, -3.0f), -3.0f);
  // swiglu(a, b) = silu(a) * b, silu(v) = v / (1 + e^-v).
  for (float a : {-3.0f, -0.5f, 0.0f, 1.5f, 6.0f})
    for (float b : {-2.0f, 0.25f, 1.0f}) {
      double expected = double(a) / (1.0 + std::exp(-double(a))) * double(b);
      expectClose(elementwise(Opcode::Swiglu, a, b), expected,
                  "swiglu(" + std::to_string(a) + ", " + std::to_string(b) +
                      ")");
    }
  EXPECT_EQ(elementwise(Opcode::Swiglu, 0.0f, 5.0f), 0.0f);
  // Not an element-wise opcode.
  EXPECT_EQ(elementwise(Opcode::GemmTile, 2.0f, 3.0f), 0.0f);
}

TEST(RowKernels, ElementwiseRowsEqualTheirElementsAlsoInPlace) {
  std::vector<float> a(37), b(37);
  for (int i = 0; i < 37; ++i) {
    a[i] = float(i % 7) - 3.25f;
    b[i] = float(i % 5) * 0.5f - 1.0f;
  }
  for (Opcode op : {Opcode::Add, Opcode::Mul, Opcode::Max, Opcode::Swiglu}) {
    std::vector<float> out(37), inPlace = a;
    kernels::elementwise(op, a.data(), b.data(), out.data(), 37);
    kernels::elementwise(op, inPlace.data(), b.data(), inPlace.data(), 37);
    for (int i = 0; i < 37; ++i) {
      EXPECT_EQ(out[i], elementwise(op, a[i], b[i])) << i;
      EXPECT_EQ(inPlace[i], out[i]) << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

RowResult reduce(ReduceKind kind, const std::vector<float> &in, int64_t m,
                 int64_t n, std::vector<float> &out) {
  out.assign(size_t(m), 12345.0f);
  RowArgs args;
  args.out = out.data();
  args.a = in.data();
  args.m = m;
  args.n = n;
  args.k = int64_t(kind);
  return rowKernel(Opcode::Reduce, args);
}

TEST(RowKernels, ReduceEachKind) {
  // [2, 3], all negative in the second row: the max starts from -inf, not 0.
  std::vector<float> in = {1, -2, 3, -4, -5, -6};
  std::vector<float> out;
  RowResult r = reduce(ReduceKind::Sum, in, 2, 3, out);
  EXPECT_EQ(out, (std::vector<float>{2, -15}));
  EXPECT_EQ(r.written, 2);
  EXPECT_EQ(r.work, 6);
  reduce(ReduceKind::SumSquares, in, 2, 3, out);
  EXPECT_EQ(out, (std::vector<float>{14, 77}));
  reduce(ReduceKind::Max, in, 2, 3, out);
  EXPECT_EQ(out, (std::vector<float>{3, -4}));
  // A max over -inf entries (masked scores) stays -inf.
  std::vector<float> masked = {-kInf, -kInf, -kInf, 0.5f};
  reduce(ReduceKind::Max, masked, 2, 2, out);
  EXPECT_TRUE(isNegInf(out[0]));
  EXPECT_EQ(out[1], 0.5f);
}

TEST(RowKernels, ReduceEmptyRows) {
  std::vector<float> in;
  std::vector<float> out;
  reduce(ReduceKind::Sum, in, 2, 0, out);
  EXPECT_EQ(out, (std::vector<float>{0, 0}));
  reduce(ReduceKind::SumSquares, in, 2, 0, out);
  EXPECT_EQ(out, (std::vector<float>{0, 0}));
  reduce(ReduceKind::Max, in, 2, 0, out);
  EXPECT_TRUE(isNegInf(out[0]) && isNegInf(out[1]));
}

//===----------------------------------------------------------------------===//
// RmsScale
//===----------------------------------------------------------------------===//

TEST(RowKernels, RmsScaleWholeRows) {
  // m = 2 rows of n = 4; the sums of squares come from Reduce, k = n.
  std::vector<float> in = {1, -2, 3, 0.5f, -4, 2, 0.25f, 8};
  std::vector<float> weight = {1, 0.5f, 2, -1};
  std::vector<float> sumsq;
  reduce(ReduceKind::SumSquares, in, 2, 4, sumsq);
  std::vector<float> out(8, 0.0f);
  RowArgs args;
  args.out = out.data();
  args.a = in.data();
  args.b = sumsq.data();
  args.c = weight.data();
  args.m = 2;
  args.n = 4;
  args.k = 4;
  args.scalar = 1e-5;
  RowResult r = rowKernel(Opcode::RmsScale, args);
  EXPECT_EQ(r.written, 8);
  EXPECT_EQ(r.work, 16);
  for (int64_t i = 0; i < 2; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < 4; ++j)
      ss += double(in[i * 4 + j]) * in[i * 4 + j];
    double scale = 1.0 / std::sqrt(ss / 4 + 1e-5);
    for (int64_t j = 0; j < 4; ++j)
      expectClose(out[i * 4 + j], in[i * 4 + j] * scale * weight[j],
                  "out[" + std::to_string(i) + ", " + std::to_string(j) + "]");
  }
}

TEST(RowKernels, RmsScalePartOfASplitRow) {
  // A core holding 2 of the row's k = 8 elements: sumsq is the allreduced
  // total (32: mean square 4), weight the core's part. In place (out == in)
  // as the lowering may do.
  std::vector<float> x = {2, -6};
  std::vector<float> sumsq = {32};
  std::vector<float> weight = {1, 3};
  RowArgs args;
  args.out = x.data();
  args.a = x.data();
  args.b = sumsq.data();
  args.c = weight.data();
  args.m = 1;
  args.n = 2;
  args.k = 8;
  args.scalar = 0.0;
  rowKernel(Opcode::RmsScale, args);
  EXPECT_FLOAT_EQ(x[0], 1.0f);
  EXPECT_FLOAT_EQ(x[1], -9.0f);
}

//===----------------------------------------------------------------------===//
// Rope
//===----------------------------------------------------------------------===//

/// Rotate-half RoPE of x [m, k, n] with cos, sin [m, n], in double.
std::vector<double> ropeReference(const std::vector<float> &x,
                                  const std::vector<float> &cos,
                                  const std::vector<float> &sin, int64_t m,
                                  int64_t k, int64_t n) {
  std::vector<double> out(x.size());
  int64_t half = n / 2;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t h = 0; h < k; ++h)
      for (int64_t d = 0; d < n; ++d) {
        const float *head = x.data() + (i * k + h) * n;
        double rotated = d < half ? -double(head[d + half]) : head[d - half];
        out[(i * k + h) * n + d] =
            double(head[d]) * cos[i * n + d] + rotated * sin[i * n + d];
      }
  return out;
}

TEST(RowKernels, RopeRotateHalfPerHeadAndRow) {
  const int64_t m = 2, k = 3, n = 4;
  std::vector<float> x(m * k * n);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) - 10.0f;
  // Row r: angles (r + 1) * theta_d, as RoPE's tables (the same angle in
  // both halves).
  std::vector<float> cos(m * n), sin(m * n);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t d = 0; d < n; ++d) {
      double theta = double(r + 1) * std::pow(100.0, -double(d % 2) / 2);
      cos[r * n + d] = float(std::cos(theta));
      sin[r * n + d] = float(std::sin(theta));
    }
  std::vector<double> expected = ropeReference(x, cos, sin, m, k, n);

  std::vector<float> out(x.size(), 0.0f);
  RowArgs args;
  args.out = out.data();
  args.a = x.data();
  args.b = cos.data();
  args.c = sin.data();
  args.m = m;
  args.k = k;
  args.n = n;
  RowResult r = rowKernel(Opcode::Rope, args);
  EXPECT_EQ(r.written, m * k * n);
  EXPECT_EQ(r.work, 3 * m * k * n);
  for (size_t i = 0; i < out.size(); ++i)
    expectClose(out[i], expected[i], "out[" + std::to_string(i) + "]");

  // In place (out aliases in): every head is rotated from a copy.
  std::vector<float> inPlace = x;
  args.out = inPlace.data();
  args.a = inPlace.data();
  rowKernel(Opcode::Rope, args);
  EXPECT_EQ(inPlace, out);
}

TEST(RowKernels, RopeIdentityAndQuarterTurn) {
  // cos = 1, sin = 0 leaves x; cos = 0, sin = 1 gives [-x2, -x3, x0, x1].
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> one = {1, 1, 1, 1}, zero = {0, 0, 0, 0};
  std::vector<float> out(4);
  RowArgs args;
  args.out = out.data();
  args.a = x.data();
  args.b = one.data();
  args.c = zero.data();
  args.m = 1;
  args.k = 1;
  args.n = 4;
  rowKernel(Opcode::Rope, args);
  EXPECT_EQ(out, x);
  args.b = zero.data();
  args.c = one.data();
  rowKernel(Opcode::Rope, args);
  EXPECT_EQ(out, (std::vector<float>{-3, -4, 1, 2}));
}

//===----------------------------------------------------------------------===//
// AttnScores, SoftmaxExp, AttnValues, DivRows
//===----------------------------------------------------------------------===//

struct Scores {
  // m kv heads, g query heads each, k keys, n dims.
  int64_t m = 2, g = 2, k = 3, n = 4;
  std::vector<float> q, keys;
  Scores() {
    q = randomValues(size_t(m * g * n), 1);
    keys = randomValues(size_t(m * k * n), 2);
  }
  double dot(int64_t h, int64_t j, int64_t key) const {
    double s = 0;
    for (int64_t d = 0; d < n; ++d)
      s += double(q[(h * g + j) * n + d]) * keys[(h * k + key) * n + d];
    return s;
  }
  std::vector<float> run(int64_t valid, double scale, RowResult *result) {
    std::vector<float> s(size_t(m * g * k), 777.0f);
    RowArgs args;
    args.out = s.data();
    args.a = q.data();
    args.b = keys.data();
    args.m = m;
    args.groups = g;
    args.k = k;
    args.n = n;
    args.scalar = scale;
    args.expr = valid;
    RowResult r = rowKernel(Opcode::AttnScores, args);
    if (result)
      *result = r;
    return s;
  }
};

TEST(RowKernels, AttnScoresMasksKeysFromValidOn) {
  Scores t;
  RowResult r;
  std::vector<float> s = t.run(/*valid=*/2, /*scale=*/0.5, &r);
  EXPECT_EQ(r.written, t.m * t.g * t.k);
  EXPECT_EQ(r.work, t.m * t.g * t.k * t.n);
  for (int64_t h = 0; h < t.m; ++h)
    for (int64_t j = 0; j < t.g; ++j)
      for (int64_t key = 0; key < t.k; ++key) {
        float v = s[(h * t.g + j) * t.k + key];
        std::string what = "s[" + std::to_string(h) + ", " +
                           std::to_string(j) + ", " + std::to_string(key) + "]";
        if (key < 2)
          expectClose(v, 0.5 * t.dot(h, j, key), what);
        else
          EXPECT_TRUE(isNegInf(v)) << what << " = " << v;
      }
}

TEST(RowKernels, AttnScoresValidBounds) {
  Scores t;
  // No valid key on this core (a row of cores past the sequence's end).
  for (int64_t valid : {int64_t(0), int64_t(-3)})
    for (float v : t.run(valid, 1.0, nullptr))
      EXPECT_TRUE(isNegInf(v)) << "valid " << valid;
  // Every key valid, including valid > k.
  for (int64_t valid : {t.k, t.k + 5}) {
    std::vector<float> s = t.run(valid, 1.0, nullptr);
    for (int64_t h = 0; h < t.m; ++h)
      for (int64_t j = 0; j < t.g; ++j)
        for (int64_t key = 0; key < t.k; ++key)
          expectClose(s[(h * t.g + j) * t.k + key], t.dot(h, j, key),
                      "valid " + std::to_string(valid));
  }
}

TEST(RowKernels, SoftmaxExpSubtractsTheRowMax) {
  // Row 0: plain; row 1: masked entries give 0; row 2: every key masked
  // (max -inf) gives zeros, not NaN.
  std::vector<float> s = {1, 2, 3, -kInf, 0, -kInf, -kInf, -kInf, -kInf};
  std::vector<float> max = {3, 0, -kInf};
  RowArgs args;
  args.out = s.data();
  args.a = max.data();
  args.m = 3;
  args.n = 3;
  RowResult r = rowKernel(Opcode::SoftmaxExp, args);
  EXPECT_EQ(r.written, 9);
  EXPECT_EQ(r.work, 9);
  expectClose(s[0], std::exp(-2.0), "s[0, 0]");
  expectClose(s[1], std::exp(-1.0), "s[0, 1]");
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_EQ(s[3], 0.0f);
  EXPECT_EQ(s[4], 1.0f);
  EXPECT_EQ(s[5], 0.0f);
  for (int i = 6; i < 9; ++i)
    EXPECT_EQ(s[i], 0.0f) << "masked row, column " << i - 6;
}

TEST(RowKernels, AttnValuesAccumulates) {
  // m = 2 kv heads, g = 2, k = 3 keys, n = 2 dims; out starts at 1 and
  // is added to.
  const int64_t m = 2, g = 2, k = 3, n = 2;
  std::vector<float> p = {1, 0, 2, 0.5f, 0.5f, 0, // head 0
                          0, 1, 1, 3, 0, 0};       // head 1
  std::vector<float> values = {1, 2, 3, 4, 5, 6,    // head 0: keys 0..2
                               -1, 0, 0, -2, 4, 4}; // head 1
  std::vector<float> out(m * g * n, 1.0f);
  RowArgs args;
  args.out = out.data();
  args.a = p.data();
  args.b = values.data();
  args.m = m;
  args.groups = g;
  args.k = k;
  args.n = n;
  RowResult r = rowKernel(Opcode::AttnValues, args);
  EXPECT_EQ(r.written, m * g * n);
  EXPECT_EQ(r.work, m * g * k * n);
  // head 0, q 0: 1 * [1, 2] + 2 * [5, 6] = [11, 14] (+1).
  // head 0, q 1: 0.5 * [1, 2] + 0.5 * [3, 4] = [2, 3] (+1).
  // head 1, q 0: [0, -2] + [4, 4] = [4, 2] (+1).
  // head 1, q 1: 3 * [-1, 0] = [-3, 0] (+1).
  EXPECT_EQ(out, (std::vector<float>{12, 15, 3, 4, 5, 3, -2, 1}));
}

TEST(RowKernels, DivRows) {
  std::vector<float> a = {2, 4, 6, -3, 9, 1.5f};
  std::vector<float> z = {2, -3};
  RowArgs args;
  args.out = a.data();
  args.a = z.data();
  args.m = 2;
  args.n = 3;
  RowResult r = rowKernel(Opcode::DivRows, args);
  EXPECT_EQ(r.written, 6);
  EXPECT_EQ(r.work, 6);
  EXPECT_EQ(a, (std::vector<float>{1, 2, 3, 1, -3, -0.5f}));
}

TEST(RowKernels, DecodeAttentionPipelineMatchesSoftmax) {
  // The decode sequence on one core: scores, row max, exp, row sum, values,
  // divide; against a direct softmax over the valid keys.
  Scores t;
  const int64_t valid = 2;
  const double scale = 0.7;
  std::vector<float> s = t.run(valid, scale, nullptr);
  int64_t rows = t.m * t.g;
  std::vector<float> max, sum;
  reduce(ReduceKind::Max, s, rows, t.k, max);
  RowArgs e;
  e.out = s.data();
  e.a = max.data();
  e.m = rows;
  e.n = t.k;
  rowKernel(Opcode::SoftmaxExp, e);
  reduce(ReduceKind::Sum, s, rows, t.k, sum);
  std::vector<float> values = randomValues(size_t(t.m * t.k * t.n), 3);
  std::vector<float> out(size_t(rows * t.n), 0.0f);
  RowArgs v;
  v.out = out.data();
  v.a = s.data();
  v.b = values.data();
  v.m = t.m;
  v.groups = t.g;
  v.k = t.k;
  v.n = t.n;
  rowKernel(Opcode::AttnValues, v);
  RowArgs d;
  d.out = out.data();
  d.a = sum.data();
  d.m = rows;
  d.n = t.n;
  rowKernel(Opcode::DivRows, d);
  for (int64_t h = 0; h < t.m; ++h)
    for (int64_t j = 0; j < t.g; ++j) {
      std::vector<double> w(static_cast<size_t>(valid));
      double wmax = -kInfD, wsum = 0;
      for (int64_t key = 0; key < valid; ++key) {
        w[key] = scale * t.dot(h, j, key);
        wmax = std::max(wmax, w[key]);
      }
      for (double &x : w) {
        x = std::exp(x - wmax);
        wsum += x;
      }
      for (int64_t dd = 0; dd < t.n; ++dd) {
        double expected = 0;
        for (int64_t key = 0; key < valid; ++key)
          expected += w[key] / wsum * values[(h * t.k + key) * t.n + dd];
        EXPECT_NEAR(out[(h * t.g + j) * t.n + dd], expected, 1e-5)
            << "head " << h << " group " << j << " dim " << dd;
      }
    }
}

TEST(RowKernels, LaneAttentionAcrossCoresMatchesSoftmax) {
  // Decode attention over lanes on a row of W cores: 2 KV heads of
  // dimension 6 (3 lanes each, 6 lanes; the last core holds only padding),
  // 2 query heads per KV head, 4 key slots of which 3 are valid. Every
  // core's lane_scores, summed over the row, then the softmax and each
  // core's lane_values, against a direct softmax in double precision.
  const int64_t kvHeads = 2, dim = 6, lanesPerHead = dim / 2, group = 2;
  const int64_t keys = 4, valid = 3, cores = 4, perCore = 2;
  const double scale = 0.4;
  const int64_t lanes = kvHeads * lanesPerHead, heads = kvHeads * group;
  std::vector<float> q = randomValues(size_t(lanes * group * 2), 11);
  std::vector<float> k = randomValues(size_t(lanes * keys * 2), 12);
  std::vector<float> v = randomValues(size_t(lanes * keys * 2), 13);
  // A core's tile of lanes [perCore, ...], zero past the last lane.
  auto tile = [&](const std::vector<float> &all, int64_t core, int64_t row) {
    std::vector<float> out(size_t(perCore * row), 0.0f);
    for (int64_t j = 0; j < perCore && core * perCore + j < lanes; ++j)
      std::copy_n(all.begin() + (core * perCore + j) * row, row,
                  out.begin() + j * row);
    return out;
  };
  std::vector<float> scores(size_t(heads * keys), 0.0f);
  for (int64_t c = 0; c < cores; ++c) {
    std::vector<float> qc = tile(q, c, group * 2), kc = tile(k, c, keys * 2);
    std::vector<float> partial(scores.size());
    RowArgs a;
    a.out = partial.data();
    a.a = qc.data();
    a.b = kc.data();
    a.m = perCore, a.groups = group, a.k = keys, a.n = lanesPerHead;
    a.scalar = scale, a.expr = valid, a.expr2 = c * perCore;
    a.outElements = int64_t(partial.size());
    EXPECT_EQ(rowKernel(Opcode::LaneScores, a).written,
              int64_t(partial.size()));
    for (size_t i = 0; i < scores.size(); ++i)
      scores[i] += partial[i];
  }
  // Keys from `valid` on are masked in every core's partial scores.
  for (int64_t h = 0; h < heads; ++h)
    EXPECT_TRUE(isNegInf(scores[h * keys + valid])) << "query head " << h;
  std::vector<float> max, sum;
  reduce(ReduceKind::Max, scores, heads, keys, max);
  RowArgs e;
  e.out = scores.data(), e.a = max.data(), e.m = heads, e.n = keys;
  rowKernel(Opcode::SoftmaxExp, e);
  reduce(ReduceKind::Sum, scores, heads, keys, sum);
  RowArgs d;
  d.out = scores.data(), d.a = sum.data(), d.m = heads, d.n = keys;
  rowKernel(Opcode::DivRows, d);
  for (int64_t c = 0; c < cores; ++c) {
    std::vector<float> vc = tile(v, c, keys * 2);
    std::vector<float> out(size_t(perCore * group * 2), -1.0f);
    RowArgs w;
    w.out = out.data(), w.a = scores.data(), w.b = vc.data();
    w.m = perCore, w.groups = group, w.k = keys, w.n = lanesPerHead;
    w.expr = c * perCore, w.aElements = int64_t(scores.size());
    rowKernel(Opcode::LaneValues, w);
    for (int64_t j = 0; j < perCore; ++j) {
      int64_t lane = c * perCore + j, head = lane / lanesPerHead;
      for (int64_t g = 0; g < group; ++g) {
        if (lane >= lanes) {
          // Padding lanes hold zeros and weigh nothing.
          EXPECT_EQ(out[(j * group + g) * 2], 0.0f) << "core " << c;
          EXPECT_EQ(out[(j * group + g) * 2 + 1], 0.0f) << "core " << c;
          continue;
        }
        // The direct softmax of query head (head, g) over the valid keys.
        std::vector<double> weight(static_cast<size_t>(valid));
        double wmax = -kInfD, wsum = 0;
        for (int64_t key = 0; key < valid; ++key) {
          double dot = 0;
          for (int64_t l = head * lanesPerHead;
               l < (head + 1) * lanesPerHead; ++l)
            for (int64_t u = 0; u < 2; ++u)
              dot += double(q[(l * group + g) * 2 + u]) *
                     k[(l * keys + key) * 2 + u];
          weight[key] = scale * dot;
          wmax = std::max(wmax, weight[key]);
        }
        for (double &x : weight)
          wsum += (x = std::exp(x - wmax));
        for (int64_t u = 0; u < 2; ++u) {
          double expected = 0;
          for (int64_t key = 0; key < valid; ++key)
            expected += weight[key] / wsum * v[(lane * keys + key) * 2 + u];
          EXPECT_NEAR(out[(j * group + g) * 2 + u], expected, 1e-5)
              << "core " << c << " lane " << lane << " group " << g;
        }
      }
    }
  }
}

TEST(RowKernels, PrefillLaneAttentionAcrossCoresMatchesCausalSoftmax) {
  // Prefill attention over lanes on a grid of `blocks` rows of `cores`
  // cores: 2 KV heads of dimension 6 (6 lanes, 2 per core, the last core
  // padding), 2 query heads per KV head, 9 positions in blocks of 3. Each
  // row of cores sees the key blocks in ring order; per block every core's
  // lane_flash_scores are summed over the row, each core runs flash_stats
  // and lane_flash_values, and lane_div_rows ends; against a direct causal
  // softmax in double precision.
  const int64_t kvHeads = 2, dim = 6, lanesPerHead = dim / 2, group = 2;
  const int64_t rowsPerBlock = 3, blocks = 3, cores = 4, perCore = 2;
  const int64_t positions = rowsPerBlock * blocks;
  const double scale = 0.4;
  const int64_t lanes = kvHeads * lanesPerHead, heads = kvHeads * group;
  std::vector<float> q =
      randomValues(size_t(positions * lanes * group * 2), 21);
  std::vector<float> k = randomValues(size_t(positions * lanes * 2), 22);
  std::vector<float> v = randomValues(size_t(positions * lanes * 2), 23);
  // A core's tile of block b: [rowsPerBlock, perCore, width], zero past the
  // last lane.
  auto tile = [&](const std::vector<float> &all, int64_t b, int64_t c,
                  int64_t width, std::vector<float> &out, size_t at) {
    for (int64_t r = 0; r < rowsPerBlock; ++r)
      for (int64_t j = 0; j < perCore; ++j) {
        int64_t lane = c * perCore + j;
        for (int64_t e = 0; e < width; ++e)
          out[at + (r * perCore + j) * width + e] =
              lane < lanes
                  ? all[((b * rowsPerBlock + r) * lanes + lane) * width + e]
                  : 0.0f;
      }
  };
  const int64_t rows = rowsPerBlock * heads;
  for (int64_t qb = 0; qb < blocks; ++qb) {
    std::vector<std::vector<float>> out(
        cores, std::vector<float>(size_t(rowsPerBlock * perCore * group * 2)));
    std::vector<std::vector<float>> ml(cores,
                                       std::vector<float>(size_t(3 * rows)));
    for (int64_t s = 0; s < blocks; ++s) {
      int64_t kb = (qb + s) % blocks;
      std::vector<float> scores(size_t(rows * rowsPerBlock), 0.0f);
      std::vector<std::vector<float>> kv(
          cores, std::vector<float>(size_t(4 * rowsPerBlock * perCore)));
      for (int64_t c = 0; c < cores; ++c) {
        std::vector<float> qc(size_t(rowsPerBlock * perCore * group * 2));
        tile(q, qb, c, group * 2, qc, 0);
        tile(k, kb, c, 2, kv[c], 0);
        tile(v, kb, c, 2, kv[c], size_t(2 * rowsPerBlock * perCore));
        std::vector<float> partial(scores.size(), -1.0f);
        RowArgs a;
        a.out = partial.data(), a.a = qc.data(), a.b = kv[c].data();
        a.m = perCore, a.groups = group, a.k = rowsPerBlock, a.n = lanesPerHead;
        a.scalar = scale, a.expr = c * perCore;
        a.outElements = int64_t(partial.size());
        EXPECT_EQ(rowKernel(Opcode::LaneFlashScores, a).written,
                  int64_t(partial.size()));
        for (size_t i = 0; i < scores.size(); ++i)
          scores[i] += partial[i];
      }
      for (int64_t c = 0; c < cores; ++c) {
        std::vector<float> p = scores;
        RowArgs st;
        st.out = p.data(), st.a = ml[c].data();
        st.m = heads, st.k = rowsPerBlock;
        st.expr = kb * rowsPerBlock, st.expr2 = qb * rowsPerBlock;
        rowKernel(Opcode::FlashStats, st);
        RowArgs w;
        w.out = out[c].data(), w.a = p.data(), w.b = kv[c].data(),
        w.c = ml[c].data();
        w.m = perCore, w.groups = group, w.k = rowsPerBlock, w.n = lanesPerHead;
        w.expr = c * perCore, w.aElements = int64_t(p.size());
        rowKernel(Opcode::LaneFlashValues, w);
      }
    }
    for (int64_t c = 0; c < cores; ++c) {
      RowArgs d;
      d.out = out[c].data(), d.a = ml[c].data();
      d.m = perCore, d.groups = group, d.k = rowsPerBlock, d.n = lanesPerHead;
      d.expr = c * perCore, d.aElements = int64_t(ml[c].size());
      rowKernel(Opcode::LaneDivRows, d);
      for (int64_t r = 0; r < rowsPerBlock; ++r)
        for (int64_t j = 0; j < perCore; ++j)
          for (int64_t g = 0; g < group; ++g) {
            int64_t lane = c * perCore + j, head = lane / lanesPerHead;
            const float *got = &out[c][((r * perCore + j) * group + g) * 2];
            if (lane >= lanes) {
              EXPECT_EQ(got[0], 0.0f) << "core " << c;
              EXPECT_EQ(got[1], 0.0f) << "core " << c;
              continue;
            }
            // Query position qp against keys 0..qp of query head (head, g).
            int64_t qp = qb * rowsPerBlock + r;
            std::vector<double> weight(size_t(qp + 1));
            double wmax = -kInfD, wsum = 0;
            for (int64_t key = 0; key <= qp; ++key) {
              double dot = 0;
              for (int64_t l = head * lanesPerHead;
                   l < (head + 1) * lanesPerHead; ++l)
                for (int64_t u = 0; u < 2; ++u)
                  dot += double(q[((qp * lanes + l) * group + g) * 2 + u]) *
                         k[(key * lanes + l) * 2 + u];
              weight[key] = scale * dot;
              wmax = std::max(wmax, weight[key]);
            }
            for (double &x : weight)
              wsum += (x = std::exp(x - wmax));
            for (int64_t u = 0; u < 2; ++u) {
              double expected = 0;
              for (int64_t key = 0; key <= qp; ++key)
                expected +=
                    weight[key] / wsum * v[(key * lanes + lane) * 2 + u];
              EXPECT_NEAR(got[u], expected, 1e-5)
                  << "position " << qp << " lane " << lane << " group " << g;
            }
          }
    }
  }
}

//===----------------------------------------------------------------------===//
// Regrid
//===----------------------------------------------------------------------===//

bool succeeded(llvm::Error e) {
  bool failed = bool(e);
  llvm::consumeError(std::move(e));
  return !failed;
}

/// Re-blocks the columns of an m x cols matrix along an axis of E cores:
/// from blocks of width k (S slots per core) to blocks of width n (T slots).
/// Runs Regrid on every destination core Q with the tiles of every source
/// core P and checks what each Q ends up holding. Padding columns (past
/// cols, or past a balanced block's end) hold -1 in the sources and must
/// stay -1 in the destinations.
void checkRegrid(int64_t m, int64_t cols, int64_t extent, int64_t k, int64_t n,
                 bool balanced = false, int64_t parts = 1) {
  SCOPED_TRACE("m " + std::to_string(m) + " cols " + std::to_string(cols) +
               " E " + std::to_string(extent) + " k " + std::to_string(k) +
               " n " + std::to_string(n) + (balanced ? " balanced" : "") +
               " parts " + std::to_string(parts));
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t srcSlots = ceilDiv(ceilDiv(cols, k), extent);
  int64_t dstSlots = ceilDiv(ceilDiv(cols, n), extent);
  // The matrix column at offset c of block b of `blocks` of width `width`;
  // -1 for padding (ceil-sized blocks: past cols, which a source holds as
  // -1 and copies).
  auto column = [&](int64_t b, int64_t blocks, int64_t width, int64_t c) {
    if (!balanced)
      return b * width + c;
    int64_t start = blockStart(cols, blocks, true, b, parts);
    return start + c < blockStart(cols, blocks, true, b + 1, parts) ? start + c
                                                                    : -1;
  };
  auto value = [&](int64_t row, int64_t col) -> float {
    return col >= 0 && col < cols ? float(row * 1000 + col) : -1.0f;
  };
  for (int64_t q = 0; q < extent; ++q) {
    std::vector<float> dst(size_t(dstSlots * m * n), -1.0f);
    int64_t copied = 0;
    for (int64_t p = 0; p < extent; ++p) {
      // Core p holds blocks p, p + E, ... as slots [S][m][k].
      std::vector<float> src(size_t(srcSlots * m * k));
      for (int64_t s = 0; s < srcSlots; ++s)
        for (int64_t row = 0; row < m; ++row)
          for (int64_t c = 0; c < k; ++c)
            src[(s * m + row) * k + c] =
                value(row, column(p + s * extent, srcSlots * extent, k, c));
      RowArgs args;
      args.out = dst.data();
      args.a = src.data();
      args.m = m;
      args.groups = extent;
      args.k = k;
      args.n = n;
      args.expr = p;
      args.expr2 = q;
      args.outElements = int64_t(dst.size());
      args.aElements = int64_t(src.size());
      args.length = balanced ? cols : 0;
      args.parts = parts;
      EXPECT_TRUE(
          succeeded(checkRegridLength(m, extent, k, n, args.length, parts,
                                      args.outElements, args.aElements)));
      RowResult r = rowKernel(Opcode::Regrid, args);
      EXPECT_EQ(r.written, int64_t(dst.size()));
      copied += r.work;
    }
    int64_t sourceColumns = srcSlots * extent * k, shared = 0;
    for (int64_t t = 0; t < dstSlots; ++t)
      for (int64_t c = 0; c < n; ++c) {
        int64_t col = column(q + t * extent, dstSlots * extent, n, c);
        if (col >= 0 && col < sourceColumns)
          ++shared;
        for (int64_t row = 0; row < m; ++row)
          EXPECT_EQ(dst[(t * m + row) * n + c], value(row, col))
              << "core " << q << " slot " << t << " row " << row
              << " column " << col;
      }
    // Every destination column some source holds is copied exactly once.
    EXPECT_EQ(copied, m * shared) << "core " << q;
  }
}

TEST(RowKernels, RegridToFinerBlocks) {
  // [*, x:3] -> [*, x:6]: one block of 4 per core to two of 2.
  checkRegrid(/*m=*/2, /*cols=*/12, /*E=*/3, /*k=*/4, /*n=*/2);
}

TEST(RowKernels, RegridToCoarserBlocks) {
  // [*, x:6] -> [*, x:3].
  checkRegrid(2, 12, 3, 2, 4);
}

TEST(RowKernels, RegridUnevenWidths) {
  // 10 columns on 2 cores: blocks of 5 -> 4 blocks of 3 (12 columns, the
  // last two padding).
  checkRegrid(3, 10, 2, 5, 3);
  // The tiny model's 64 columns on a width-6 grid: [x:6] (width 11) ->
  // [x:12] (width 6), as the 4x6 prefill plan relays out rms_norm's output.
  checkRegrid(2, 64, 6, 11, 6);
  checkRegrid(2, 64, 6, 6, 11);
}

TEST(RowKernels, RegridBalancedBlocks) {
  // The same re-blockings with balanced blocks: 64 columns in 6 blocks of
  // 11 or 10, to 12 blocks of 6 or 5, and back; 10 in 2 of 5, to 4 of 3
  // or 2.
  checkRegrid(2, 64, 6, 11, 6, /*balanced=*/true);
  checkRegrid(2, 64, 6, 6, 11, true);
  checkRegrid(3, 10, 2, 5, 3, true);
  checkRegrid(2, 12, 3, 4, 2, true);
  // A length whose balanced blocks are not the widths is refused.
  EXPECT_FALSE(succeeded(checkRegridLength(2, 6, 11, 6, 70, 1, 24, 22)));
}

TEST(RowKernels, RegridBalancedInParts) {
  // Lanes into a MeshGEMM on a 2x10 grid: 16 lanes in 2 parts, from 10
  // blocks of 2 or 1 to lcm(2, 10) = 20 blocks of 1 or 0, and back.
  checkRegrid(3, 16, 10, 2, 1, /*balanced=*/true, /*parts=*/2);
  checkRegrid(3, 16, 10, 1, 2, true, 2);
  // Parts that do not divide the length or a block count are refused, and
  // parts need balanced blocks.
  EXPECT_FALSE(succeeded(checkRegridLength(3, 10, 2, 1, 16, 3, 6, 6)));
  EXPECT_FALSE(succeeded(checkRegridLength(3, 10, 2, 1, 0, 2, 6, 6)));
  EXPECT_TRUE(succeeded(checkRegridLength(3, 10, 2, 1, 16, 2, 6, 6)));
}

//===----------------------------------------------------------------------===//
// FlashStep
//===----------------------------------------------------------------------===//

/// A causal attention problem of L positions: kvh KV heads, g query heads
/// each, head dimension d; q [L, kvh, g * d], keys and values [L, kvh, d].
struct Causal {
  int64_t L, kvh, g, d;
  double scale;
  std::vector<float> q, keys, values;
  Causal(int64_t positions, int64_t kvHeads, int64_t groups, int64_t dim,
         double scoreScale, unsigned seed)
      : L(positions), kvh(kvHeads), g(groups), d(dim), scale(scoreScale) {
    q = randomValues(size_t(L * kvh * g * d), seed);
    keys = randomValues(size_t(L * kvh * d), seed + 1);
    values = randomValues(size_t(L * kvh * d), seed + 2);
  }
  /// Direct softmax(scale * q k^T, causal) v in double: [L, kvh, g * d].
  std::vector<double> reference() const {
    std::vector<double> out(size_t(L * kvh * g * d), 0.0);
    for (int64_t p = 0; p < L; ++p)
      for (int64_t h = 0; h < kvh; ++h)
        for (int64_t j = 0; j < g; ++j) {
          const float *query = q.data() + (p * kvh + h) * g * d + j * d;
          std::vector<double> w(size_t(p + 1));
          double wmax = -kInfD, wsum = 0;
          for (int64_t t = 0; t <= p; ++t) {
            double s = 0;
            for (int64_t e = 0; e < d; ++e)
              s += double(query[e]) * keys[(t * kvh + h) * d + e];
            w[t] = scale * s;
            wmax = std::max(wmax, w[t]);
          }
          for (double &x : w) {
            x = std::exp(x - wmax);
            wsum += x;
          }
          double *o = out.data() + (p * kvh + h) * g * d + j * d;
          for (int64_t t = 0; t <= p; ++t)
            for (int64_t e = 0; e < d; ++e)
              o[e] += w[t] / wsum * values[(t * kvh + h) * d + e];
        }
    return out;
  }
  /// The kv operand of key block b (m positions): keys then values.
  std::vector<float> kvBlock(int64_t b, int64_t m) const {
    std::vector<float> kv(size_t(2 * m * kvh * d));
    size_t half = size_t(m * kvh * d);
    std::copy_n(keys.begin() + b * m * kvh * d, half, kv.begin());
    std::copy_n(values.begin() + b * m * kvh * d, half, kv.begin() + half);
    return kv;
  }
  /// Flash attention of every query block against the key blocks in the
  /// order `order(queryBlock, i)`, normalised by the running sums; also
  /// returns the final running maxima [L, kvh, g].
  std::vector<float> flash(int64_t m,
                           const std::function<int64_t(int64_t, int64_t)> &order,
                           std::vector<float> *maxima = nullptr) const {
    int64_t blocks = L / m, queries = m * kvh * g;
    std::vector<float> result(size_t(L * kvh * g * d));
    if (maxima)
      maxima->assign(size_t(L * kvh * g), 0.0f);
    for (int64_t qb = 0; qb < blocks; ++qb) {
      std::vector<float> qBlock(q.begin() + qb * m * kvh * g * d,
                                q.begin() + (qb + 1) * m * kvh * g * d);
      std::vector<float> out(size_t(queries * d), 0.0f);
      std::vector<float> ml(size_t(2 * queries), 0.0f);
      for (int64_t i = 0; i < blocks; ++i) {
        int64_t kb = order(qb, i);
        std::vector<float> kv = kvBlock(kb, m);
        RowArgs args;
        args.out = out.data();
        args.a = ml.data();
        args.b = qBlock.data();
        args.c = kv.data();
        args.m = m;
        args.groups = g;
        args.k = kvh;
        args.n = d;
        args.scalar = scale;
        args.expr = kb * m;
        args.expr2 = qb * m;
        RowResult r = rowKernel(Opcode::FlashStep, args);
        EXPECT_EQ(r.written, queries * d);
        EXPECT_EQ(r.work, 2 * queries * m * d);
      }
      // Normalise by the running sums (the first half of ml), as DivRows.
      RowArgs div;
      div.out = out.data();
      div.a = ml.data();
      div.m = queries;
      div.n = d;
      rowKernel(Opcode::DivRows, div);
      std::copy(out.begin(), out.end(),
                result.begin() + qb * m * kvh * g * d);
      if (maxima)
        std::copy(ml.begin() + queries, ml.end(),
                  maxima->begin() + qb * queries);
    }
    return result;
  }
};

void expectAttention(const std::vector<float> &actual,
                     const std::vector<double> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  double largest = 0;
  for (double v : expected)
    largest = std::max(largest, std::fabs(v));
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * largest) << "element " << i;
}

TEST(RowKernels, FlashStepRingOrderMatchesCausalSoftmax) {
  // 12 positions in 4 blocks of 3 (the prefill plan on a 4-row grid: query
  // block qb sees key block (qb + i) % 4 in step i), 2 KV heads with 2
  // query heads each (GQA), head dimension 8.
  Causal c(/*L=*/12, /*kvh=*/2, /*g=*/2, /*d=*/8, /*scale=*/1 / std::sqrt(8.0),
           /*seed=*/10);
  int64_t blocks = 4;
  std::vector<float> maxima;
  std::vector<float> out = c.flash(
      3, [&](int64_t qb, int64_t i) { return (qb + i) % blocks; }, &maxima);
  expectAttention(out, c.reference());
  // The running max is the largest visible score of each query.
  for (int64_t p = 0; p < c.L; ++p)
    for (int64_t h = 0; h < c.kvh; ++h)
      for (int64_t j = 0; j < c.g; ++j) {
        double best = -kInfD;
        for (int64_t t = 0; t <= p; ++t) {
          double s = 0;
          for (int64_t e = 0; e < c.d; ++e)
            s += double(c.q[(p * c.kvh + h) * c.g * c.d + j * c.d + e]) *
                 c.keys[(t * c.kvh + h) * c.d + e];
          best = std::max(best, c.scale * s);
        }
        expectClose(maxima[(p * c.kvh + h) * c.g + j], best,
                    "max of position " + std::to_string(p));
      }
}

TEST(RowKernels, FlashStepOrderDoesNotMatter) {
  // Large scores (scale 6) make the running-max corrections matter; the
  // newest block first means every later block rescales the output.
  Causal c(/*L=*/8, /*kvh=*/1, /*g=*/3, /*d=*/4, /*scale=*/6.0, /*seed=*/20);
  std::vector<double> expected = c.reference();
  int64_t blocks = 4;
  expectAttention(c.flash(2, [](int64_t, int64_t i) { return i; }), expected);
  expectAttention(
      c.flash(2, [&](int64_t, int64_t i) { return blocks - 1 - i; }),
      expected);
  expectAttention(
      c.flash(2, [&](int64_t qb, int64_t i) { return (qb + i) % blocks; }),
      expected);
  // One block holding every position (a single-row grid).
  expectAttention(c.flash(8, [](int64_t, int64_t) { return 0; }), expected);
}

TEST(RowKernels, FlashStepFullyMaskedBlockChangesNothing) {
  // Keys 4..5 against queries 0..1: every key is in the future.
  Causal c(/*L=*/6, /*kvh=*/1, /*g=*/2, /*d=*/2, /*scale=*/1.0, /*seed=*/30);
  int64_t m = 2, queries = m * c.kvh * c.g;
  std::vector<float> qBlock(c.q.begin(), c.q.begin() + queries * c.d);
  std::vector<float> kv = c.kvBlock(2, m);
  std::vector<float> out(size_t(queries * c.d), 5.0f);
  std::vector<float> ml(size_t(2 * queries), 0.0f);
  ml[0] = 1.5f;             // a running sum of query row 0
  ml[queries] = 0.25f;      // and its running max
  std::vector<float> outBefore = out, mlBefore = ml;
  RowArgs args;
  args.out = out.data();
  args.a = ml.data();
  args.b = qBlock.data();
  args.c = kv.data();
  args.m = m;
  args.groups = c.g;
  args.k = c.kvh;
  args.n = c.d;
  args.scalar = c.scale;
  args.expr = 4;
  args.expr2 = 0;
  rowKernel(Opcode::FlashStep, args);
  EXPECT_EQ(out, outBefore);
  EXPECT_EQ(ml, mlBefore);
}

TEST(RowKernels, FlashStepDiagonalBlockIsCausalWithin) {
  // The diagonal block alone: query i sees keys 0..i of the block.
  Causal c(/*L=*/3, /*kvh=*/1, /*g=*/1, /*d=*/2, /*scale=*/1.0, /*seed=*/40);
  std::vector<float> out = c.flash(3, [](int64_t, int64_t) { return 0; });
  std::vector<double> expected = c.reference();
  expectAttention(out, expected);
  // Query 0 sees key 0 only: its output is value 0.
  EXPECT_NEAR(out[0], c.values[0], 1e-6);
  EXPECT_NEAR(out[1], c.values[1], 1e-6);
}

//===----------------------------------------------------------------------===//
// rowKernelExtents
//===----------------------------------------------------------------------===//

std::vector<int64_t> extents(Opcode op, int64_t m, int64_t g, int64_t k,
                             int64_t n) {
  llvm::Expected<std::vector<int64_t>> e = rowKernelExtents(op, m, g, k, n);
  if (!e) {
    ADD_FAILURE() << llvm::toString(e.takeError());
    return {};
  }
  return *e;
}

using V = std::vector<int64_t>;

TEST(RowKernelExtents, OperandSizes) {
  EXPECT_EQ(extents(Opcode::Reduce, 2, 1, int64_t(ReduceKind::Sum), 3),
            (V{2, 6}));
  EXPECT_EQ(extents(Opcode::Reduce, 2, 1, int64_t(ReduceKind::Max), 3),
            (V{2, 6}));
  // {out, in, sumsq, weight}.
  EXPECT_EQ(extents(Opcode::RmsScale, 2, 1, 64, 16), (V{32, 32, 2, 16}));
  // {out, in, cos, sin}: m rows of k heads of n.
  EXPECT_EQ(extents(Opcode::Rope, 2, 1, 3, 4), (V{24, 24, 8, 8}));
  // {s, q, keys}: m kv heads, g groups, k keys, n dims.
  EXPECT_EQ(extents(Opcode::AttnScores, 2, 3, 5, 4), (V{30, 24, 40}));
  EXPECT_EQ(extents(Opcode::SoftmaxExp, 2, 1, 0, 5), (V{10, 2}));
  // {out, p, values}.
  EXPECT_EQ(extents(Opcode::AttnValues, 2, 3, 5, 4), (V{24, 30, 40}));
  EXPECT_EQ(extents(Opcode::DivRows, 4, 1, 0, 16), (V{64, 4}));
  // {dst, src}: one slot each.
  EXPECT_EQ(extents(Opcode::Regrid, 2, 6, 11, 6), (V{12, 22}));
  // {out, ml, q, kv}: the tiny prefill's flash_step on a 4x4 grid.
  EXPECT_EQ(extents(Opcode::FlashStep, 2, 2, 1, 16), (V{64, 8, 64, 64}));
  // {s, q, keys} and {out, p, values}: m lanes, g groups, k keys; at least
  // one head's scores.
  EXPECT_EQ(extents(Opcode::LaneScores, 2, 3, 5, 4), (V{15, 12, 20}));
  EXPECT_EQ(extents(Opcode::LaneValues, 2, 3, 5, 4), (V{12, 15, 20}));
  // Prefill over lanes: m lanes, g groups, k rows of queries and keys.
  EXPECT_EQ(extents(Opcode::LaneFlashScores, 2, 3, 5, 4), (V{75, 60, 40}));
  EXPECT_EQ(extents(Opcode::FlashStats, 6, 1, 5, 0), (V{150, 90}));
  EXPECT_EQ(extents(Opcode::LaneFlashValues, 2, 3, 5, 4), (V{60, 75, 40, 45}));
  EXPECT_EQ(extents(Opcode::LaneDivRows, 2, 3, 5, 4), (V{60, 45}));
  // lane_flash_values reads as many heads of its statistics as its scores
  // hold: 2 heads of [3 queries, 1 group, 3 keys] need 18 statistics.
  std::vector<int64_t> values = extents(Opcode::LaneFlashValues, 2, 1, 3, 2);
  EXPECT_EQ(values, (V{12, 9, 24, 9}));
  raiseToBufferHeads(Opcode::LaneFlashValues, 1, 3, {12, 18, 24, 9}, values);
  EXPECT_EQ(values, (V{12, 9, 24, 18}));
  // Empty row counts are allowed outside regrid.
  EXPECT_EQ(extents(Opcode::Reduce, 0, 1, 0, 3), (V{0, 0}));
  EXPECT_EQ(extents(Opcode::AttnScores, 0, 1, 0, 0), (V{0, 0, 0}));
}

TEST(RowKernelExtents, Errors) {
  const int64_t big = int64_t(1) << 40;
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Reduce, -1, 1, 0, 3)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::AttnScores, 1, 0, 1, 1)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Rope, 1, 1, -2, 4)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::DivRows, 1, 1, 0, -1)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::SoftmaxExp, big + 1, 1, 0, 1)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::AttnValues, 1, big + 1, 1, 1)),
            "sizes out of range");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Reduce, 1, 1, 3, 4)),
            "unknown reduction 3");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::RmsScale, 1, 1, 0, 4)),
            "count must be positive");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Rope, 1, 1, 2, 3)),
            "dimension 3 is odd");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::LaneScores, 1, 1, 2, 0)),
            "a KV head needs at least one lane");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::LaneFlashScores, 1, 1, 2, 0)),
            "a KV head needs at least one lane");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::LaneDivRows, 1, 1, 2, 0)),
            "a KV head needs at least one lane");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Regrid, 0, 2, 4, 2)),
            "regrid needs positive rows and widths");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Regrid, 2, 2, 0, 2)),
            "regrid needs positive rows and widths");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::Regrid, 2, 2, 4, 0)),
            "regrid needs positive rows and widths");
  // Each size is in range but a product is not.
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::SoftmaxExp, int64_t(1) << 21, 1,
                                     0, int64_t(1) << 20)),
            "sizes too large");
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::AttnScores, int64_t(1) << 14,
                                     int64_t(1) << 14, int64_t(1) << 14, 1)),
            "sizes too large");
  // Exactly 2^40 elements is still accepted.
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::SoftmaxExp, int64_t(1) << 20, 1,
                                     0, int64_t(1) << 20)),
            "");
  for (Opcode op : {Opcode::GemmTile, Opcode::Add, Opcode::Max,
                    Opcode::Swiglu, Opcode::Copy})
    EXPECT_EQ(errorOf(rowKernelExtents(op, 1, 1, 1, 1)),
              "not a row instruction")
        << int(op);
}

// groups * n is part of the checked product: g = 2^38, n = 2^25 (each
// below 2^40) must not overflow.
TEST(RowKernelExtents, FlashStepGroupsTimesDimOverflow) {
  EXPECT_EQ(errorOf(rowKernelExtents(Opcode::FlashStep, 1, int64_t(1) << 38,
                                     1, int64_t(1) << 25)),
            "sizes too large");
}

TEST(RowKernels, HalfRoundingAgreesWithTheReferenceOnEveryKindOfValue) {
  // Every 1021st float bit pattern (signs, subnormals, both sides of each
  // rounding tie, overflow to infinity, NaNs), plus the exact ties between
  // adjacent halves, in runs whose lengths are not multiples of 8.
  std::vector<float> values;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 1021) {
    uint32_t b = uint32_t(bits);
    float v;
    std::memcpy(&v, &b, sizeof v);
    values.push_back(v);
  }
  for (int e = -24; e < 16; ++e)
    for (int m = 0; m < 1024; m += 37)
      values.push_back(std::ldexp(1.0f + (m + 0.5f) / 1024.0f, e));
  values.push_back(65520.0f); // rounds to infinity
  values.push_back(65519.0f); // rounds to 65504
  // The emulator's f16 storage: floatsToHalves on the way in (the
  // rounding), halvesToFloats on the way out; the reference is the
  // compiler's conversion, one value at a time.
  std::vector<float> fast = values, reference = values;
  int64_t count = int64_t(values.size()) - 3;
  std::vector<uint16_t> halves(count);
  floatsToHalves(values.data(), halves.data(), count);
  halvesToFloats(halves.data(), fast.data(), count);
  for (int64_t i = 0; i < count; ++i)
    reference[i] = float(_Float16(values[i]));
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(reference[i])) {
      EXPECT_TRUE(std::isnan(fast[i])) << i;
      continue;
    }
    uint32_t a, b;
    std::memcpy(&a, &fast[i], sizeof a);
    std::memcpy(&b, &reference[i], sizeof b);
    ASSERT_EQ(a, b) << "value " << values[i];
  }
}

} // namespace
