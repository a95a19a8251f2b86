//===- EmulatorTest.cpp - The mesh emulator on hand-built programs --------===//
#include "wafer/Runtime/Emulator.h"

#include "TestSupport.h"

#include <gtest/gtest.h>


using namespace wafer::rt;
using namespace wafer::rt::test;

namespace {

NDArrayMap iotaInput(const std::string &name, std::vector<int64_t> shape) {
  NDArray a;
  a.shape = std::move(shape);
  a.data.resize(a.elements());
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = float(i);
  return {{name, a}};
}

RunResult run(const Program &p, const NDArrayMap &inputs,
              unsigned threads = 1) {
  llvm::Expected<RunResult> r = runProgram(p, inputs, {threads});
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return std::move(*r);
}

std::string runError(const Program &p, const NDArrayMap &inputs = {}) {
  return errorOf(runProgram(p, inputs, {}));
}

Route route(int32_t color, int64_t x, int64_t y, Dir in,
            std::initializer_list<Dir> out) {
  Route r;
  r.color = color;
  r.cores = {{x, x, 1}, {y, y, 1}};
  r.in = in;
  for (Dir d : out)
    r.outMask |= dirBit(d);
  return r;
}

TEST(Emulator, InterleavedRingShiftMovesData) {
  for (bool interleave : {true, false}) {
    Program p = ringShiftProgram(5, 7, interleave);
    RunResult r = run(p, iotaInput("x", {5, 7}));
    ASSERT_EQ(r.outputs.count("out"), 1u);
    const NDArray &out = r.outputs.at("out");
    ASSERT_EQ(out.shape, (std::vector<int64_t>{5, 7}));
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j)
        EXPECT_EQ(out.data[i * 7 + j], float(((i + 1) % 5) * 7 + (j + 1) % 7))
            << i << "," << j;
    EXPECT_EQ(r.stats.messages, 2 * 35);
    EXPECT_EQ(r.stats.maxSramBytesPerCore, 12);
    EXPECT_EQ(r.stats.maxRoutesPerCore, 6);
    ASSERT_EQ(r.stats.ops.size(), 2u);
    EXPECT_EQ(r.stats.ops[0].wordsSent, 35);
    EXPECT_GT(r.stats.ops[0].cycles, 0);
    EXPECT_EQ(r.stats.ops[0].cycles + r.stats.ops[1].cycles, r.stats.cycles);
  }
}

TEST(Emulator, HalfBuffersRoundPackAndUseTheF16Rate) {
  // The ring shift with 4 values per core, in f32 and in f16.
  auto program = [](DType dtype) {
    Program p = ringShiftProgram(2, 3, false);
    int64_t bytes = 4 * bytesOf(dtype);
    p.buffers = {{"a", 4, dtype, 0},
                 {"b", 4, dtype, bytes},
                 {"c", 4, dtype, 2 * bytes}};
    p.inputs[0].shape = p.inputs[0].sourceShape = {2, 12};
    p.outputs[0].shape = {2, 12};
    return p;
  };
  NDArrayMap in = iotaInput("x", {2, 12});
  for (float &v : in["x"].data)
    v /= 3.0f;
  RunResult full = run(program(DType::F32), in);
  RunResult half = run(program(DType::F16), in);
  ASSERT_EQ(half.outputs.count("out"), 1u);
  const NDArray &f32 = full.outputs.at("out"), &f16 = half.outputs.at("out");
  for (size_t i = 0; i < f16.data.size(); ++i)
    EXPECT_EQ(f16.data[i], float(_Float16(f32.data[i]))) << i;
  EXPECT_NE(f16.data, f32.data);
  EXPECT_EQ(full.stats.maxSramBytesPerCore, 48);
  EXPECT_EQ(half.stats.maxSramBytesPerCore, 24);
  // Two f16 values per 32-bit link word.
  EXPECT_EQ(full.stats.ops[0].wordsSent, 6 * 4);
  EXPECT_EQ(half.stats.ops[0].wordsSent, 6 * 2);
}

