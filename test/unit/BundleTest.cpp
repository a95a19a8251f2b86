//===- BundleTest.cpp - Bundle round trip, corruption and validation ------===//
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/bundle_generated.h"

#include "TestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace wafer::rt;
using namespace wafer::rt::test;
namespace fb = wafer::fb;

namespace {

std::string dump(const Program &p) {
  std::string text;
  llvm::raw_string_ostream os(text);
  dumpProgram(p, os);
  return text;
}

/// The ring shift plus every other instruction kind and an embedded weight.
Program richProgram() {
  Program p = ringShiftProgram(3, 4, true);
  p.buffers.push_back({"w", 6, DType::F32, 12});
  p.buffers.push_back({"acc", 4, DType::F32, 36});
  p.buffers.push_back({"tmp", 4, DType::F32, 52});
  Instr gemm = instr(Opcode::GemmTile, {4, 3, 3});
  gemm.m = 2;
  gemm.k = 1;
  gemm.n = 2;
  Instr rot = instr(Opcode::RotateSlots, {4});
  rot.n = 2;
  Instr copy = instr(Opcode::Copy, {5, 4});
  copy.n = 2;
  copy.expr = "i % 2";
  copy.expr2 = "1 - i % 2";
  Instr relay = instr(Opcode::Relay, {0}, 0);
  relay.channel2 = 1;
  Instr combine = instr(Opcode::CombineRelay, {4, 5}, 0);
  combine.k = int64_t(Opcode::Max);
  Instr when;
  when.op = Opcode::When;
  when.expr = "lx == 0 && (y % 2) != 1";
  when.body = {instr(Opcode::Zero, {5}), instr(Opcode::Add, {5, 4, 4}),
               instr(Opcode::Swap, {4, 5}), relay, combine};
  std::vector<Instr> &body = p.roles[0].body;
  body.insert(body.begin(), repeat("W - 1", {gemm, rot, copy, when}));
  HostTensor w;
  w.name = "weight";
  w.shape = {2, 3};
  w.sourceShape = {3, 2};
  w.permutation = {1, 0};
  w.buffer = 3;
  w.layout = {{Axis::None, 1}, {Axis::None, 1}};
  w.data = std::vector<float>{1, 2, 3, 4, 5, 6};
  p.inputs.push_back(w);
  // The same values through views: [6] placed, viewed as [2, 3], from the
  // source [6] viewed as [3, 2] and transposed.
  HostTensor lanes = w;
  lanes.name = "lanes";
  lanes.shape = {6};
  lanes.view = {2, 3};
  lanes.sourceShape = {6};
  lanes.sourceView = {3, 2};
  lanes.layout = {{Axis::None, 1}};
  p.inputs.push_back(lanes);
  p.boundInputs = {{"position_ids", true}, {"attention_mask", false}};
  return p;
}

TEST(Bundle, RoundTripPreservesTheDump) {
  Program p = richProgram();
  p.inputs[0].layout.back().balanced = true;
  p.inputs[0].layout.back().parts = 2;
  ASSERT_EQ(errorOf(validateProgram(p)), "");
  std::vector<uint8_t> bytes = llvm::cantFail(serializeBundle(p));
  llvm::StringRef view(reinterpret_cast<const char *>(bytes.data()),
                       bytes.size());
  EXPECT_TRUE(looksLikeBundle(view));
  llvm::Expected<Program> back = deserializeBundle(view, "mem");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(dump(*back), dump(p));
  EXPECT_NE(dump(p).find("bound input 'position_ids' positions\n"
                         "bound input 'attention_mask' ones\n"),
            std::string::npos);
  EXPECT_NE(dump(*back).find("/4 balanced in 2]"), std::string::npos);
  EXPECT_EQ(back->inputs.back().data.toFloats(),
            p.inputs.back().data.toFloats());
  // Serialization is deterministic.
  EXPECT_EQ(llvm::cantFail(serializeBundle(*back)), bytes);
}

TEST(Bundle, AWeightPlacedTwiceIsStoredOnce) {
  // richProgram's "lanes" places w's values (the same TensorValues) again,
  // as a fused projection's parts and a tied embedding do.
  Program p = richProgram();
  std::vector<uint8_t> shared = llvm::cantFail(serializeBundle(p));
  llvm::StringRef view(reinterpret_cast<const char *>(shared.data()),
                       shared.size());
  Program back = llvm::cantFail(deserializeBundle(view, "mem"));
  const HostTensor &w = back.inputs[back.inputs.size() - 2];
  EXPECT_EQ(w.data.f32(), back.inputs.back().data.f32());
  p.inputs.back().data = TensorValues(p.inputs.back().data.toFloats());
  std::vector<uint8_t> copied = llvm::cantFail(serializeBundle(p));
  EXPECT_GE(copied.size(), shared.size() + 6 * sizeof(float));
}

TEST(Bundle, TooLargeForAFlatBufferIsAnError) {
  Program p = richProgram();
  for (HostTensor &t : p.inputs)
    t.data = {};
  p.inputs.back().data = std::vector<float>(100, 1.0f);
  EXPECT_EQ(errorOf(serializeBundle(p, 256)),
            "the bundle would hold 400 bytes of tensor values, more than a "
            "bundle can (256 bytes, FlatBuffers' limit)");
  EXPECT_EQ(errorOf(serializeBundle(p, 4096)), "");
}

TEST(Bundle, DumpIsReadable) {
  std::string text = dump(richProgram());
  EXPECT_NE(text.find("grid 3x4 (HxW) interleave true\n"), std::string::npos);
  EXPECT_NE(text.find("  repeat 'W - 1'\n    gemm_tile acc w w m 2 k 1 n 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      relay a from shift_x to shift_y\n"
                      "      combine_relay acc tmp max on shift_x\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("input 1 'weight' f32 shape [2,3] buffer w layout "
                      "[none,none] source [3,2] permutation [1,0] weights 6 "
                      "values checksum "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("input 2 'lanes' f32 shape [6] buffer w layout [none] "
                      "view [2,3] source [6] as [3,2] permutation [1,0]"),
            std::string::npos)
      << text;
}

TEST(Bundle, FileRoundTrip) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("bundle", "wafb", path));
  Program p = richProgram();
  ASSERT_EQ(errorOf(writeBundleFile(p, path)), "");
  llvm::Expected<Program> back = readBundleFile(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(dump(*back), dump(p));
  llvm::sys::fs::remove(path);
  EXPECT_NE(errorOf(readBundleFile(path)).find(std::string(path)),
            std::string::npos);
}

TEST(Bundle, WeightsOfHalfBuffersAreStoredAsHalvesAndViewedInPlace) {
  Program p = richProgram();
  p.buffers[3].dtype = DType::F16; // 'w', which both weights fill
  p.buffers[3].offsetBytes = 12;
  p.inputs.back().data = std::vector<float>{1, 2.0004f, 3, 4, 5, 65520};
  std::vector<uint8_t> f16 = llvm::cantFail(serializeBundle(p));
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("bundle", "wafb", path));
  ASSERT_EQ(errorOf(writeBundleFile(p, path)), "");
  llvm::Expected<Program> back = readBundleFile(path);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  // Rounded as placement would round them: to nearest even, 65520 to inf.
  const TensorValues &values = back->inputs.back().data;
  EXPECT_EQ(values.dtype(), DType::F16);
  EXPECT_EQ(values.toFloats(),
            (std::vector<float>{1, 2, 3, 4, 5,
                                std::numeric_limits<float>::infinity()}));
  // The program outlives the file's name; the mapping keeps the values.
  Program copy = *back;
  back = llvm::make_error<llvm::StringError>("gone",
                                             llvm::inconvertibleErrorCode());
  llvm::consumeError(back.takeError());
  EXPECT_EQ(copy.inputs.back().data.toFloats()[1], 2.0f);
  // Written again, the halves stay halves: the same bytes.
  EXPECT_EQ(llvm::cantFail(serializeBundle(copy)), f16);
  EXPECT_NE(dump(copy).find("'weight' f32 shape [2,3] buffer w layout "
                            "[none,none] source [3,2] permutation [1,0] "
                            "weights 6 f16 values"),
            std::string::npos)
      << dump(copy);
}

