//===- SessionTest.cpp - Emulator sessions: state kept between runs -------===//
#include "wafer/Runtime/Emulator.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace wafer::rt;
using namespace wafer::rt::test;

namespace {

HostTensor alongX(std::string name, int64_t size, int32_t buffer) {
  return vectorTensor(std::move(name), size, buffer, {Axis::X, 2});
}

/// Two cores; each copies its element of input x into slot t of its
/// four-slot buffer `hist` (a stand-in for a KV cache) and adds the
/// weight w (placed from the program) to x.
Program historyProgram() {
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 2;
  p.buffers = {{"x", 1, DType::F32, 0},
               {"hist", 4, DType::F32, 4},
               {"w", 1, DType::F32, 20}};
  Instr copy = instr(Opcode::Copy, {1, 0});
  copy.n = 1;
  copy.expr = "t";
  copy.expr2 = "0";
  p.roles = {{"all", wholeGrid(1, 2),
              {copy, instr(Opcode::Add, {0, 0, 2}), mark(0)}}};
  HostTensor w = alongX("w", 2, 2);
  w.data = std::vector<float>{100, 200};
  p.inputs = {alongX("x", 2, 0), w};
  p.outputs = {alongX("hist", 8, 1), alongX("x_plus_w", 2, 0)};
  p.ops = {{"append", "copy", "copy"}};
  return p;
}

NDArrayMap xInput(float a, float b) {
  NDArray x;
  x.shape = {2};
  x.data = {a, b};
  return {{"x", x}};
}

std::unique_ptr<Session> session(const Program &p) {
  auto s = Session::create(p, {});
  if (!s) {
    ADD_FAILURE() << llvm::toString(s.takeError());
    return nullptr;
  }
  return std::move(*s);
}

RunResult runAt(Session &s, const NDArrayMap &inputs,
                std::optional<int64_t> position,
                std::vector<std::string> outputs = {}) {
  auto r = s.run(inputs, {position, std::move(outputs)});
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return std::move(*r);
}

TEST(Session, BuffersKeepTheirValuesBetweenRuns) {
  Program p = historyProgram();
  auto s = session(p);
  ASSERT_TRUE(s);
  for (int64_t t = 0; t < 3; ++t)
    runAt(*s, xInput(float(t + 1), float(10 * (t + 1))), t);
  RunResult r = runAt(*s, xInput(4, 40), 3);
  EXPECT_EQ(r.outputs.at("hist").data,
            (std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40}));
  // The weight was placed once, by the first run, and is still there.
  EXPECT_EQ(r.outputs.at("x_plus_w").data, (std::vector<float>{104, 240}));
}

TEST(Session, PositionDefaultsToTheProgramsAndUnplacedInputsStay) {
  Program p = historyProgram();
  p.position = 2;
  auto s = session(p);
  ASSERT_TRUE(s);
  runAt(*s, xInput(5, 6), std::nullopt);
  // A later run without x copies what x holds: 5 + 100 and 6 + 200.
  RunResult r = runAt(*s, {}, 0, {"hist"});
  EXPECT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs.at("hist").data,
            (std::vector<float>{105, 0, 5, 0, 206, 0, 6, 0}));
}

TEST(Session, Errors) {
  Program p = historyProgram();
  auto s = session(p);
  ASSERT_TRUE(s);
  EXPECT_EQ(errorOf(s->run({})), "input 'x' missing from the inputs");
  EXPECT_EQ(errorOf(s->run(xInput(1, 2), {0, {"nope"}})),
            "the program has no output 'nope'");
  EXPECT_EQ(errorOf(s->run(xInput(1, 2), {-1, {}})), "position -1 is negative");
  // An output read back through the slots is laid out for the program's
  // own position.
  Program cache = historyProgram();
  cache.position = 1;
  cache.outputs[0].indexDim = 0;
  cache.outputs[0].indexMap = {1, 5};
  cache.outputs[0].sourceShape = {2};
  auto c = session(cache);
  ASSERT_TRUE(c);
  EXPECT_EQ(errorOf(c->run(xInput(1, 2), {2, {}})),
            "output 'hist' is laid out for position 1; it cannot be read "
            "after a run at position 2");
  EXPECT_EQ(runAt(*c, xInput(1, 2), 2, {"x_plus_w"}).outputs.size(), 1u);
  EXPECT_EQ(runAt(*c, xInput(1, 2), 1).outputs.at("hist").data,
            (std::vector<float>{1, 2}));
  // A failed run ends the session.
  EXPECT_EQ(errorOf(s->run(xInput(1, 2), {4, {}})),
            "core (0,0): copy from slot 0 of 'x' (1 slots) to slot 4 of "
            "'hist' (4 slots) is out of range");
  EXPECT_EQ(errorOf(s->run(xInput(1, 2), {0, {}})),
            "the session ended with an earlier run's error");
}

