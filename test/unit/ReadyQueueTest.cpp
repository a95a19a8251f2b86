//===- ReadyQueueTest.cpp - The emulator's event queue --------------------===//
#include "ReadyQueue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

using namespace wafer::rt::emulator;

namespace {

/// Pushes `runs` ascending runs of random ids at one time, each run's ids
/// below the previous run's (so that there are exactly `runs` runs), and
/// one id at each of some other times; checks that the batch comes out as
/// std::sort orders it.
void checkRuns(unsigned runs, unsigned seed, unsigned runLength = 50,
               int32_t spread = 100) {
  std::mt19937 random(seed);
  ReadyQueue queue;
  std::vector<int32_t> expected;
  for (unsigned r = 0; r < runs; ++r) {
    std::vector<int32_t> run(1 + random() % runLength);
    int32_t below = int32_t(runs - r) * spread;
    for (int32_t &id : run)
      id = below + int32_t(random() % spread);
    std::sort(run.begin(), run.end());
    for (int32_t id : run) {
      queue.push(7, id);
      expected.push_back(id);
    }
    queue.push(9 + r, int32_t(r));
  }
  std::sort(expected.begin(), expected.end());
  std::vector<int32_t> batch;
  ASSERT_EQ(queue.popEarliest(batch), 7);
  EXPECT_EQ(batch, expected) << runs << " runs, seed " << seed;
  for (unsigned r = 0; r < runs; ++r) {
    ASSERT_EQ(queue.popEarliest(batch), int64_t(9 + r));
    EXPECT_EQ(batch, std::vector<int32_t>{int32_t(r)});
  }
  EXPECT_TRUE(queue.empty());
}

TEST(ReadyQueueTest, BatchesComeOutInIdOrder) {
  // One run, a few (merged), and more than the merge takes (sorted).
  for (unsigned runs : {1u, 2u, 3u, 5u, 8u, 9u, 40u})
    for (unsigned seed = 0; seed < 20; ++seed)
      checkRuns(runs, seed);
}

TEST(ReadyQueueTest, LargeBatchesOfManyRunsComeOutInIdOrder) {
  // Sorted by bytes: ids of two to four bytes (a full wafer's are three).
  for (int32_t spread : {10, 1000, 20000, 1 << 22})
    for (unsigned seed = 0; seed < 5; ++seed)
      checkRuns(40, seed, 200, spread);
}

TEST(ReadyQueueTest, BatchesTakeTheirTimeFromEveryLane) {
  // Each lane's cores of a time, as a band's thread queues them, and times
  // that only some lanes hold.
  std::mt19937 random(3);
  ReadyQueue queue(4);
  std::map<int64_t, std::vector<int32_t>> expected;
  for (int32_t id = 0; id < 2000; ++id) {
    int64_t time = 10 + int64_t(random() % 5);
    queue.push(time, id, size_t(random() % 4));
    expected[time].push_back(id);
  }
  queue.push(3, 7, 2);
  expected[3].push_back(7);
  std::vector<int32_t> batch;
  for (const auto &[time, ids] : expected) {
    ASSERT_EQ(queue.popEarliest(batch), time);
    EXPECT_EQ(batch, ids) << "time " << time;
  }
  EXPECT_TRUE(queue.empty());
}

TEST(ReadyQueueTest, LanesTakePushesAgainAfterAPop) {
  // A lane pushed to after its last bucket came out (its storage reused),
  // and more lanes than runs the merge takes.
  ReadyQueue queue(12);
  std::vector<int32_t> batch;
  for (size_t lane = 0; lane < 12; ++lane)
    queue.push(5, int32_t(100 - lane), lane);
  queue.push(6, 1, 3);
  ASSERT_EQ(queue.popEarliest(batch), 5);
  std::vector<int32_t> expected;
  for (int32_t id = 89; id <= 100; ++id)
    expected.push_back(id);
  EXPECT_EQ(batch, expected);
  queue.push(5, 9, 3);
  queue.push(6, 0, 7);
  ASSERT_EQ(queue.popEarliest(batch), 5);
  EXPECT_EQ(batch, std::vector<int32_t>{9});
  ASSERT_EQ(queue.popEarliest(batch), 6);
  EXPECT_EQ(batch, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(queue.empty());
}

TEST(ReadyQueueTest, EmptyAndSingleBatches) {
  ReadyQueue queue;
  EXPECT_TRUE(queue.empty());
  std::vector<int32_t> batch{42};
  queue.push(3, 5);
  EXPECT_EQ(queue.popEarliest(batch), 3);
  EXPECT_EQ(batch, std::vector<int32_t>{5});
  EXPECT_TRUE(queue.empty());
}

} // namespace