TEST(Emulator, FlashStepStoresItsRunningMaxAndSumInHalfBuffersToo) {
  // One query against one key: the softmax weight is 1, so after a
  // flash step and the division by the running sum the output is the
  // value itself. The running sum and max live in an f16 buffer, which the
  // kernel updates besides its output.
  Program p;
  p.target = testTarget();
  p.gridHeight = p.gridWidth = 1;
  p.buffers = {{"out", 2, DType::F16, 0},
               {"ml", 2, DType::F16, 4},
               {"q", 2, DType::F16, 8},
               {"kv", 4, DType::F16, 12}};
  Instr flash = instr(Opcode::FlashStep, {0, 1, 2, 3});
  flash.m = flash.groups = flash.k = 1;
  flash.n = 2;
  flash.scalar = 0.5;
  flash.expr = flash.expr2 = "0";
  Instr divide = instr(Opcode::DivRows, {0, 1});
  divide.m = 1;
  divide.n = 2;
  p.roles = {{"all",
              wholeGrid(1, 1),
              {instr(Opcode::Zero, {0}), instr(Opcode::Zero, {1}), flash,
               divide, mark(0)}}};
  LayoutDim whole = {Axis::None, 1};
  p.inputs = {vectorTensor("q", 2, 2, whole), vectorTensor("kv", 4, 3, whole)};
  p.outputs = {vectorTensor("out", 2, 0, whole)};
  p.ops = {{"attention", "attention", "flash"}};
  NDArrayMap in;
  in["q"].shape = {2};
  in["q"].data = {0.5f, -1.0f};
  in["kv"].shape = {4};
  in["kv"].data = {2.0f, 1.0f, 0.75f, -3.0f}; // key, then value
  RunResult r = run(p, in);
  ASSERT_EQ(r.outputs.count("out"), 1u);
  EXPECT_EQ(r.outputs.at("out").data, (std::vector<float>{0.75f, -3.0f}));
}

TEST(Emulator, InterleaveShortensTheCriticalPath) {
  // Without interleaving the wrap-around message crosses the whole row.
  NDArrayMap in = iotaInput("x", {3, 64});
  RunResult flat = run(ringShiftProgram(3, 64, false), in);
  RunResult inter = run(ringShiftProgram(3, 64, true), in);
  ASSERT_EQ(flat.stats.ops.size(), 2u);
  ASSERT_EQ(inter.stats.ops.size(), 2u);
  EXPECT_GT(flat.stats.ops[0].cycles, 64);
  EXPECT_LT(inter.stats.ops[0].cycles, 20);
}

/// Input x and output out, `size` values split over a row of `cores` in
/// buffer 0.
void setRowTensors(Program &p, int64_t size, int64_t cores) {
  HostTensor x;
  x.name = "x";
  x.shape = {size};
  x.sourceShape = {size};
  x.buffer = 0;
  x.layout = {{Axis::X, cores}};
  p.inputs = {x};
  HostTensor out = x;
  out.name = "out";
  out.sourceShape = {};
  p.outputs = {out};
}

/// Core 0 of a 1x4 row sends 4 words to core 2, which relays them to core 3.
Program relayProgram() {
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 4;
  p.buffers = {{"a", 4, DType::F32, 0}};
  p.channels = {{"first",
                 {route(0, 0, 0, Dir::Ramp, {Dir::East}),
                  route(0, 1, 0, Dir::West, {Dir::East}),
                  route(0, 2, 0, Dir::West, {Dir::Ramp})}},
                {"second",
                 {route(1, 2, 0, Dir::Ramp, {Dir::East}),
                  route(1, 3, 0, Dir::West, {Dir::Ramp})}}};
  Instr relay = instr(Opcode::Relay, {0}, 0);
  relay.channel2 = 1;
  p.roles = {{"source", {{0, 0, 1}, {0, 0, 1}}, {instr(Opcode::Send, {0}, 0)}},
             {"idle", {{1, 1, 1}, {0, 0, 1}}, {}},
             {"relay", {{2, 2, 1}, {0, 0, 1}}, {relay}},
             {"sink", {{3, 3, 1}, {0, 0, 1}}, {instr(Opcode::Recv, {0}, 1)}}};
  setRowTensors(p, 16, 4);
  return p;
}