TEST(Bundle, ATensorWithBothF32AndF16ValuesIsCorrupt) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<float> f32 = {1};
  std::vector<uint16_t> f16 = {0x3c00};
  auto tensor = fb::CreateHostTensorDirect(
      b, "w", nullptr, fb::DType::F32, 0, nullptr, nullptr, nullptr, &f32,
      nullptr, -1, nullptr, true, nullptr, nullptr, &f16);
  std::vector<flatbuffers::Offset<fb::HostTensor>> inputs = {tensor};
  fb::FinishBundleBuffer(b, fb::CreateBundleDirect(b, kBundleVersion, 0, 1, 1,
                                                   false, nullptr, nullptr,
                                                   nullptr, &inputs));
  std::vector<uint8_t> bytes(b.GetBufferPointer(),
                             b.GetBufferPointer() + b.GetSize());
  sealBundle(bytes);
  EXPECT_EQ(errorOf(deserializeBundle(
                llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                                bytes.size()),
                "both")),
            "both: corrupt bundle (tensor 'w' has both f32 and f16 values)");
}

TEST(Bundle, HalfConversionsAgreeWithTheCompilersOnEveryHalf) {
  std::vector<uint16_t> all(1 << 16);
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = uint16_t(i);
  // Lengths that are not multiples of 8 take the scalar tail too.
  std::vector<float> floats(all.size());
  halvesToFloats(all.data(), floats.data(), int64_t(all.size()) - 3);
  halvesToFloats(all.data() + all.size() - 3, floats.data() + all.size() - 3,
                 3);
  std::vector<uint16_t> back(all.size());
  floatsToHalves(floats.data(), back.data(), int64_t(all.size()) - 5);
  floatsToHalves(floats.data() + all.size() - 5, back.data() + all.size() - 5,
                 5);
  for (size_t i = 0; i < all.size(); ++i) {
    _Float16 h;
    std::memcpy(&h, &all[i], sizeof h);
    float expected = float(h);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(floats[i])) << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&floats[i], &expected, sizeof expected), 0) << i;
    ASSERT_EQ(back[i], all[i]) << i;
  }
}

