//===- KernelsTest.cpp - Reference tensor kernels -------------------------===//
//
// Expected values are small literals worked out by hand or, where marked
// "numpy", printed by numpy 1.24 from a naive float64 computation and
// rounded to float32 (np.float32) when the result is f32.
//
//===----------------------------------------------------------------------===//
#include "wafer/Eval/Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace wafer::eval;

namespace {

constexpr ElementKind F32 = ElementKind::F32;
constexpr ElementKind I64 = ElementKind::I64;
constexpr ElementKind Bool = ElementKind::Bool;

/// A tensor holding `data`; f32 data is rounded to float as the kernels
/// expect of their operands.
Tensor make(ElementKind kind, std::vector<int64_t> shape,
            std::vector<double> data) {
  Tensor t(kind, std::move(shape));
  EXPECT_EQ(t.size(), int64_t(data.size())) << "bad test literal";
  for (double &v : data)
    v = kind == F32 ? double(float(v)) : v;
  t.data = std::move(data);
  return t;
}

Tensor f32(std::vector<int64_t> shape, std::vector<double> data) {
  return make(F32, std::move(shape), std::move(data));
}
Tensor i64(std::vector<int64_t> shape, std::vector<double> data) {
  return make(I64, std::move(shape), std::move(data));
}

/// Exact comparison of kind, shape and every element.
void expectTensor(const Tensor &t, ElementKind kind, std::vector<int64_t> shape,
                  std::vector<double> data) {
  EXPECT_EQ(int(t.kind), int(kind));
  EXPECT_EQ(t.shape, shape);
  EXPECT_EQ(t.data, data);
}

/// For transcendental results: each f32 element is a float (rounded) and
/// within 4 float ulps of the numpy literal.
void expectClose(const Tensor &t, std::vector<int64_t> shape,
                 std::vector<double> data) {
  EXPECT_EQ(int(t.kind), int(F32));
  EXPECT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(t.data[i], double(float(t.data[i]))) << "element " << i;
    EXPECT_FLOAT_EQ(float(t.data[i]), float(data[i])) << "element " << i;
  }
}