TEST(Emulator, RelayForwardsAndCountsCycles) {
  RunResult r = run(relayProgram(), iotaInput("x", {16}));
  ASSERT_EQ(r.outputs.count("out"), 1u);
  const std::vector<float> &out = r.outputs.at("out").data;
  // Core 3 now holds core 0's values; core 2 kept what it relayed.
  EXPECT_EQ(std::vector<float>(out.begin() + 12, out.end()),
            (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(std::vector<float>(out.begin() + 8, out.begin() + 12),
            (std::vector<float>{0, 1, 2, 3}));
  // send at 0: ramp out [0,4), head at router 2, link hops to core 2 at 4,
  // ramp in [4,8), arrival 10; relay recv done at 10 + 5 = 15; its send:
  // head 17, core 3 at 18, ramp in [18,22), arrival 24, recv done 29.
  EXPECT_EQ(r.stats.cycles, 29);
  EXPECT_EQ(r.stats.messages, 2);
  EXPECT_EQ(r.stats.linkWords, 4 * 3);
}

/// A reduce chain over a 1x3 row: core 2 sends its 4 values west, core 1
/// combines them into its own and passes the sum on (streamed as one
/// CombineRelay, or stored and forwarded as Recv, Add, Send), core 0 adds.
Program chainProgram(bool streamed) {
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 3;
  p.buffers = {{"a", 4, DType::F32, 0}, {"partial", 4, DType::F32, 16}};
  // One channel, a color per leg: core 1 both receives and sends on it.
  p.channels = {{"chain",
                 {route(0, 2, 0, Dir::Ramp, {Dir::West}),
                  route(0, 1, 0, Dir::East, {Dir::Ramp}),
                  route(1, 1, 0, Dir::Ramp, {Dir::West}),
                  route(1, 0, 0, Dir::East, {Dir::Ramp})}}};
  Instr combine = instr(Opcode::CombineRelay, {0, 1}, 0);
  combine.k = int64_t(Opcode::Add);
  std::vector<Instr> middle{combine};
  if (!streamed)
    middle = {instr(Opcode::Recv, {1}, 0), instr(Opcode::Add, {0, 0, 1}),
              instr(Opcode::Send, {0}, 0)};
  p.roles = {{"root",
              {{0, 0, 1}, {0, 0, 1}},
              {instr(Opcode::Recv, {1}, 0), instr(Opcode::Add, {0, 0, 1})}},
             {"middle", {{1, 1, 1}, {0, 0, 1}}, middle},
             {"last", {{2, 2, 1}, {0, 0, 1}}, {instr(Opcode::Send, {0}, 0)}}};
  setRowTensors(p, 12, 3);
  return p;
}

TEST(Emulator, CombineRelayStreamsTheChain) {
  for (bool streamed : {true, false}) {
    RunResult r = run(chainProgram(streamed), iotaInput("x", {12}));
    ASSERT_EQ(r.outputs.count("out"), 1u);
    // The same sums either way: core 0 all three, core 1 its and core 2's.
    EXPECT_EQ(std::vector<float>(r.outputs.at("out").data.begin(),
                                 r.outputs.at("out").data.begin() + 8),
              (std::vector<float>{12, 15, 18, 21, 12, 14, 16, 18}))
        << streamed;
    // Core 2's send: ramp out [0,4), core 1's ramp in [3,7), last word in
    // at 9, so its first word at 6. Streamed, core 1 sends at 6 + 5 = 11:
    // core 0's ramp in [14,18), arrival 20, receive 25, add 29. Stored and
    // forwarded, it receives at 9 + 5, adds until 18 and sends: arrival 27,
    // receive 32, add 36.
    EXPECT_EQ(r.stats.cycles, streamed ? 29 : 36) << streamed;
  }
}

TEST(Emulator, SlowCombineHoldsTheStreamedSendBack) {
  // One memory cycle per add halves the rate: a 4-value add takes 8 cycles
  // against the message's 4 words on the link.
  for (bool streamed : {true, false}) {
    Program p = chainProgram(streamed);
    p.target.memoryCyclesPerOp = 1;
    RunResult r = run(p, iotaInput("x", {12}));
    // Streamed, core 1's send waits until its last word can follow the
    // combine: 11 + (8 - 4) = 15, so core 0's arrival is 24, its receive
    // 29 and its add 37. Stored and forwarded: 36 + 4 + 4 slower adds.
    EXPECT_EQ(r.stats.cycles, streamed ? 37 : 44) << streamed;
  }
}

TEST(Emulator, DeadlockIsReportedNotHung) {
  Program p = relayProgram();
  p.roles[0].body.clear(); // nobody sends
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "deadlock: 2 cores wait forever, e.g. core (2,0) on channel "
            "'first' color 0; core (3,0) on channel 'second' color 1");
}

TEST(Emulator, SendWithoutRoute) {
  Program p = relayProgram();
  p.roles[1].body = {instr(Opcode::Send, {0}, 1)};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): send on channel 'second' but the channel has no "
            "route starting at this core");
  p = relayProgram();
  p.roles[1].body = {instr(Opcode::Recv, {0}, 1)};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): recv on channel 'second' but the channel has no "
            "route delivering to this core");
  // On one row every route spans the grid's rows, so the channels' colors
  // are looked up by column; on two rows they are not, and the cores' own
  // route slots answer.
  p = relayProgram();
  p.gridHeight = 2;
  p.roles.push_back({"below", {{0, 3, 1}, {1, 1, 1}}, {}});
  p.roles[1].body = {instr(Opcode::Send, {0}, 1)};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): send on channel 'second' but the channel has no "
            "route starting at this core");
  p.roles[1].body = {instr(Opcode::Recv, {0}, 1)};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): recv on channel 'second' but the channel has no "
            "route delivering to this core");
}