TEST(Bundle, CorruptBytesAreRejectedNotCrashed) {
  std::vector<uint8_t> bytes = llvm::cantFail(serializeBundle(richProgram()));
  auto view = [](const std::string &s) { return llvm::StringRef(s); };
  std::string good(bytes.begin(), bytes.end());
  EXPECT_EQ(errorOf(deserializeBundle("not a bundle", "junk")),
            "junk: not a wafer bundle (no 'WAFB' identifier)");
  for (size_t keep = 0; keep < good.size(); keep += 7)
    EXPECT_NE(errorOf(deserializeBundle(view(good.substr(0, keep)), "cut")), "")
        << keep;
  // Any changed byte fails the checksum.
  for (size_t i = 0; i < good.size(); i += 5) {
    std::string bad = good;
    bad[i] = char(bad[i] ^ 0xA5);
    EXPECT_NE(errorOf(deserializeBundle(view(bad), "flip")), "") << i;
  }
  std::string flipped = good;
  flipped[good.size() / 2] ^= 1;
  EXPECT_EQ(errorOf(deserializeBundle(view(flipped), "flip")),
            "flip: corrupt bundle (checksum mismatch: its bytes changed after "
            "it was written)");
  EXPECT_EQ(errorOf(deserializeBundle(view(good + "junk"), "more")),
            "more: corrupt bundle (no checksum trailer at its end: cut short, "
            "or bytes appended)");
  // Flip every byte of the FlatBuffer and seal it again, so the structure
  // checks see it: each result is a program or an error. Some flips move a
  // vector of 8-byte elements off its alignment, which the FlatBuffers
  // verifier lets through and the reader must reject.
  std::vector<uint8_t> flatbuffer(bytes.begin(),
                                  bytes.end() - kBundleTrailerBytes);
  int misaligned = 0;
  for (size_t i = 0; i < flatbuffer.size(); ++i) {
    std::vector<uint8_t> changed = flatbuffer;
    changed[i] ^= 0xA5;
    sealBundle(changed);
    std::string bad(changed.begin(), changed.end());
    llvm::Expected<Program> p = deserializeBundle(view(bad), "flip");
    if (p)
      (void)validateProgram(*p);
    else
      misaligned += llvm::StringRef(errorOf(p.takeError())).contains("not aligned");
  }
  EXPECT_GT(misaligned, 0);
  // A well-formed buffer of another version.
  Program other = richProgram();
  other.version = kBundleVersion + 1;
  std::vector<uint8_t> v = llvm::cantFail(serializeBundle(other));
  EXPECT_EQ(
      errorOf(deserializeBundle(
          llvm::StringRef(reinterpret_cast<const char *>(v.data()), v.size()),
          "v2")),
      "v2: bundle version 3, this runtime reads version 2");
}

TEST(Bundle, IndicesAreCheckedOnRead) {
  Program p = richProgram();
  p.roles[0].body.push_back(instr(Opcode::Zero, {17}));
  std::vector<uint8_t> v = llvm::cantFail(serializeBundle(p));
  EXPECT_EQ(
      errorOf(deserializeBundle(
          llvm::StringRef(reinterpret_cast<const char *>(v.data()), v.size()),
          "b")),
      "b: role 'all' instruction 7 (zero): buffer index 17 out of range "
      "(6 buffers)");
}

