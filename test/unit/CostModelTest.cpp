//===- CostModelTest.cpp - The closed forms the planner chooses by --------===//
#include "wafer/CostModel/CostModel.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/Target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace wafer;
using namespace wafer::cost;
using llvm::cantFail;
using wafer::rt::Target;

namespace {

TEST(KTree, ShallowTreesDoAsWellAsBinary) {
  Target t = cantFail(rt::getPresetTarget("wse2"));
  // The 4096-wide f16 GEMV on 128 rows: K = 4 (groups of 3 in each half of
  // 64) is modeled fastest, and the emulator measured it within 4 cycles
  // of the fastest among K = 1..7 (613 cycles; K = 3: 609, K = 2: 636,
  // K = 7: 648, K = 1: 1103). The chains stream, so a chain member costs a
  // few cycles and the hops, not a message: shallow trees do as well as
  // the binary one.
  for (int64_t k : {1, 2, 6, 7})
    EXPECT_GT(ktreeAllreduceCycles(128, k, 32, 16, 4, t, true, false),
              ktreeAllreduceCycles(128, 4, 32, 16, 4, t, true, false))
        << k;
  // Two positions: one chain of two at any K.
  EXPECT_EQ(ktreeAllreduceCycles(2, 1, 32, 16, 4, t, true, false),
            ktreeAllreduceCycles(2, 3, 32, 16, 4, t, true, false));
}

TEST(KTree, PositionsTwoHopsApart) {
  Target t = cantFail(rt::getPresetTarget("wse2"));
  // Two positions: the right half's root hands its sum over one position,
  // the root broadcasts back over one; two hops apart, each takes one hop
  // more (a lane segment's tree under INTERLEAVE).
  int64_t near = ktreeAllreduceCycles(2, 2, 32, 16, 4, t, true, false, false);
  int64_t far = ktreeAllreduceCycles(2, 2, 32, 16, 4, t, true, false, false, 2);
  EXPECT_EQ(far - near, 2 * t.hopCycles);
  EXPECT_GT(ktreeAllreduceCycles(64, 2, 32, 16, 4, t, true, false, false, 2),
            ktreeAllreduceCycles(64, 2, 32, 16, 4, t, true, false, false));
}

TEST(KTree, MembersStartAtTheirTimes) {
  Target t = cantFail(rt::getPresetTarget("wse2"));
  auto allreduce = [&](std::vector<int64_t> &times, bool centered) {
    return ktreeAllreduceCycles(17, 3, 32, 16, 4, t, centered, false, false, 1,
                                &times);
  };
  // From 0 everywhere: the common-start estimate, the farthest position
  // the last to hold the sum, the root the first.
  std::vector<int64_t> zero(17, 0);
  int64_t common = allreduce(zero, true);
  EXPECT_EQ(common, ktreeAllreduceCycles(17, 3, 32, 16, 4, t, true, false));
  EXPECT_EQ(*std::max_element(zero.begin(), zero.end()), common);
  EXPECT_LT(zero[rt::ktreeRoot(17, true)], common);
  // Every member later by the same: every end so much later.
  std::vector<int64_t> later(17, 100);
  EXPECT_EQ(allreduce(later, true), common + 100);
  // The pipeline's chain runs from the far end to position 0: a member
  // late near the root holds up less than the last member late.
  std::vector<int64_t> nearRoot(17, 0), farEnd(17, 0);
  nearRoot[1] = farEnd[16] = 200;
  EXPECT_LT(allreduce(nearRoot, false), allreduce(farEnd, false));
}

TEST(RingShift, OneCoreOnlyWorks) {
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  // A ring of one sends nothing: each step is the core's own work.
  EXPECT_EQ(ringShiftCycles(timing, 5, 64, rt::DType::F16, 1, false, 3, 4, 7),
            5 * (3 + 4 + 7));
  EXPECT_EQ(ringShiftCycles(timing, 0, 64, rt::DType::F16, 8, true, 3, 4, 7),
            0);
}

TEST(RingShift, MessagesBoundAStepWhenTheWorkIsShort) {
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  // INTERLEAVE: every step is at most two hops, so a step of a ring of
  // eight costs the message's way to the next position and the receive.
  EXPECT_EQ(ringHops(8, true).longest, 2);
  EXPECT_EQ(ringHops(8, false).longest, 7);
  int64_t step =
      messageCycles(timing, 64, rt::DType::F16, 2) + timing.receiveCycles();
  EXPECT_EQ(ringShiftCycles(timing, 8, 64, rt::DType::F16, 8, true, 0, 0, 0),
            8 * step);
  // The identity placement pays its wrap-around's six extra hops once.
  int64_t identity =
      ringShiftCycles(timing, 8, 64, rt::DType::F16, 8, false, 0, 0, 0);
  EXPECT_EQ(identity, 8 * (messageCycles(timing, 64, rt::DType::F16, 1) +
                           timing.receiveCycles()) +
                          6 * timing.hopCycles());
}

TEST(GemmSchedules, OneCoreMultipliesOnce) {
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  GemmTiling t;
  t.mt = t.kt = t.nt = 8;
  CoreClock mesh(1, 1), summa(1, 1);
  advanceMeshGemm(timing, {t, true, rt::DType::F32, 0, 100}, mesh);
  advanceSumma(timing, t, rt::DType::F32, 100, summa);
  EXPECT_EQ(mesh.latest(), 100);
  EXPECT_EQ(summa.latest(), 100);
}

TEST(CoreClock, RingOpsRunTogether) {
  // Two MeshGEMMs of 8x64x172 on 5 x 7 cores (the tiny model's gate and up
  // projections, A copied first). Simulated together, cores that
  // start the second early hold up the first's last tiles on their
  // neighbours' ramps, so the first ends later than alone: the run's
  // latests revise it (e2e/modes.test checks the same against the
  // emulator, op by op). Local work joins the run; any other op ends it.
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  // blocks, aSlots, bSlots, mt, kt, nt
  GemmTiling t{35, 5, 7, 2, 2, 25};
  MeshGemm gemm{t, true, rt::DType::F32, 70,
                timing.kernelCycles(100, rt::DType::F32)};
  CoreClock alone(5, 7), run(5, 7);
  advanceMeshGemm(timing, gemm, alone);
  EXPECT_EQ(alone.runLatests(), std::vector<int64_t>{alone.latest()});
  advanceMeshGemm(timing, gemm, run);
  EXPECT_EQ(run.latest(), alone.latest());
  advanceMeshGemm(timing, gemm, run);
  std::vector<int64_t> latests = run.runLatests();
  ASSERT_EQ(latests.size(), 2u);
  EXPECT_GT(latests[0], alone.latest()) << "held up by the second GEMM";
  EXPECT_EQ(latests[1], run.latest());
  run.local(7);
  latests = run.runLatests();
  ASSERT_EQ(latests.size(), 3u);
  EXPECT_EQ(latests[2], latests[1] + 7);
  RingRelayout relayout;
  relayout.alongX = false;
  relayout.interleave = true;
  relayout.tileElements = 16;
  relayout.keep = [](int64_t position, int64_t source) {
    return position == source ? 4 : 1;
  };
  advanceRelayout(timing, relayout, /*closedForm=*/0, run);
  EXPECT_EQ(run.runLatests().size(), 4u);
  run.lines(true, 1);
  EXPECT_EQ(run.runLatests(), std::vector<int64_t>{run.latest()});
  // A new run starts from where the clock is.
  advanceMeshGemm(timing, gemm, run);
  EXPECT_EQ(run.runLatests().size(), 1u);
  run.barrier(1);
  EXPECT_EQ(run.runLatests().size(), 1u);
}

TEST(CoreClock, AnAllreduceRunsWithTheRingOpAfterIt) {
  // An RMSNorm's K-tree (K = 3) along the rows of 7 x 4 cores, then a
  // MeshGEMM: rows done early send their first tiles into the ramps a late
  // row's last tree messages need (e2e/modes.test checks the same against
  // the emulator). From a common start nothing is held up.
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  int64_t values = 6, words = rt::TimingModel::words(values, rt::DType::F32);
  double macs = timing.macsPerCycle(rt::DType::F32);
  auto line = [&](std::vector<int64_t> &times) {
    ktreeAllreduceCycles(4, 3, values, words, macs, timing.target(),
                         /*centered=*/true, /*interleaved=*/false,
                         /*relayed=*/false, 1, &times);
  };
  LineAllreduce allreduce =
      ktreeLine(true, 4, 3, values, words, macs, /*centered=*/true, 0, 20);
  MeshGemm gemm{GemmTiling{28, 7, 4, 1, 3, 24}, true, rt::DType::F32, 30,
                timing.kernelCycles(72, rt::DType::F32)};
  auto closedForm = [&](const std::vector<int64_t> &starts) {
    CoreClock clock(7, 4);
    clock.set(starts);
    clock.lines(true, line);
    clock.local(20);
    return clock.latest();
  };
  std::vector<int64_t> common(28, 100), staggered(28, 100);
  for (int64_t x = 0; x < 4; ++x)
    staggered[1 * 4 + x] = 900; // row 1 comes late
  for (const std::vector<int64_t> &starts : {common, staggered}) {
    CoreClock clock(7, 4);
    clock.set(starts);
    advanceLineAllreduce(timing, allreduce, line, clock);
    EXPECT_EQ(clock.latest(), closedForm(starts));
    EXPECT_EQ(clock.runLatests(), std::vector<int64_t>{clock.latest()});
    advanceMeshGemm(timing, gemm, clock);
    std::vector<int64_t> latests = clock.runLatests();
    ASSERT_EQ(latests.size(), 2u) << "the GEMM joins the allreduce's run";
    if (starts == common)
      EXPECT_EQ(latests[0], closedForm(starts));
    else
      EXPECT_GT(latests[0], closedForm(starts)) << "held up by the GEMM";
  }
  // An op of another kind after it ends the run: the closed form stands.
  CoreClock clock(7, 4);
  clock.set(staggered);
  advanceLineAllreduce(timing, allreduce, line, clock);
  clock.lines(false, 5);
  EXPECT_EQ(clock.runLatests(), std::vector<int64_t>{clock.latest()});
}

TEST(CoreClock, OpsWaitForTheCoresTheyNeed) {
  // A 2 x 3 grid (h = 2 rows of w = 3), cores row-major.
  CoreClock clock(2, 3);
  clock.local(5);
  EXPECT_EQ(clock.latest(), 5);
  EXPECT_TRUE(clock.perCore().empty()) << "every core agrees: one time";
  clock.set({1, 7, 3, 2, 2, 4});
  EXPECT_EQ(clock.latest(), 7);
  clock.local(10);
  EXPECT_EQ(clock.perCore(), (std::vector<int64_t>{11, 17, 13, 12, 12, 14}));
  // Along x: each grid row waits for its last core.
  clock.lines(true, 1);
  EXPECT_EQ(clock.perCore(), (std::vector<int64_t>{18, 18, 18, 15, 15, 15}));
  clock.set({1, 7, 3, 2, 2, 4});
  clock.lines(false, 1);
  EXPECT_EQ(clock.perCore(), (std::vector<int64_t>{3, 8, 5, 3, 8, 5}));
  clock.barrier(2);
  EXPECT_EQ(clock.latest(), 10);
  EXPECT_TRUE(clock.perCore().empty());
  // Lines that all end together leave one time.
  clock.set({1, 1, 1, 2, 2, 2});
  clock.lines(false, 0);
  EXPECT_TRUE(clock.perCore().empty());
  EXPECT_EQ(clock.latest(), 2);
  clock.local(INT64_MAX);
  EXPECT_EQ(clock.latest(), INT64_MAX) << "saturates";
}

TEST(CoreClock, KeepsRowsAndColumnsApartAsTheGridWould) {
  // Random ops on a 4 x 5 grid, against every core's time kept one by
  // one. Line ops keep the clock a time per column plus one per row; a
  // set() makes it general.
  const int64_t h = 4, w = 5;
  // A chain along the line: each core starts after its own time and the
  // core before it, then works a cost of its position.
  auto chain = [](std::vector<int64_t> &line) {
    for (size_t i = 0; i < line.size(); ++i)
      line[i] = std::max(line[i], i ? line[i - 1] : 0) + 3 + int64_t(i % 2);
  };
  std::mt19937 random(7);
  for (int run = 0; run < 200; ++run) {
    CoreClock clock(h, w);
    std::vector<int64_t> expected(h * w, 0);
    for (int step = 0; step < 12; ++step) {
      int kind = std::uniform_int_distribution<int>(0, 5)(random);
      int64_t cycles = std::uniform_int_distribution<int64_t>(0, 9)(random);
      bool alongX = kind % 2;
      if (kind == 0) {
        clock.barrier(cycles);
        int64_t last = *std::max_element(expected.begin(), expected.end());
        expected.assign(h * w, last + cycles);
      } else if (kind == 1) {
        clock.local(cycles);
        for (int64_t &t : expected)
          t += cycles;
      } else if (kind == 5 && run % 4 == 0) {
        for (int64_t &t : expected)
          t = std::uniform_int_distribution<int64_t>(0, 30)(random);
        clock.set(expected);
      } else {
        clock.lines(alongX, chain);
        // The op is a function of the line's times relative to its first
        // core to start, as the clock assumes.
        for (int64_t line = 0; line < (alongX ? h : w); ++line) {
          std::vector<int64_t> times;
          for (int64_t i = 0; i < (alongX ? w : h); ++i)
            times.push_back(expected[alongX ? line * w + i : i * w + line]);
          int64_t base = *std::min_element(times.begin(), times.end());
          for (int64_t &t : times)
            t -= base;
          chain(times);
          for (int64_t i = 0; i < (alongX ? w : h); ++i)
            expected[alongX ? line * w + i : i * w + line] = times[i] + base;
        }
      }
      ASSERT_EQ(clock.latest(),
                *std::max_element(expected.begin(), expected.end()));
      std::vector<int64_t> times = clock.perCore();
      if (clock.uniform())
        times.assign(h * w, clock.latest());
      ASSERT_EQ(times, expected) << "run " << run << ", step " << step;
    }
  }
}

TEST(GemmSchedules, StartsFromTheClock) {
  // MeshGEMM on a non-square grid, from a common start and from staggered
  // starts. From a common start the last core ends the estimate later;
  // staggered, the schedule is a function of the starts alone (starts
  // shifted by a constant end shifted by it). A late core need not end the
  // others later: its sends hold fewer of their ramps (e2e/modes.test
  // compares whole models with the emulator).
  rt::TimingModel timing(cantFail(rt::getPresetTarget("wse2")));
  GemmTiling t{15, 3, 5, 4, 4, 4}; // blocks, slots of A and B, mt, kt, nt
  int64_t multiply = timing.kernelCycles(64, rt::DType::F32);
  CoreClock zero(5, 3), common(5, 3);
  advanceMeshGemm(timing, {t, true, rt::DType::F32, 0, multiply}, zero);
  common.barrier(100);
  advanceMeshGemm(timing, {t, true, rt::DType::F32, 0, multiply}, common);
  EXPECT_EQ(common.latest(), 100 + zero.latest());
  EXPECT_EQ(common.perCore().size(), 15u) << "the cores end apart";
  // The GEMM from every core at `base`, core 7 at `base + 50`.
  auto fromStaggered = [&](int64_t base) {
    std::vector<int64_t> starts(15, base);
    starts[7] = base + 50;
    CoreClock clock(5, 3);
    clock.set(starts);
    advanceMeshGemm(timing, {t, true, rt::DType::F32, 0, multiply}, clock);
    return clock;
  };
  CoreClock late = fromStaggered(100);
  ASSERT_EQ(late.perCore().size(), 15u);
  EXPECT_NE(late.perCore(), common.perCore());
  CoreClock fromZero = fromStaggered(0);
  ASSERT_EQ(fromZero.perCore().size(), 15u);
  for (size_t c = 0; c < 15; ++c)
    EXPECT_EQ(fromZero.perCore()[c] + 100, late.perCore()[c]) << c;
}

} // namespace
