//===- FabricTest.cpp - Interleave, K-tree and route allocation -----------===//
#include "wafer/Runtime/Fabric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace wafer::rt;

namespace {

TEST(Interleave, PaperExampleN5) {
  // Paper section 5.2: with N = 5, physical core 2 sends to 4 and receives
  // from 0.
  InterleaveNeighbors n = interleave(2, 5);
  EXPECT_EQ(n.send, 4);
  EXPECT_EQ(n.recv, 0);
  EXPECT_EQ(ringOrder(5, true), (std::vector<int64_t>{0, 2, 4, 3, 1}));
}

TEST(Interleave, RingIsPermutationWithTwoHopNeighbours) {
  for (int64_t n = 3; n <= 300; ++n) {
    std::vector<int64_t> ring = ringOrder(n, true);
    std::vector<int64_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(sorted[i], i) << "n=" << n;
    std::vector<int64_t> pos = ringPositions(n, true);
    for (int64_t l = 0; l < n; ++l) {
      ASSERT_EQ(pos[ring[l]], l);
      int64_t next = ring[(l + 1) % n];
      ASSERT_LE(std::abs(next - ring[l]), 2) << "n=" << n << " l=" << l;
      // Algorithm 1's receive link is the inverse of its send link.
      ASSERT_EQ(interleave(ring[l], n).send, next);
      ASSERT_EQ(interleave(next, n).recv, ring[l]);
    }
  }
}

TEST(Interleave, IdentityWhenOffOrTooSmall) {
  EXPECT_EQ(ringOrder(6, false), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ringOrder(2, true), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ringOrder(1, true), (std::vector<int64_t>{0}));
}

TEST(KTree, EveryPositionSendsOnceWithinBoundedGroups) {
  for (int64_t n = 1; n <= 200; ++n)
    for (int64_t k = 1; k <= 4; ++k) {
      std::vector<KTreeLevel> levels = ktreeLevels(n, k);
      ASSERT_LE(int64_t(levels.size()), k);
      if (n == 1) {
        ASSERT_TRUE(levels.empty());
        continue;
      }
      std::vector<int> sends(n, 0);
      int64_t stride = 1;
      for (const KTreeLevel &level : levels) {
        ASSERT_EQ(level.stride, stride);
        std::map<int64_t, int64_t> groupMembers;
        for (int64_t l = 0; l < n; l += level.stride) {
          int64_t member = (l / level.stride) % level.groupSize;
          ++groupMembers[(l / level.stride) / level.groupSize];
          if (member > 0) {
            ++sends[l];
            // The receiver is the previous member of the same group.
            ASSERT_EQ(((l - level.stride) / level.stride) % level.groupSize,
                      member - 1);
          }
        }
        for (const auto &[group, members] : groupMembers)
          ASSERT_LE(members, level.groupSize);
        stride *= level.groupSize;
      }
      EXPECT_EQ(sends[0], 0) << "n=" << n << " k=" << k;
      for (int64_t l = 1; l < n; ++l)
        ASSERT_EQ(sends[l], 1) << "n=" << n << " k=" << k << " l=" << l;
    }
}

TEST(KTree, GroupSizeIsSmallestKthRoot) {
  EXPECT_EQ(ktreeLevels(16, 2)[0].groupSize, 4);
  EXPECT_EQ(ktreeLevels(17, 2)[0].groupSize, 5);
  EXPECT_EQ(ktreeLevels(200, 1)[0].groupSize, 200);
  EXPECT_EQ(ktreeLevels(8, 3).size(), 3u);
}

/// Follows the routes of `color` from `src` along a row (axis X, row `row`)
/// or column, returning the cores that receive the message; fails on a
/// missing rule, a direction mismatch or a loop.
std::set<int64_t> deliveries(const std::vector<Route> &routes, Axis axis,
                             int64_t row, int64_t n, int64_t src,
                             int32_t color) {
  auto ruleAt = [&](int64_t i) -> const Route * {
    int64_t x = axis == Axis::X ? i : row, y = axis == Axis::X ? row : i;
    const Route *found = nullptr;
    for (const Route &r : routes)
      if (r.color == color && r.cores.contains(x, y)) {
        EXPECT_EQ(found, nullptr) << "two rules at index " << i;
        found = &r;
      }
    return found;
  };
  // Follows every branch of the multicast; a core reached twice is a loop.
  std::set<int64_t> got, visited;
  std::vector<std::pair<int64_t, Dir>> heads{{src, Dir::Ramp}};
  Dir fwd = axis == Axis::X ? Dir::East : Dir::South;
  Dir back = axis == Axis::X ? Dir::West : Dir::North;
  while (!heads.empty()) {
    auto [at, from] = heads.back();
    heads.pop_back();
    if (!visited.insert(at).second) {
      ADD_FAILURE() << "routing loop at index " << at;
      return got;
    }
    const Route *r = ruleAt(at);
    if (!r) {
      ADD_FAILURE() << "no rule at index " << at;
      return got;
    }
    EXPECT_EQ(r->in, from);
    if (r->outMask & dirBit(Dir::Ramp))
      got.insert(at);
    if (r->outMask & dirBit(fwd))
      heads.push_back({at + 1, back});
    if (r->outMask & dirBit(back))
      heads.push_back({at - 1, fwd});
  }
  return got;
}

void checkFamily(const std::vector<LinePath> &paths, Axis axis, int64_t n) {
  int32_t numColors = 0;
  std::vector<int32_t> colors = colorLinePaths(paths, numColors);
  int64_t h = axis == Axis::X ? 3 : n, w = axis == Axis::X ? n : 3;
  std::vector<Route> routes = buildRoutes(paths, colors, axis, h, w, 2);
  // One rule per color per core.
  std::set<std::tuple<int64_t, int64_t, int32_t>> seen;
  for (const Route &r : routes)
    for (int64_t y = r.cores.y.lo; y <= r.cores.y.hi; y += r.cores.y.step)
      for (int64_t x = r.cores.x.lo; x <= r.cores.x.hi; x += r.cores.x.step)
        ASSERT_TRUE(seen.insert({x, y, r.color}).second)
            << "core (" << x << "," << y << ") color " << r.color;
  for (size_t i = 0; i < paths.size(); ++i)
    for (int64_t row = 0; row < 3; ++row) {
      std::set<int64_t> want(paths[i].dsts.begin(), paths[i].dsts.end());
      ASSERT_EQ(deliveries(routes, axis, row, n, paths[i].src, colors[i] + 2),
                want)
          << "n=" << n << " path " << i;
    }
}

TEST(Routes, RingShiftUsesThreeColorsAndConstantRules) {
  // Each core lies on at most three interleaved ring paths (the one it
  // sends, the one it receives and one passing over it), and greedy
  // interval coloring is optimal, so three colors suffice for every N.
  size_t rulesAt16 = 0;
  for (int64_t n = 3; n <= 300; ++n)
    for (bool interleaved : {true, false}) {
      std::vector<LinePath> paths = ringShiftPaths(n, interleaved);
      int32_t numColors = 0;
      std::vector<int32_t> colors = colorLinePaths(paths, numColors);
      ASSERT_LE(numColors, 3) << "n=" << n;
      ASSERT_LE(maxColorsPerIndex(paths, colors, n), numColors);
      if (!interleaved)
        continue;
      size_t rules = buildRoutes(paths, colors, Axis::X, 4, n, 0).size();
      if (n == 16)
        rulesAt16 = rules;
      if (n >= 16) {
        ASSERT_EQ(rules, rulesAt16) << "n=" << n;
      }
    }
}

TEST(Routes, NeighbourHopsAlternateTwoColors) {
  for (bool forward : {true, false}) {
    std::vector<LinePath> paths = neighborPaths(5, forward);
    ASSERT_EQ(paths.size(), 4u);
    for (const LinePath &p : paths) {
      ASSERT_EQ(p.dsts.size(), 1u);
      EXPECT_EQ(p.dsts[0] - p.src, forward ? 1 : -1);
    }
    int32_t numColors = 0;
    std::vector<int32_t> colors = colorLinePaths(paths, numColors);
    EXPECT_EQ(numColors, 2);
    EXPECT_EQ(maxColorsPerIndex(paths, colors, 5), 2);
  }
  EXPECT_TRUE(neighborPaths(1, true).empty());
}

TEST(Routes, ColoringSeparatesOverlappingPaths) {
  std::vector<LinePath> paths = {{0, {4}}, {2, {3}}, {4, {6}}, {7, {5}}};
  int32_t numColors = 0;
  std::vector<int32_t> colors = colorLinePaths(paths, numColors);
  EXPECT_EQ(numColors, 2);
  EXPECT_NE(colors[0], colors[1]);
  EXPECT_NE(colors[0], colors[2]); // they share core 4
  EXPECT_NE(colors[2], colors[3]);
}

TEST(Routes, ReconstructedPathsReachExactlyTheirDestinations) {
  for (int64_t n : {3, 4, 5, 7, 16, 33})
    for (bool interleaved : {true, false})
      for (Axis axis : {Axis::X, Axis::Y}) {
        checkFamily(ringShiftPaths(n, interleaved), axis, n);
        if (!interleaved)
          for (bool centered : {true, false}) {
            int64_t root = ktreeRoot(n, centered);
            checkFamily(broadcastPaths(n, root), axis, n);
            checkFamily(ktreeJoinPaths(n, root), axis, n);
            for (int64_t k : {1, 2, 3})
              for (const KTreeLevel &level : rootedTreeLevels(n, root, k))
                checkFamily(ktreeLevelPaths(n, root, level), axis, n);
          }
      }
}

TEST(KTree, CenteredHalvesReachTheRootOnce) {
  // Every position but the root sends once per tree (at its last level or
  // in the join), towards the root, and every chain message stays on its
  // side of the middle.
  for (int64_t n = 2; n <= 60; ++n)
    for (int64_t k = 1; k <= 4; ++k) {
      int64_t root = ktreeRoot(n, true);
      ASSERT_EQ(root, (n - 1) / 2);
      std::vector<int> sends(n, 0);
      for (const KTreeLevel &level : rootedTreeLevels(n, root, k))
        for (const LinePath &p : ktreeLevelPaths(n, root, level)) {
          ++sends[p.src];
          ASSERT_EQ(p.dsts.size(), 1u);
          ASSERT_EQ(p.src <= root, p.dsts[0] <= root) << n;
          ASSERT_LT(std::abs(p.dsts[0] - root), std::abs(p.src - root));
        }
      for (const LinePath &p : ktreeJoinPaths(n, root))
        ++sends[p.src];
      for (int64_t p = 0; p < n; ++p)
        ASSERT_EQ(sends[p], p == root ? 0 : 1) << "n=" << n << " p=" << p;
    }
}

TEST(Routes, MulticastDropsAtIntermediateDestinations) {
  std::vector<Route> routes = buildRoutes({{1, {2, 4}}}, {0}, Axis::X, 1, 5, 0);
  std::map<int64_t, std::pair<Dir, uint8_t>> byX;
  for (const Route &r : routes)
    for (int64_t x = r.cores.x.lo; x <= r.cores.x.hi; x += r.cores.x.step)
      byX[x] = {r.in, r.outMask};
  ASSERT_EQ(byX.size(), 4u);
  EXPECT_EQ(byX[1], std::make_pair(Dir::Ramp, dirBit(Dir::East)));
  EXPECT_EQ(byX[2], std::make_pair(Dir::West, uint8_t(dirBit(Dir::East) |
                                                      dirBit(Dir::Ramp))));
  EXPECT_EQ(byX[3], std::make_pair(Dir::West, dirBit(Dir::East)));
  EXPECT_EQ(byX[4], std::make_pair(Dir::West, dirBit(Dir::Ramp)));
}

} // namespace