TEST(Bundle, ValidationErrors) {
  auto check = [](auto mutate, llvm::StringRef want) {
    Program p = richProgram();
    mutate(p);
    EXPECT_EQ(errorOf(validateProgram(p)), want.str());
  };
  check([](Program &p) { p.roles[0].cores.x.hi = 2; },
        "roles cover 9 of the 12 cores of the grid");
  check(
      [](Program &p) {
        p.roles[0].cores.x = {0, 3, 2};
        p.roles.push_back({"odd", {{1, 3, 2}, {0, 2, 1}}, {}});
        p.roles.push_back({"again", {{3, 3, 1}, {1, 1, 1}}, {}});
      },
      "roles 'odd' and 'again' overlap");
  check([](Program &p) { p.roles[0].cores.y.hi = 3; },
        "role 'all': cores x0..3:1 y0..3:1 outside the 3x4 (HxW) grid");
  check([](Program &p) { p.gridWidth = 751; },
        "grid 3x751 (HxW) does not fit the wse2 fabric of 994x750 (HxW)");
  check([](Program &p) { p.channels[1].routes[0].color = 24; },
        "channel 'shift_y' route 0: color 24 outside the 24 routable colors "
        "of target wse2");
  check([](Program &p) { p.channels[1].routes[0].in = Dir(7); },
        "channel 'shift_y' route 0: invalid input direction 7");
  check([](Program &p) { p.channels[1].routes[0].outMask = 32; },
        "channel 'shift_y' route 0: invalid output mask 32");
  check([](Program &p) { p.roles[0].body[0].expr = "W -"; },
        "role 'all' instruction 0 (repeat): expression 'W -': expected an "
        "operand at column 4");
  check([](Program &p) { p.roles[0].body[0].body[0].n = 9; },
        "role 'all' instruction 0.0 (gemm_tile): tile m=2 k=1 n=9 exceeds "
        "its buffers");
  // A zero size would leave m unbounded by the buffers (fuzz-bundle found
  // a tile of m = 2^57, k = n = 0 that the kernel looped over).
  check(
      [](Program &p) {
        p.roles[0].body[0].body[0].m = int64_t(1) << 57;
        p.roles[0].body[0].body[0].k = 0;
        p.roles[0].body[0].body[0].n = 0;
      },
      "role 'all' instruction 0.0 (gemm_tile): tile m=144115188075855872 "
      "k=0 n=0: every size must be at least 1");
  check([](Program &p) { p.roles[0].body[1].bufs.push_back(1); },
        "role 'all' instruction 1 (send): needs 1 buffers, has 2");
  check([](Program &p) { p.roles[0].body[0].body[3].body[4].k = 99; },
        "role 'all' instruction 0.3.4 (combine_relay): combine 99 is not "
        "add, mul or max");
  check(
      [](Program &p) {
        p.roles[0].body[0].body[3].body[4].bufs = {4, 4};
      },
      "role 'all' instruction 0.3.4 (combine_relay): needs two distinct "
      "buffers of the same size");
  check([](Program &p) { p.roles[0].body[0].body[3].body[4].channel = -1; },
        "role 'all' instruction 0.3.4 (combine_relay): channel index -1 out "
        "of range (2 channels)");
  check([](Program &p) { p.roles[0].body[3].mark = 5; },
        "role 'all' instruction 3 (mark): op index 5 out of range (2 ops)");
  check([](Program &p) { p.roles[0].body[1].length = 3; },
        "role 'all' instruction 1 (send): only a regrid has a length and "
        "parts");
  check([](Program &p) { p.roles[0].body[1].parts = 2; },
        "role 'all' instruction 1 (send): only a regrid has a length and "
        "parts");
  check(
      [](Program &p) {
        p.inputs[0].layout[1].balanced = true;
        p.inputs[0].layout[1].parts = 3;
      },
      "input 'x': dimension 1: 3 parts do not divide its size 4 and 4 "
      "balanced blocks");
  check([](Program &p) { p.inputs[0].layout[1].parts = 2; },
        "input 'x': dimension 1: 2 parts do not divide its size 4 and 4 "
        "balanced blocks");
  check([](Program &p) { p.inputs[0].layout[1].blocks = 3; },
        "input 'x': dimension 1: size 4 in 3 blocks on an axis of extent 4");
  check([](Program &p) { p.inputs[1].data = std::vector<float>(5, 1.0f); },
        "input 'weight': embedded data has 5 values, the source shape 6");
  check([](Program &p) { p.buffers[2].elements = 0; },
        "output 'out': needs 1 elements per core, buffer 'c' has 0");
  check([](Program &p) { p.inputs[1].view = {3, 3}; },
        "input 'weight': view does not hold the placed tensor's elements");
  check([](Program &p) { p.inputs[1].sourceView = {7}; },
        "input 'weight': source view does not hold the source's elements");
  // Views change what the permutation and broadcast see.
  check(
      [](Program &p) {
        p.inputs[1].view = {3, 2};
        p.inputs[1].sourceView = {6};
        p.inputs[1].permutation = {};
      },
      "input 'weight': source does not broadcast to the placed shape");
}

} // namespace