TEST(Session, OneRunEqualsRunProgram) {
  Program p = ringShiftProgram(5, 7, true);
  NDArray x;
  x.shape = {5, 7};
  for (int i = 0; i < 35; ++i)
    x.data.push_back(float(i));
  auto once = runProgram(p, {{"x", x}}, {});
  ASSERT_TRUE(bool(once)) << llvm::toString(once.takeError());
  auto s = session(p);
  ASSERT_TRUE(s);
  // Twice: a second run starts from cycle 0 with an empty network.
  for (int run = 0; run < 2; ++run) {
    RunResult r = runAt(*s, {{"x", x}}, std::nullopt);
    EXPECT_EQ(r.stats.cycles, once->stats.cycles);
    EXPECT_EQ(r.stats.messages, once->stats.messages);
    EXPECT_EQ(r.outputs.at("out").data, once->outputs.at("out").data);
  }
}

/// Two cores: y = x * x at byte 8 (a prefill leaving its caches).
Program squareProgram() {
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 2;
  p.buffers = {{"x", 1, DType::F32, 0}, {"y", 1, DType::F32, 8}};
  p.roles = {
      {"all", wholeGrid(1, 2), {instr(Opcode::Mul, {1, 0, 0}), mark(0)}}};
  p.inputs = {alongX("x", 2, 0)};
  p.outputs = {alongX("y", 2, 1)};
  p.ops = {{"square", "mul", "local"}};
  return p;
}

/// out = x + cache, the cache read at byte `cacheOffset`.
Program readerProgram(int64_t cacheOffset) {
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 2;
  p.buffers = {{"x", 1, DType::F32, 0},
               {"cache", 1, DType::F32, cacheOffset},
               {"out", 1, DType::F32, 16}};
  p.roles = {
      {"all", wholeGrid(1, 2), {instr(Opcode::Add, {2, 0, 1}), mark(0)}}};
  p.inputs = {alongX("x", 2, 0), alongX("cache", 2, 1)};
  p.outputs = {alongX("out", 2, 2)};
  p.ops = {{"add", "add", "local"}};
  return p;
}

TEST(Session, AdoptTakesOverWhatTheOtherProgramLeft) {
  Program square = squareProgram(), reader = readerProgram(8);
  auto producer = session(square), consumer = session(reader);
  ASSERT_TRUE(producer && consumer);
  runAt(*producer, xInput(3, 4), std::nullopt);
  ASSERT_FALSE(bool(consumer->adopt(*producer, {{"y", "cache"}})));
  // The cache is not an input any more: x alone runs, twice.
  for (int run = 0; run < 2; ++run) {
    RunResult r = runAt(*consumer, xInput(1, 2), std::nullopt);
    EXPECT_EQ(r.outputs.at("out").data, (std::vector<float>{10, 18}));
  }
}

TEST(Session, AdoptErrors) {
  Program square = squareProgram(), reader = readerProgram(8),
          elsewhere = readerProgram(4);
  auto producer = session(square), consumer = session(reader),
       moved = session(elsewhere);
  ASSERT_TRUE(producer && consumer && moved);
  EXPECT_EQ(errorOf(consumer->adopt(*producer, {{"y", "cache"}})),
            "a session takes over values only from a session that ran "
            "without error, before its own error");
  runAt(*producer, xInput(3, 4), std::nullopt);
  EXPECT_EQ(errorOf(consumer->adopt(*producer, {{"z", "cache"}})),
            "no output 'z' to take over as input 'cache'");
  EXPECT_EQ(errorOf(moved->adopt(*producer, {{"y", "cache"}})),
            "output 'y' (1 f32 values at byte 8 of each core) is not where "
            "input 'cache' is read (1 f32 values at byte 4, or another "
            "layout)");
  Program wide = readerProgram(8);
  wide.gridWidth = 4;
  wide.roles[0].cores = wholeGrid(1, 4);
  wide.inputs = {alongX("x", 4, 0), alongX("cache", 4, 1)};
  wide.inputs[0].layout = wide.inputs[1].layout = {{Axis::X, 4}};
  wide.outputs = {};
  auto other = session(wide);
  ASSERT_TRUE(other);
  EXPECT_EQ(errorOf(other->adopt(*producer, {{"y", "cache"}})),
            "the programs do not run on the same cores (1x2 and 1x4, or "
            "placed differently)");
}

} // namespace