TEST(Emulator, RoutingErrors) {
  Program p = relayProgram();
  p.channels[0].routes.erase(p.channels[0].routes.begin() + 1);
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "message on color 0 from (0,0) reaches (1,0), which has no route "
            "for it");
  p = relayProgram();
  p.channels[0].routes[1].in = Dir::North;
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "message on color 0 from (0,0) arrives at (1,0) from west but its "
            "route expects north");
  p = relayProgram();
  p.channels[1].routes[1].outMask = dirBit(Dir::East) | dirBit(Dir::Ramp);
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "message on color 1 from (2,0) leaves the grid at (3,0) going "
            "east");
  p = relayProgram();
  p.channels[1].routes.push_back(route(0, 1, 0, Dir::West, {Dir::Ramp}));
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "route conflict: core (1,0) color 0 is configured by channel "
            "'first' and channel 'second'");
}

TEST(Emulator, ResourceAndInputErrors) {
  Program p = relayProgram();
  p.buffers[0].offsetBytes = 49152 - 8;
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "SRAM overflow at core (0,0): buffer 'a' ends at byte 49160, "
            "target wse2 has 49152 bytes per core");
  p = relayProgram();
  EXPECT_EQ(runError(p), "input 'x' missing from the inputs");
  EXPECT_EQ(runError(p, iotaInput("x", {4, 4})),
            "input 'x' has shape [4,4], expected [16]");
  NDArrayMap f64 = iotaInput("x", {16});
  f64["x"].dtype = "float64";
  EXPECT_EQ(runError(p, f64),
            "input 'x' has dtype float64, expected float32 or float16");
  p.roles[3].body[0].bufs = {0};
  p.buffers.push_back({"small", 2, DType::F32, 16});
  p.roles[3].body[0].bufs = {1};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (3,0): recv on channel 'second' into buffer 'small' of 2 "
            "elements got a message of 4");
}

TEST(Emulator, ExpressionErrorsNameTheCore) {
  Program p = relayProgram();
  p.roles[1].body = {repeat("1 / (x - 1)", {})};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): expression '1 / (x - 1)': division by zero");
  // A count that wraps to 0 would skip the loop silently.
  p.roles[1].body = {repeat("4611686018427387904 * (x + 3)", {})};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): expression '4611686018427387904 * (x + 3)': the "
            "value does not fit in 64 bits");
  p.roles[1].body = {repeat("x - 3", {})};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (1,0): repeat count -2 of 'x - 3' is negative");
}

TEST(Emulator, MessagesNobodyReceivesAreErrors) {
  // One send more than the relay takes: the message would be dropped
  // silently at the end of the run.
  Program p = relayProgram();
  p.roles[0].body.push_back(instr(Opcode::Send, {0}, 0));
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (2,0) ends with 1 message(s) it never received, the first "
            "on channel 'first' color 0: its program receives fewer than are "
            "sent to it");
  // A flood that nobody receives stops at the queue's limit instead of
  // growing the host's memory.
  p.roles[0].body = {repeat("100000", {instr(Opcode::Send, {0}, 0)})};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (2,0): more than 4096 messages wait unreceived (the latest "
            "on color 0): its program receives fewer than are sent to it");
}

TEST(Emulator, OutputsHaveOneNameEach) {
  // Both would be written as one .npz member, the later over the other.
  Program p = relayProgram();
  p.outputs.push_back(p.outputs[0]);
  EXPECT_EQ(runError(p, iotaInput("x", {16})), "two outputs are named 'out'");
}