Tensor iota(ElementKind kind, std::vector<int64_t> shape, double first = 0) {
  Tensor t(kind, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[i] = first + double(i);
  return t;
}

TEST(KernelsBasics, ElementCountToIndexAndFill) {
  EXPECT_EQ(elementCount({}), 1);
  EXPECT_EQ(elementCount({2, 3, 4}), 24);
  EXPECT_EQ(elementCount({2, 0}), 0);
  EXPECT_EQ(toIndex(-3.7), -3);
  EXPECT_EQ(toIndex(1e19), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(toIndex(9223372036854775807.0),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(toIndex(-1e19), std::numeric_limits<int64_t>::min());
  Tensor t(I64, {2, 2}, 7.0);
  expectTensor(t, I64, {2, 2}, {7, 7, 7, 7});
  Tensor scalar(F32, {});
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_EQ(scalar.rank(), 0);
}

TEST(KernelsUnary, Transcendental) {
  Tensor x = f32({4}, {-1.5, 0, 0.5, 2});
  // numpy.
  expectClose(
      unary(UnaryFn::Sigmoid, x), {4},
      {0.18242552876472473, 0.5, 0.622459352016449, 0.8807970881462097});
  expectClose(
      unary(UnaryFn::Exp, x), {4},
      {0.22313016653060913, 1.0, 1.6487212181091309, 7.389056205749512});
  expectClose(
      unary(UnaryFn::Cos, x), {4},
      {0.07073719799518585, 1.0, 0.8775825500488281, -0.416146844625473});
  expectClose(
      unary(UnaryFn::Sin, x), {4},
      {-0.9974949955940247, 0.0, 0.4794255495071411, 0.9092974066734314});
  expectClose(
      unary(UnaryFn::Tanh, x), {4},
      {-0.9051482677459717, 0.0, 0.46211716532707214, 0.9640275835990906});
  expectClose(
      unary(UnaryFn::Erf, x), {4},
      {-0.9661051630973816, 0.0, 0.5204998850822449, 0.9953222870826721});
  expectClose(
      unary(UnaryFn::Silu, x), {4},
      {-0.2736382782459259, 0.0, 0.3112296760082245, 1.7615941762924194});
  expectClose(unary(UnaryFn::Sqrt, f32({3}, {1.5, 0, 2})), {3},
              {1.2247449159622192, 0.0, 1.4142135381698608});
  expectClose(unary(UnaryFn::Reciprocal, f32({3}, {-1.5, 0.5, 4})), {3},
              {-0.6666666865348816, 2.0, 0.25});
}

TEST(KernelsUnary, ExactAndKindPreserving) {
  Tensor x = f32({4}, {-1.5, 0, 0.5, 2});
  expectTensor(unary(UnaryFn::Neg, x), F32, {4}, {1.5, -0.0, -0.5, -2});
  expectTensor(unary(UnaryFn::Abs, x), F32, {4}, {1.5, 0, 0.5, 2});
  expectTensor(unary(UnaryFn::Relu, x), F32, {4}, {0, 0, 0.5, 2});
  expectTensor(unary(UnaryFn::Relu, i64({3}, {-4, 0, 9})), I64, {3}, {0, 0, 9});
  expectTensor(unary(UnaryFn::Neg, i64({2}, {-4, 3})), I64, {2}, {4, -3});
  expectTensor(unary(UnaryFn::Not, make(Bool, {2}, {0, 1})), Bool, {2}, {1, 0});
  // 1/3 is rounded to the float nearest it, not kept as a double.
  Tensor third = unary(UnaryFn::Reciprocal, f32({1}, {3}));
  EXPECT_EQ(third.data[0], double(1.0f / 3.0f));
  EXPECT_NE(third.data[0], 1.0 / 3.0);
}

TEST(KernelsBinary, BroadcastSameRankAndSizeOne) {
  // [2,1] * [1,3] -> [2,3].
  expectTensor(
      binary(BinaryFn::Mul, f32({2, 1}, {2, 3}), f32({1, 3}, {1, 2, 3})), F32,
      {2, 3}, {2, 4, 6, 3, 6, 9});
  // [2,3] - [3]: trailing alignment.
  expectTensor(binary(BinaryFn::Sub, iota(I64, {2, 3}), i64({3}, {1, 1, 2})),
               I64, {2, 3}, {-1, 0, 0, 2, 3, 3});
}

TEST(KernelsBinary, BroadcastScalarAndRankMismatch) {
  expectTensor(binary(BinaryFn::Add, f32({}, {10}), f32({2, 2}, {1, 2, 3, 4})),
               F32, {2, 2}, {11, 12, 13, 14});
  expectTensor(binary(BinaryFn::Add, f32({2, 2}, {1, 2, 3, 4}), f32({}, {10})),
               F32, {2, 2}, {11, 12, 13, 14});
  expectTensor(binary(BinaryFn::Add, f32({}, {1}), f32({}, {2})), F32, {}, {3});
  // [3,1] + [2,1,4] -> [2,3,4] (numpy).
  Tensor b = binary(BinaryFn::Mul, iota(I64, {2, 1, 4}), i64({}, {10}));
  expectTensor(binary(BinaryFn::Add, i64({3, 1}, {1, 2, 3}), b), I64, {2, 3, 4},
               {1,  11, 21, 31, 2,  12, 22, 32, 3,  13, 23, 33,
                41, 51, 61, 71, 42, 52, 62, 72, 43, 53, 63, 73});
}

TEST(KernelsBinary, IntegerDivTruncatesModTakesDivisorSign) {
  Tensor a = i64({4}, {7, -7, 7, -7});
  expectTensor(binary(BinaryFn::Div, a, i64({4}, {2, 2, -2, -2})), I64, {4},
               {3, -3, -3, 3});
  // Python: [7 % 3, -7 % 3, 7 % -3, -7 % -3].
  expectTensor(binary(BinaryFn::Mod, a, i64({4}, {3, 3, -3, -3})), I64, {4},
               {1, 2, -2, -1});
  // Division by zero is defined as 0 rather than trapping.
  expectTensor(binary(BinaryFn::Div, i64({1}, {5}), i64({1}, {0})), I64, {1},
               {0});
}

TEST(KernelsBinary, FloatDivModPowMaxMin) {
  Tensor a = f32({3}, {7.5, -7.5, 1});
  Tensor b = f32({3}, {2, 2, 4});
  expectTensor(binary(BinaryFn::Div, a, b), F32, {3}, {3.75, -3.75, 0.25});
  // Floats use C fmod (ONNX fmod=1): sign of the dividend.
  expectTensor(binary(BinaryFn::Mod, a, b), F32, {3}, {1.5, -1.5, 1});
  expectTensor(binary(BinaryFn::Pow, a, b), F32, {3}, {56.25, 56.25, 1});
  expectTensor(binary(BinaryFn::Max, a, b), F32, {3}, {7.5, 2, 4});
  expectTensor(binary(BinaryFn::Min, a, b), F32, {3}, {2, -7.5, 1});
  Tensor nan = f32({2}, {NAN, 1});
  Tensor one = f32({2}, {1, NAN});
  Tensor m = binary(BinaryFn::Max, nan, one);
  EXPECT_TRUE(std::isnan(m.data[0]) && std::isnan(m.data[1]));
}

TEST(KernelsBinary, ComparisonsAndLogicGiveBool) {
  Tensor a = f32({3}, {1, 2, 3});
  Tensor b = f32({}, {2});
  expectTensor(binary(BinaryFn::Equal, a, b), Bool, {3}, {0, 1, 0});
  expectTensor(binary(BinaryFn::Less, a, b), Bool, {3}, {1, 0, 0});
  expectTensor(binary(BinaryFn::LessOrEqual, a, b), Bool, {3}, {1, 1, 0});
  expectTensor(binary(BinaryFn::Greater, a, b), Bool, {3}, {0, 0, 1});
  expectTensor(binary(BinaryFn::GreaterOrEqual, a, b), Bool, {3}, {0, 1, 1});
  expectTensor(binary(BinaryFn::Less, i64({2}, {-5, 5}), i64({2}, {0, 0})),
               Bool, {2}, {1, 0});
  Tensor p = make(Bool, {4}, {0, 0, 1, 1}), q = make(Bool, {4}, {0, 1, 0, 1});
  expectTensor(binary(BinaryFn::And, p, q), Bool, {4}, {0, 0, 0, 1});
  expectTensor(binary(BinaryFn::Or, p, q), Bool, {4}, {0, 1, 1, 1});
}

TEST(KernelsBinary, F32ResultsRoundLikeFloat) {
  // Operands already floats: the sum is the float sum, not the double one.
  Tensor s = binary(BinaryFn::Add, f32({1}, {0.1}), f32({1}, {0.2}));
  EXPECT_EQ(s.data[0], double(0.1f + 0.2f));
  EXPECT_NE(s.data[0], double(0.1f) + double(0.2f));
  // Unrounded operands (not produced by a kernel) still give a float.
  Tensor raw(F32, {1});
  raw.data = {0.1};
  Tensor r = binary(BinaryFn::Add, raw, raw);
  EXPECT_EQ(r.data[0], double(0.2f));
}

TEST(KernelsWhere, ThreeWayBroadcast) {
  // numpy: where([[1],[0]], [1,2,3], -1).
  Tensor cond = make(Bool, {2, 1}, {1, 0});
  expectTensor(where(cond, f32({3}, {1, 2, 3}), f32({}, {-1})), F32, {2, 3},
               {1, 2, 3, -1, -1, -1});
  expectTensor(
      where(make(Bool, {}, {1}), i64({2}, {4, 5}), i64({2, 1}, {0, 9})), I64,
      {2, 2}, {4, 5, 4, 5});
}

TEST(KernelsCast, RoundTruncateAndBool) {
  Tensor x = f32({4}, {-2.75, 2.75, 0, 0.5});
  expectTensor(cast(x, I64), I64, {4}, {-2, 2, 0, 0});
  expectTensor(cast(x, Bool), Bool, {4}, {1, 1, 0, 1});
  Tensor d(I64, {1});
  d.data = {16777217}; // 2^24 + 1 is not a float.
  expectTensor(cast(d, F32), F32, {1}, {16777216});
  expectTensor(cast(make(Bool, {2}, {1, 0}), F32), F32, {2}, {1, 0});
}

TEST(KernelsMatmul, TwoByTwo) {
  // numpy: arange(6).reshape(2,3) @ (arange(6).reshape(3,2) - 2).
  Tensor b = binary(BinaryFn::Sub, iota(F32, {3, 2}), f32({}, {2}));
  expectTensor(matmul(iota(F32, {2, 3}), b), F32, {2, 2}, {4, 7, 4, 16});
}

TEST(KernelsMatmul, OneDimensionalOperandsLoseTheirPromotedDim) {
  Tensor v = f32({3}, {1, 2, 3});
  expectTensor(matmul(v, iota(F32, {3, 2})), F32, {2}, {16, 22});
  expectTensor(matmul(iota(F32, {2, 3}), v), F32, {2}, {8, 26});
  expectTensor(matmul(v, f32({3}, {4, 5, 6})), F32, {}, {32});
  // numpy: arange(12).reshape(2,2,3) @ [1,-1,2].
  expectTensor(matmul(iota(I64, {2, 2, 3}), i64({3}, {1, -1, 2})), I64, {2, 2},
               {3, 9, 15, 21});
}

TEST(KernelsMatmul, BatchBroadcast) {
  // numpy: (arange(12).reshape(2,1,2,3) - 5) @ (arange(18).reshape(3,3,2) % 7 -
  // 3).
  Tensor a = binary(BinaryFn::Sub, iota(I64, {2, 1, 2, 3}), i64({}, {5}));
  Tensor b = binary(BinaryFn::Sub,
                    binary(BinaryFn::Mod, iota(I64, {3, 3, 2}), i64({}, {7})),
                    i64({}, {3}));
  expectTensor(matmul(a, b), I64, {2, 3, 2, 2},
               {16, 4, 7,   4, -7, 16, -4, 7,   5,  -7, -1,  -4,
                -2, 4, -11, 4, -1, -2, 2,  -11, -7, -1, -13, 2});
}

TEST(KernelsMatmul, AccumulatesInDoubleThenRounds) {
  // 2^24 + 1 - 2^24 is 1 in double; in float the first sum would lose the 1.
  Tensor a = f32({3}, {16777216, 1, -16777216});
  Tensor r = matmul(a, f32({3}, {1, 1, 1}));
  expectTensor(r, F32, {}, {1});
  Tensor s = matmul(f32({2}, {0.1, 0.2}), f32({2}, {1, 1}));
  EXPECT_EQ(s.data[0], double(0.1f + 0.2f));
}

TEST(KernelsLayout, TransposeReshapeBroadcastTo) {
  // numpy: arange(24).reshape(2,3,4).transpose(2,0,1).
  expectTensor(transpose(iota(F32, {2, 3, 4}), {2, 0, 1}), F32, {4, 2, 3},
               {0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  expectTensor(reshape(iota(I64, {2, 3}), {3, 1, 2}), I64, {3, 1, 2},
               {0, 1, 2, 3, 4, 5});
  expectTensor(
      broadcastTo(i64({3, 1}, {1, 2, 3}), {2, 3, 4}), I64, {2, 3, 4},
      {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  expectTensor(broadcastTo(f32({}, {5}), {2, 2}), F32, {2, 2}, {5, 5, 5, 5});
}

TEST(KernelsConcat, InnerAndOuterAxis) {
  Tensor a = f32({2, 1}, {1, 2}), b = f32({2, 2}, {3, 4, 5, 6});
  expectTensor(concat({a, b}, 1), F32, {2, 3}, {1, 3, 4, 2, 5, 6});
  expectTensor(concat({b, f32({1, 2}, {7, 8})}, 0), F32, {3, 2},
               {3, 4, 5, 6, 7, 8});
}

TEST(KernelsSlice, PositiveAndNegativeSteps) {
  Tensor x = iota(I64, {4, 5});
  // numpy: x[1:4:2, 4::-2] (the open end normalised to -1).
  expectTensor(slice(x, {1, 4}, {4, -1}, {2, -2}), I64, {2, 3},
               {9, 7, 5, 19, 17, 15});
  // x[::-1, ::-1].
  expectTensor(
      slice(x, {3, 4}, {-1, -1}, {-1, -1}), I64, {4, 5},
      {19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  // x[0:4:3, 1:3]: the count rounds up (indices 0 and 3).
  expectTensor(slice(x, {0, 1}, {4, 3}, {3, 1}), I64, {2, 2}, {1, 2, 16, 17});
}

TEST(KernelsSlice, EmptyResults) {
  Tensor x = iota(F32, {3});
  expectTensor(slice(x, {2}, {1}, {1}), F32, {0}, {});
  expectTensor(slice(x, {0}, {2}, {-1}), F32, {0}, {});
  expectTensor(slice(x, {3}, {3}, {1}), F32, {0}, {});
}

TEST(KernelsGather, AxisOneWithNegativeIndices) {
  Tensor x = binary(BinaryFn::Mul, iota(F32, {2, 3}), f32({}, {10}));
  // numpy: take(x, [[0,-1],[2,1]], axis=1).
  expectTensor(gather(x, i64({2, 2}, {0, -1, 2, 1}), 1), F32, {2, 2, 2},
               {0, 20, 20, 10, 30, 50, 50, 40});
  expectTensor(gather(x, i64({3}, {-1, 0, -2}), 0), F32, {3, 3},
               {30, 40, 50, 0, 10, 20, 0, 10, 20});
  expectTensor(gather(x, i64({}, {-1}), 1), F32, {2}, {20, 50});
}

TEST(KernelsReduce, KeepdimsFalseAndTrue) {
  Tensor x = f32({2, 3, 2}, {3, -1, 4, 1, -5, 9, 2, 6, -5, 3, 5, 8});
  // numpy.
  expectTensor(reduce(ReduceFn::Sum, x, {1}, false), F32, {2, 2},
               {2, 9, 2, 17});
  expectTensor(reduce(ReduceFn::Sum, x, {1}, true), F32, {2, 1, 2},
               {2, 9, 2, 17});
  expectTensor(reduce(ReduceFn::Mean, x, {0, 2}, false), F32, {3},
               {2.5, 0.75, 4.25});
  expectTensor(reduce(ReduceFn::Mean, x, {0, 2}, true), F32, {1, 3, 1},
               {2.5, 0.75, 4.25});
  expectTensor(reduce(ReduceFn::Max, x, {2}, false), F32, {2, 3},
               {3, 4, 9, 6, 3, 8});
  expectTensor(reduce(ReduceFn::Min, x, {0, 1}, false), F32, {2}, {-5, -1});
  expectTensor(reduce(ReduceFn::Sum, x, {0, 1, 2}, false), F32, {}, {30});
  expectTensor(reduce(ReduceFn::Sum, x, {0, 1, 2}, true), F32, {1, 1, 1}, {30});
}

TEST(KernelsReduce, IntegerMeanTruncatesAndF32MeanRounds) {
  expectTensor(reduce(ReduceFn::Mean, i64({2, 2}, {7, -8, 1, 2}), {1}, false),
               I64, {2}, {0, 1});
  Tensor m = reduce(ReduceFn::Mean, f32({3}, {1, 0, 0}), {0}, false);
  EXPECT_EQ(m.data[0], double(1.0f / 3.0f));
}

TEST(KernelsSoftmax, InnerAxisAndStability) {
  Tensor x = f32({2, 3, 2}, {1, 2, 3, 0, -1, 5, 0, 0, 1000, 1, 1001, 2});
  // numpy.
  expectClose(softmax(x, 1), {2, 3, 2},
              {0.11731042712926865, 0.047123417258262634, 0.8668133616447449,
               0.006377460900694132, 0.01587623916566372, 0.9464991092681885,
               0.0, 0.09003057330846786, 0.2689414322376251, 0.2447284758090973,
               0.7310585975646973, 0.6652409434318542});
  expectClose(softmax(x, 2), {2, 3, 2},
              {0.2689414322376251, 0.7310585975646973, 0.9525741338729858,
               0.04742587357759476, 0.0024726232513785362, 0.9975273609161377,
               0.5, 0.5, 1.0, 0.0, 1.0, 0.0});
}

TEST(KernelsTrilu, BatchedUpperAndLower) {
  Tensor x = iota(F32, {2, 3, 4}, 1);
  // numpy: triu(x, 1), tril(x, -1), tril(x, 0).
  expectTensor(trilu(x, true, 1), F32, {2, 3, 4},
               {0, 2,  3,  4,  0, 0, 7,  8,  0, 0, 0, 12,
                0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24});
  expectTensor(trilu(x, false, -1), F32, {2, 3, 4},
               {0, 0, 0, 0, 5,  0, 0, 0, 9,  10, 0, 0,
                0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0});
  expectTensor(trilu(x, false, 0), F32, {2, 3, 4},
               {1,  0, 0, 0, 5,  6,  0, 0, 9,  10, 11, 0,
                13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0});
}

TEST(KernelsRange, CountsAndRounding) {
  expectTensor(range(I64, 0, 10, 3), I64, {4}, {0, 3, 6, 9});
  expectTensor(range(I64, 10, 4, -2), I64, {3}, {10, 8, 6});
  expectTensor(range(I64, 5, 1, 1), I64, {0}, {});
  // numpy: arange(0, 0.35, 0.1).astype(float32).
  expectTensor(
      range(F32, 0, 0.35, 0.1), F32, {4},
      {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896});
}

TEST(KernelsTransformer, RmsNorm) {
  Tensor x = f32({2, 3}, {1, 2, 3, -4, 0.5, 2});
  // numpy: x / sqrt(mean(x**2, -1) + 1e-5) * w.
  expectClose(rmsNorm(x, f32({3}, {1, 0.5, 2}), 1e-5), {2, 3},
              {0.4629095494747162, 0.4629095494747162, 2.7774572372436523,
               -1.5395995378494263, 0.09622497111558914, 1.5395995378494263});
}

class KernelsRope : public ::testing::Test {
protected:
  // x [1, 2, 4]; cos/sin [2, 4] broadcast over the leading dimension
  // (positions 0 and 1, inverse frequencies [1, 0.1, 1, 0.1]).
  Tensor x = f32({1, 2, 4}, {1, -2, 1.5, 8, 5, -6, 3.5, 16});
  Tensor cos = f32({2, 4}, {1, 1, 1, 1, 0.5403022766113281, 0.9950041770935059,
                            0.5403022766113281, 0.9950041770935059});
  Tensor sin = f32({2, 4}, {0, 0, 0, 0, 0.8414709568023682, 0.0998334139585495,
                            0.8414709568023682, 0.0998334139585495});
};

TEST_F(KernelsRope, HalfConvention) {
  // numpy: x*cos + concatenate([-x[..., 2:], x[..., :2]], -1)*sin.
  expectClose(rope(x, cos, sin, false), {1, 2, 4},
              {1, -2, 1.5, 8, -0.24363696575164795, -7.567359924316406,
               6.09841251373291, 15.321065902709961});
}

TEST_F(KernelsRope, InterleavedConvention) {
  // numpy: the pairwise formula of the header, element by element.
  expectClose(rope(x, cos, sin, true), {1, 2, 4},
              {1, -2, 1.5, 8, 7.75033712387085, -5.470858097076416,
               -11.572477340698242, 16.26948356628418});
}

class KernelsAttention : public ::testing::Test {
protected:
  // B=2, H=4, KVH=2 (query heads 0,1 read KV head 0; 2,3 read 1), Lq=2,
  // Lk=3, D=2, scale 0.5. Expected values: numpy, naive per-query loops
  // with scores masked to -inf where j > i + (Lk - Lq).
  Tensor q = f32({2, 4, 2, 2}, {-1.0, 0.0,  1.0,  -0.5, 0.5,  -1.0, 0.0,  1.0,
                                -0.5, 0.5,  -1.0, 0.0,  1.0,  -0.5, 0.5,  -1.0,
                                0.0,  1.0,  -0.5, 0.5,  -1.0, 0.0,  1.0,  -0.5,
                                0.5,  -1.0, 0.0,  1.0,  -0.5, 0.5,  -1.0, 0.0});
  Tensor k = f32({2, 2, 3, 2}, {-1.5, 0.0,  1.5,  -0.5, 1.0,  -1.0, 0.5,  -1.5,
                                0.0,  1.5,  -0.5, 1.0,  -1.0, 0.5,  -1.5, 0.0,
                                1.5,  -0.5, 1.0,  -1.0, 0.5,  -1.5, 0.0,  1.5});
  Tensor v =
      f32({2, 2, 3, 2}, {-1.0, 0.25, -0.75, 0.5,   -0.5,  0.75, -0.25, 1.0,
                         0.0,  -1.0, 0.25,  -0.75, 0.5,   -0.5, 0.75,  -0.25,
                         1.0,  0.0,  -1.0,  0.25,  -0.75, 0.5,  -0.5,  0.75});
};

TEST_F(KernelsAttention, CausalWithFewerQueriesThanKeysAndGqa) {
  expectClose(attention(q, k, v, 0.5, true), {2, 4, 2, 2},
              {-0.9543936252593994,
               0.2956063747406006,
               -0.6675744652748108,
               0.5824255347251892,
               -0.8172353506088257,
               0.4327646493911743,
               -0.7912384271621704,
               0.4587615728378296,
               -0.07355374097824097,
               -0.4115700423717499,
               0.04123843461275101,
               -0.38664233684539795,
               -0.18276464939117432,
               0.46211716532707214,
               -0.13676883280277252,
               0.44769152998924255,
               0.6094558835029602,
               -0.3905441164970398,
               0.689680278301239,
               -0.3103197515010834,
               0.6405441164970398,
               -0.3594558835029602,
               0.8867688179016113,
               -0.11323116719722748,
               -0.8671976327896118,
               0.3828023374080658,
               -0.631843090057373,
               0.618156909942627,
               -0.875,
               0.375,
               -0.7087615728378296,
               0.5412384271621704});
}

TEST_F(KernelsAttention, NonCausal) {
  expectClose(attention(q, k, v, 0.5, false), {2, 4, 2, 2},
              {-0.868156909942627,   0.38184309005737305, -0.6675744652748108,
               0.5824255347251892,   -0.6735045313835144, 0.5764954686164856,
               -0.7912384271621704,  0.4587615728378296,  0.06031974405050278,
               -0.5515987277030945,  0.04123843461275101, -0.38664233684539795,
               -0.09975403547286987, 0.22961528599262238, -0.13676883280277252,
               0.44769152998924255,  0.7087615728378296,  -0.2912384271621704,
               0.689680278301239,    -0.3103197515010834, 0.6806081533432007,
               -0.3193918466567993,  0.8867688179016113,  -0.11323116719722748,
               -0.8324255347251892,  0.4175744950771332,  -0.631843090057373,
               0.618156909942627,    -0.6704981327056885, 0.5795018672943115,
               -0.7087615728378296,  0.5412384271621704});
}

TEST(KernelsAttentionEdge, FullyMaskedRowIsNaN) {
  // Lq=2 > Lk=1: query 0 may see keys j <= -1, none; query 1 sees key 0.
  Tensor q = f32({1, 1, 2, 1}, {1, 1});
  Tensor k = f32({1, 1, 1, 1}, {1});
  Tensor v = f32({1, 1, 1, 1}, {3});
  Tensor r = attention(q, k, v, 1.0, true);
  EXPECT_TRUE(std::isnan(r.data[0]));
  EXPECT_EQ(r.data[1], 3.0);
}

TEST(KernelsTransformer, Swiglu) {
  // numpy: g * sigmoid(g) * u.
  Tensor g = f32({4}, {-1.5, 0, 0.5, 2});
  expectClose(
      swiglu(g, f32({4}, {2, 5, -1, 0.5})), {4},
      {-0.5472765564918518, 0.0, -0.3112296760082245, 0.8807970881462097});
}

TEST(KernelsTransformer, EmbedI64AndF32IdsCountingFromTheEnd) {
  Tensor table = iota(F32, {4, 2});
  expectTensor(embed(table, i64({2, 2}, {0, -1, 2, 3})), F32, {2, 2, 2},
               {0, 1, 6, 7, 4, 5, 6, 7});
  expectTensor(embed(table, f32({3}, {1, -4, 3})), F32, {3, 2},
               {2, 3, 0, 1, 6, 7});
}

} // namespace
