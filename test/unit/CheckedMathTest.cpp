//===- CheckedMathTest.cpp - Overflow-checked sizes -----------------------===//
#include "wafer/Eval/Kernels.h"
#include "wafer/Support/CheckedMath.h"

#include <gtest/gtest.h>

using namespace wafer;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedMath, ElementCountsThatFit) {
  EXPECT_EQ(checkedElementCount({}), 1);
  EXPECT_EQ(checkedElementCount({3, 0, 5}), 0);
  EXPECT_EQ(checkedElementCount({1 << 20, 1 << 20, 1 << 22}), int64_t(1) << 62);
}

TEST(CheckedMath, ElementCountsThatOverflowOrAreDynamic) {
  // 2^32 * 2^32 wraps to 0 in plain int64 arithmetic.
  EXPECT_EQ(checkedElementCount({int64_t(1) << 32, int64_t(1) << 32}),
            std::nullopt);
  EXPECT_EQ(checkedElementCount({100000, 100000, 100000, 100000}),
            std::nullopt);
  EXPECT_EQ(checkedElementCount({4, -1}), std::nullopt);
}

TEST(CheckedMath, ByteSizesAndOffsets) {
  EXPECT_EQ(checkedByteSize(kMax / 4, 4), kMax / 4 * 4);
  EXPECT_EQ(checkedByteSize(kMax / 4 + 1, 4), std::nullopt);
  EXPECT_EQ(checkedByteSize(-1, 4), std::nullopt);
  // The importer's external-data end: offset + length past INT64_MAX.
  EXPECT_EQ(checkedAdd(9223372036854775000, 1152), std::nullopt);
  EXPECT_EQ(checkedAdd(100, 1152), 1252);
}

TEST(CheckedMath, SaturatingSizesExceedEveryLimit) {
  EXPECT_EQ(saturatingAdd(kMax - 1, 2), kMax);
  EXPECT_EQ(saturatingMul(int64_t(1) << 40, int64_t(1) << 40), kMax);
  EXPECT_EQ(saturatingMul(6, 7), 42);
}

TEST(CheckedMath, KernelElementCountSaturates) {
  EXPECT_EQ(eval::elementCount({int64_t(1) << 32, int64_t(1) << 32}), kMax);
  EXPECT_EQ(eval::elementCount({2, 3, 4}), 24);
}

} // namespace