TEST(Emulator, BoundInputsAreCheckedNotRead) {
  // position_ids and attention_mask the compiler bound to one unpadded
  // sequence (tfm-bind-position-inputs): given, they must hold those
  // values; absent, nothing is missing.
  Program p = relayProgram();
  p.boundInputs = {{"position_ids", true}, {"attention_mask", false}};
  NDArrayMap inputs = iotaInput("x", {16});
  EXPECT_EQ(runError(p, inputs), "");
  inputs["position_ids"] = iotaInput("position_ids", {1, 3}).at("position_ids");
  NDArray ones;
  ones.shape = {1, 3};
  ones.data = {1, 1, 1};
  inputs["attention_mask"] = ones;
  EXPECT_EQ(runError(p, inputs), "");
  inputs["attention_mask"].data[1] = 0;
  EXPECT_EQ(runError(p, inputs),
            "input 'attention_mask' holds 0 at index 1; the program attends "
            "to every token (it was compiled with the mask bound to ones: "
            "padding is not supported)");
  inputs["attention_mask"] = ones;
  inputs["position_ids"].data[2] = 5;
  EXPECT_EQ(runError(p, inputs),
            "input 'position_ids' holds 5 at index 2; the program runs "
            "positions 0 to 2 (it was compiled with them bound, for one "
            "sequence without gaps)");
  // A name the program reads cannot also be bound.
  p.boundInputs = {{"x", false}};
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "bound input 'x' is empty, repeated or read by the program");
}

TEST(Emulator, ARepeatPastTheBudgetFailsBeforeRunning) {
  // Each iteration takes at least one instruction, so a count beyond the
  // budget cannot finish; on a large grid running every core up to the
  // budget took minutes.
  Program p = relayProgram();
  p.roles[1].body = {repeat("1000000000000", {})};
  EmulatorOptions options;
  options.maxInstructions = 1000;
  EXPECT_EQ(errorOf(runProgram(p, iotaInput("x", {16}), options)),
            "core (1,0): after the last op repeats 1000000000000 times, "
            "more than the 999 instructions left of --max-instructions");
  // A count within the budget whose body then runs past it.
  p.roles[1].body = {repeat("600", {instr(Opcode::Zero, {0})})};
  EXPECT_EQ(errorOf(runProgram(p, iotaInput("x", {16}), options)),
            "core (1,0): after the last op ran more than 1000 instructions "
            "(--max-instructions)");
}

/// A vector of `size` values split into `blocks` blocks along x, in `buffer`.
HostTensor splitAlongX(std::string name, int64_t size, int32_t buffer,
                       int64_t blocks) {
  HostTensor t;
  t.name = std::move(name);
  t.shape = t.sourceShape = {size};
  t.buffer = buffer;
  t.layout = {{Axis::X, blocks}};
  return t;
}

TEST(Emulator, RepeatIterationIsVariableI) {
  // Core x doubles its value in iteration x of the outer loop (i of the
  // outer repeat), and adds it to itself twice more in an inner loop
  // whose i shadows the outer one only inside it.
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 4;
  p.buffers = {{"v", 1, DType::F32, 0}};
  Instr when;
  when.op = Opcode::When;
  when.expr = "i == x";
  when.body = {instr(Opcode::Add, {0, 0, 0})};
  Instr innerWhen = when;
  innerWhen.expr = "i == 1";
  p.roles = {{"all",
              wholeGrid(1, 4),
              {repeat("3", {when, repeat("2", {innerWhen})}), mark(0)}}};
  HostTensor v = splitAlongX("v", 4, 0, 4);
  p.inputs = {v};
  p.outputs = {v};
  p.ops = {{"loop", "map", "add"}};
  RunResult r = run(p, iotaInput("v", {4}));
  ASSERT_EQ(r.outputs.count("v"), 1u);
  // Three inner doublings everywhere; one outer doubling on cores 0..2.
  EXPECT_EQ(r.outputs.at("v").data,
            (std::vector<float>{0.0f, 16.0f, 32.0f, 24.0f}));
}

