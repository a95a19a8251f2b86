//===- LayoutTest.cpp - Placing host tensors on the grid ------------------===//
#include "wafer/Runtime/Layout.h"

#include <gtest/gtest.h>

#include <array>
#include <map>

using namespace wafer::rt;

namespace {

std::vector<int64_t> globals(const std::vector<int64_t> &shape,
                             const std::vector<LayoutDim> &layout, int64_t h,
                             int64_t w, int64_t lx, int64_t ly) {
  std::vector<int64_t> out;
  forEachLocalElement(shape, layout, h, w, lx, ly,
                      [&](int64_t local, int64_t global) {
                        EXPECT_EQ(local, int64_t(out.size()));
                        out.push_back(global);
                      });
  return out;
}

TEST(Layout, SplitWithSlotsAndPadding) {
  // 7 columns in 4 blocks on an x axis of extent 2: tile 2, slots 2; core at
  // lx = 1 holds blocks 1 and 3, i.e. columns 2,3 and 6,(pad).
  std::vector<int64_t> shape = {2, 7};
  std::vector<LayoutDim> layout = {{Axis::None, 1}, {Axis::X, 4}};
  EXPECT_EQ(localElements(shape, layout, 3, 2), 2 * 2 * 2);
  EXPECT_EQ(globals(shape, layout, 3, 2, 1, 0),
            (std::vector<int64_t>{2, 3, 9, 10, 6, -1, 13, -1}));
}

TEST(Layout, RunsAreContiguousSourceRangesAndPadding) {
  // The core of SplitWithSlotsAndPadding in runs of the last dimension.
  std::vector<int64_t> shape = {2, 7};
  std::vector<LayoutDim> layout = {{Axis::None, 1}, {Axis::X, 4}};
  std::vector<std::array<int64_t, 3>> runs;
  forEachLocalRun(shape, layout, 3, 2, 1, 0,
                  [&](int64_t local, int64_t global, int64_t length) {
                    runs.push_back({local, global, length});
                  });
  EXPECT_EQ(runs, (std::vector<std::array<int64_t, 3>>{
                      {0, 2, 2}, {2, 9, 2}, {4, 6, 1}, {5, -1, 1},
                      {6, 13, 1}, {7, -1, 1}}));
  // An empty last dimension has no runs, however large the others (a
  // fuzzed bundle made this loop over 2^40 empty runs).
  int64_t visits = 0;
  forEachLocalRun({int64_t(1) << 40, 0}, {{Axis::None, 1}, {Axis::None, 1}},
                  1, 1, 0, 0, [&](int64_t, int64_t, int64_t) { ++visits; });
  EXPECT_EQ(visits, 0);
}

TEST(Layout, BalancedBlocksDifferByAtMostOne) {
  // 10 entries in 4 blocks: ceil-sized 3, 3, 3, 1; balanced 3, 3, 2, 2,
  // each padded to the tile of 3 at its end.
  std::vector<int64_t> shape = {10};
  std::vector<LayoutDim> ceil = {{Axis::X, 4}}, balanced = {{Axis::X, 4, true}};
  EXPECT_EQ(globals(shape, ceil, 1, 4, 3, 0),
            (std::vector<int64_t>{9, -1, -1}));
  std::vector<std::vector<int64_t>> blocks;
  for (int64_t lx = 0; lx < 4; ++lx)
    blocks.push_back(globals(shape, balanced, 1, 4, lx, 0));
  EXPECT_EQ(blocks, (std::vector<std::vector<int64_t>>{
                        {0, 1, 2}, {3, 4, 5}, {6, 7, -1}, {8, 9, -1}}));
  for (int64_t b = 0; b <= 4; ++b)
    EXPECT_EQ(blockStart(10, 4, true, b), (std::array{0, 3, 6, 8, 10})[b]);
}

TEST(Layout, BalancedInParts) {
  // 16 lanes of 4 KV heads on 10 columns, balanced in 2 parts of 8 lanes
  // on 5 columns each: 2, 2, 2, 1, 1 twice, no column without a lane, each
  // part's lanes on its own columns. Ceil-sized, the last 2 columns would
  // hold none.
  std::vector<int64_t> shape = {16};
  std::vector<LayoutDim> layout = {{Axis::X, 10, true, 2}};
  std::vector<std::vector<int64_t>> blocks;
  for (int64_t lx = 0; lx < 10; ++lx)
    blocks.push_back(globals(shape, layout, 1, 10, lx, 0));
  EXPECT_EQ(blocks, (std::vector<std::vector<int64_t>>{{0, 1},
                                                       {2, 3},
                                                       {4, 5},
                                                       {6, -1},
                                                       {7, -1},
                                                       {8, 9},
                                                       {10, 11},
                                                       {12, 13},
                                                       {14, -1},
                                                       {15, -1}}));
  for (int64_t b = 0; b <= 10; ++b)
    EXPECT_EQ(blockStart(16, 10, true, b, 2),
              (std::array{0, 2, 4, 6, 7, 8, 10, 12, 14, 15, 16})[b]);
  // One part is plain balancing.
  for (int64_t b = 0; b <= 10; ++b)
    EXPECT_EQ(blockStart(16, 10, true, b, 1), blockStart(16, 10, true, b));
}

TEST(Layout, BalancedRowsAndSlots) {
  // Rows balanced over 4 blocks on a y axis of extent 2 (slots 2), columns
  // ceil-sized: 5 rows are blocks of 2, 1, 1, 1; every element once.
  std::vector<int64_t> shape = {5, 3};
  std::vector<LayoutDim> layout = {{Axis::Y, 4, true}, {Axis::X, 2}};
  EXPECT_EQ(globals(shape, layout, 2, 2, 0, 1),
            (std::vector<int64_t>{6, 7, -1, -1, 12, 13, -1, -1}));
  std::map<int64_t, int> seen;
  for (int64_t ly = 0; ly < 2; ++ly)
    for (int64_t lx = 0; lx < 2; ++lx)
      for (int64_t g : globals(shape, layout, 2, 2, lx, ly))
        if (g >= 0)
          ++seen[g];
  ASSERT_EQ(seen.size(), 15u);
  for (const auto &[g, count] : seen)
    EXPECT_EQ(count, 1) << g;
}

TEST(Layout, EveryElementPlacedOncePerReplica) {
  std::vector<int64_t> shape = {5, 9};
  std::vector<LayoutDim> layout = {{Axis::Y, 6}, {Axis::X, 3}};
  int64_t h = 3, w = 3;
  std::map<int64_t, int> seen;
  for (int64_t ly = 0; ly < h; ++ly)
    for (int64_t lx = 0; lx < w; ++lx)
      for (int64_t g : globals(shape, layout, h, w, lx, ly))
        if (g >= 0)
          ++seen[g];
  ASSERT_EQ(seen.size(), 45u);
  for (const auto &[g, count] : seen)
    EXPECT_EQ(count, 1) << g;
}

TEST(Layout, ScalarAndReplicated) {
  EXPECT_EQ(localElements({}, {}, 4, 4), 1);
  EXPECT_EQ(globals({}, {}, 4, 4, 3, 2), (std::vector<int64_t>{0}));
  EXPECT_EQ(globals({3}, {{Axis::None, 1}}, 4, 4, 2, 1),
            (std::vector<int64_t>{0, 1, 2}));
}

TEST(Layout, SourceIndexPermutesAndBroadcasts) {
  HostTensor t;
  t.shape = {2, 3, 4};
  t.sourceShape = {4, 3};
  t.permutation = {1, 0}; // source [4,3] transposed to [3,4], broadcast
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(sourceIndex(t, (i * 3 + j) * 4 + k), k * 3 + j);
  HostTensor b;
  b.shape = {3, 2};
  b.sourceShape = {1, 2};
  EXPECT_EQ(sourceIndex(b, 5), 1);
  EXPECT_EQ(sourceIndex(b, 4), 0);
  HostTensor s;
  s.shape = {2, 2};
  EXPECT_EQ(sourceIndex(s, 3), 0);
}

TEST(Layout, SourceIndexThroughViews) {
  // Attention lanes: a past cache [KVH = 2, P = 3, D = 4] (rotate-half: a
  // head's dimension d is (u, i) = (d / 2, d % 2)) placed as
  // [lanes = KVH * 2, slots = 4, 2]: the source viewed as [2, 3, 2, 2]
  // (h, p, u, i), permuted to the view [2, 2, 4, 2] (h, i, slots, u) with
  // slot s holding position indexMap[s].
  HostTensor t;
  t.shape = {4, 4, 2};
  t.view = {2, 2, 4, 2};
  t.sourceShape = {2, 3, 4};
  t.sourceView = {2, 3, 2, 2};
  t.permutation = {0, 3, 1, 2};
  t.indexDim = 2;
  t.indexMap = {0, -1, 1, 2};
  for (int64_t lane = 0; lane < 4; ++lane)
    for (int64_t slot = 0; slot < 4; ++slot)
      for (int64_t u = 0; u < 2; ++u) {
        int64_t head = lane / 2, i = lane % 2, position = t.indexMap[slot];
        int64_t want = position < 0 ? -1 : (head * 3 + position) * 4 + u * 2 + i;
        EXPECT_EQ(sourceIndex(t, (lane * 4 + slot) * 2 + u), want)
            << "lane " << lane << " slot " << slot << " u " << u;
      }
}

/// Every placed element's source index through forEachSourceRun.
std::vector<int64_t> sourceIndicesByRuns(const HostTensor &t) {
  std::vector<int64_t> out;
  forEachSourceRun(
      t, [&](int64_t placed, int64_t length, int64_t source, int64_t stride) {
        EXPECT_EQ(placed, int64_t(out.size()));
        for (int64_t i = 0; i < length; ++i)
          out.push_back(source < 0 ? -1 : source + i * stride);
      });
  return out;
}

TEST(Layout, SourceRunsAgreeWithSourceIndex) {
  std::vector<HostTensor> cases(6);
  cases[0].shape = {2, 3, 4}; // transposed and broadcast
  cases[0].sourceShape = {4, 3};
  cases[0].permutation = {1, 0};
  cases[1].shape = {3, 2}; // broadcast rows
  cases[1].sourceShape = {1, 2};
  cases[2].shape = {4, 4, 2}; // lanes: views and a gather
  cases[2].view = {2, 2, 4, 2};
  cases[2].sourceShape = {2, 3, 4};
  cases[2].sourceView = {2, 3, 2, 2};
  cases[2].permutation = {0, 3, 1, 2};
  cases[2].indexDim = 2;
  cases[2].indexMap = {0, -1, 1, 2};
  cases[3].shape = {3, 4}; // a gather along the last dimension
  cases[3].sourceShape = {3, 2};
  cases[3].indexDim = 1;
  cases[3].indexMap = {1, -1, 0, 1};
  cases[4].shape = {};     // a scalar
  cases[5].shape = {2, 3}; // identity
  cases[5].sourceShape = {2, 3};
  for (const HostTensor &t : cases) {
    int64_t count = 1;
    for (int64_t extent : t.viewShape())
      count *= extent;
    std::vector<int64_t> want;
    for (int64_t i = 0; i < count; ++i)
      want.push_back(sourceIndex(t, i));
    EXPECT_EQ(sourceIndicesByRuns(t), want);
  }
}

} // namespace