TEST(Emulator, CopyMovesSlotsAndChecksTheirRange) {
  // Each core reverses the 4 slots (of 2 values) of its buffer into another.
  Program p;
  p.target = testTarget();
  p.gridHeight = 1;
  p.gridWidth = 2;
  p.buffers = {{"src", 8, DType::F32, 0}, {"dst", 8, DType::F32, 32}};
  Instr copy = instr(Opcode::Copy, {1, 0});
  copy.n = 2;
  copy.expr = "3 - i";
  copy.expr2 = "i";
  p.roles = {{"all", wholeGrid(1, 2), {repeat("4", {copy}), mark(0)}}};
  p.inputs = {splitAlongX("x", 16, 0, 2)};
  p.outputs = {splitAlongX("y", 16, 1, 2)};
  p.ops = {{"reverse", "copy", "copy"}};
  RunResult r = run(p, iotaInput("x", {16}));
  ASSERT_EQ(r.outputs.count("y"), 1u);
  EXPECT_EQ(r.outputs.at("y").data,
            (std::vector<float>{6, 7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13, 10, 11,
                                8, 9}));
  p.roles[0].body[0].body[0].expr = "4 - i";
  EXPECT_EQ(runError(p, iotaInput("x", {16})),
            "core (0,0): copy from slot 0 of 'src' (4 slots) to slot 4 of "
            "'dst' (4 slots) is out of range");
}

/// A 16x16 MeshGEMM-like loop: every step multiplies local tiles and shifts
/// A along x and B along y on interleaved rings.
Program shiftGemmProgram(int64_t n, int64_t steps) {
  Program p;
  p.target = testTarget();
  p.gridHeight = n;
  p.gridWidth = n;
  p.interleave = true;
  p.buffers = {{"a", 16, DType::F32, 0},
               {"b", 16, DType::F32, 64},
               {"c", 16, DType::F32, 128},
               {"a2", 16, DType::F32, 192},
               {"b2", 16, DType::F32, 256}};
  p.channels = {ringShiftChannel("ax", Axis::X, n, n, true, 0),
                ringShiftChannel("by", Axis::Y, n, n, true, 4)};
  Instr gemm = instr(Opcode::GemmTile, {2, 0, 1});
  gemm.m = gemm.k = gemm.n = 4;
  p.roles = {
      {"all",
       wholeGrid(n, n),
       {repeat(std::to_string(steps),
               {instr(Opcode::Send, {0}, 0), instr(Opcode::Send, {1}, 1), gemm,
                instr(Opcode::Recv, {3}, 0), instr(Opcode::Recv, {4}, 1),
                instr(Opcode::Swap, {0, 3}), instr(Opcode::Swap, {1, 4})}),
        mark(0)}}};
  for (auto [name, buf] : {std::pair("A", 0), std::pair("B", 1)}) {
    HostTensor t;
    t.name = name;
    t.shape = {4 * n, 4 * n};
    t.sourceShape = t.shape;
    t.buffer = buf;
    t.layout = {{Axis::Y, n}, {Axis::X, n}};
    p.inputs.push_back(t);
  }
  HostTensor c = p.inputs[0];
  c.name = "C";
  c.buffer = 2;
  p.outputs = {c};
  p.ops = {{"gemm", "gemm", "meshgemm"}};
  return p;
}

TEST(Emulator, ThreadsDoNotChangeResultsOrCycles) {
  // 32x32 cores: batches large enough to be split between threads.
  Program p = shiftGemmProgram(32, 7);
  NDArrayMap in = iotaInput("A", {128, 128});
  in.merge(iotaInput("B", {128, 128}));
  RunResult one = run(p, in, 1);
  RunResult two = run(p, in, 2);
  RunResult four = run(p, in, 4);
  ASSERT_EQ(one.outputs.count("C"), 1u);
  ASSERT_EQ(one.stats.ops.size(), 1u);
  EXPECT_GT(one.stats.cycles, 7 * 64);
  EXPECT_EQ(one.stats.cycles, two.stats.cycles);
  EXPECT_EQ(one.stats.cycles, four.stats.cycles);
  EXPECT_EQ(one.stats.linkWords, two.stats.linkWords);
  EXPECT_EQ(one.stats.ops[0].computeCycles, 7 * 64);
  EXPECT_EQ(one.outputs.at("C").data, two.outputs.at("C").data);
  EXPECT_EQ(one.outputs.at("C").data, four.outputs.at("C").data);
}

TEST(Emulator, AWriteAfterASendWaitsForItWhateverTheThreads) {
  // 32x32 cores shift 64 values each along x and at once zero what they
  // sent: the zeroing waits until the message has left the core, which a
  // core run by a thread of a parallel batch works out when it issues the
  // send (Network::leavesRamp), before the batch commits it.
  constexpr int64_t n = 32, values = 64;
  Program p = ringShiftProgram(n, n, /*interleave=*/true);
  p.buffers = {{"a", values, DType::F32, 0},
               {"b", values, DType::F32, 4 * values},
               {"c", 1, DType::F32, 8 * values}};
  p.roles[0].body = {instr(Opcode::Send, {0}, 0), instr(Opcode::Zero, {0}),
                     mark(0), instr(Opcode::Recv, {1}, 0), mark(1)};
  p.inputs[0].shape = p.inputs[0].sourceShape = {n, n * values};
  p.outputs[0].shape = {n, n * values};
  p.outputs[0].buffer = 1;
  NDArrayMap in = iotaInput("x", {n, n * values});
  RunResult one = run(p, in, 1);
  ASSERT_EQ(one.stats.ops.size(), 2u);
  EXPECT_GE(one.stats.ops[0].cycles, values);
  for (unsigned threads : {2u, 3u}) {
    RunResult more = run(p, in, threads);
    ASSERT_EQ(more.stats.ops.size(), 2u);
    EXPECT_EQ(one.stats.ops[0].cycles, more.stats.ops[0].cycles) << threads;
    EXPECT_EQ(one.stats.cycles, more.stats.cycles) << threads;
    EXPECT_EQ(one.outputs.at("out").data, more.outputs.at("out").data);
  }
  // What the receivers got is what was sent, before the zeroing.
  const std::vector<float> &out = one.outputs.at("out").data;
  EXPECT_EQ(out[0], float(values));
  EXPECT_EQ(out[values - 1], float(2 * values - 1));
}

TEST(Emulator, RotateSlotsAndStatsJson) {
  Program p = relayProgram();
  Instr rot = instr(Opcode::RotateSlots, {0});
  rot.n = 1;
  p.roles[1].body = {rot, mark(0)};
  p.ops = {{"rot", "rotate", "local"}};
  RunResult r = run(p, iotaInput("x", {16}));
  ASSERT_EQ(r.outputs.count("out"), 1u);
  const std::vector<float> &out = r.outputs.at("out").data;
  EXPECT_EQ(std::vector<float>(out.begin() + 4, out.begin() + 8),
            (std::vector<float>{5, 6, 7, 4}));
  llvm::json::Value j = statsToJSON(r.stats);
  const llvm::json::Object *o = j.getAsObject();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->getInteger("cycles"), 29);
  EXPECT_EQ(o->getInteger("max_routes_per_core"), 2);
  const llvm::json::Array *ops = o->getArray("ops");
  ASSERT_TRUE(ops && ops->size() == 1);
  EXPECT_EQ((*ops)[0].getAsObject()->getInteger("compute_cycles"), 4);
  EXPECT_EQ((*ops)[0].getAsObject()->getString("algorithm"), "local");
}

TEST(Emulator, AnalyticModeAddsUpTheEstimates) {
  Program p = ringShiftProgram(5, 7, /*interleave=*/true);
  EmulatorOptions analytic;
  analytic.mode = EmulatorMode::Analytic;
  // A bundle written without estimates runs only in the other modes.
  EXPECT_EQ(errorOf(runProgram(p, {}, analytic)),
            "op 'shift_x' has no cycle estimate (the bundle was written "
            "without them): it runs only in the functional and timing modes");
  p.ops[0].estimatedCycles = 40;
  p.ops[1].estimatedCycles = 2;
  llvm::Expected<RunResult> r = runProgram(p, {}, analytic);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  // Nothing runs: no messages, no outputs; the ops one after another.
  EXPECT_EQ(r->stats.cycles, 42);
  EXPECT_EQ(r->stats.messages, 0);
  EXPECT_TRUE(r->outputs.empty());
  ASSERT_EQ(r->stats.ops.size(), 2u);
  EXPECT_EQ(r->stats.ops[0].cycles, 40);
  EXPECT_EQ(r->stats.ops[1].cycles, 2);
  EXPECT_EQ(r->stats.maxSramBytesPerCore, 12);
  // Estimates a corrupt bundle could carry do not overflow the total.
  p.ops[0].estimatedCycles = p.ops[1].estimatedCycles = INT64_MAX / 2 + 1;
  EXPECT_EQ(errorOf(runProgram(p, {}, analytic)),
            "the ops' cycle estimates add up to more than 2^63 cycles (a "
            "corrupt bundle?)");
}

} // namespace
