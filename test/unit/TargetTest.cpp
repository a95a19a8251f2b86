//===- TargetTest.cpp - Presets and JSON targets --------------------------===//
#include "wafer/Runtime/Target.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Runtime/TimingModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace wafer::rt;
using wafer::rt::test::errorOf;

namespace {

TEST(Target, Presets) {
  Target w2 = llvm::cantFail(getPresetTarget("wse2"));
  EXPECT_EQ(w2.fabricWidth, 750);
  EXPECT_EQ(w2.fabricHeight, 994);
  EXPECT_EQ(w2.sramBytes, 49152);
  EXPECT_EQ(w2.routesPerCore, 24);
  EXPECT_EQ(w2.macsPerCycleF16, 4);
  EXPECT_EQ(w2.macsPerCycleF16AccF32, 2);
  Target w3 = llvm::cantFail(getPresetTarget("wse3"));
  EXPECT_EQ(w3.fabricWidth, 755);
  EXPECT_EQ(w3.fabricHeight, 1170);
  EXPECT_EQ(w3.macsPerCycleF16, 8);
  EXPECT_EQ(w3.macsPerCycleF16AccF32, 4);
  EXPECT_EQ(w3.clockHz, 1.1e9);
  EXPECT_EQ(errorOf(validateTarget(w2)), "");
  EXPECT_EQ(
      errorOf(getPresetTarget("wse9")),
      "unknown target preset 'wse9' (known: wse2, wse2-calibrated, wse3)");
}

TEST(Target, CalibratedPresetIsWse2WithMemoryCycles) {
  Target w2 = llvm::cantFail(getPresetTarget("wse2"));
  Target cal = llvm::cantFail(getPresetTarget("wse2-calibrated"));
  EXPECT_EQ(w2.memoryCyclesPerOp, 0);
  EXPECT_GT(cal.memoryCyclesPerOp, 0);
  // Every other field is wse2's.
  cal.memoryCyclesPerOp = 0;
  cal.name = w2.name;
  EXPECT_EQ(targetToJSON(cal), targetToJSON(w2));
}

TEST(Target, MemoryCyclesSlowKernels) {
  Target t = llvm::cantFail(getPresetTarget("wse2"));
  // Fully overlapped: the SIMD rate, 4 f16 MACs a cycle.
  EXPECT_EQ(TimingModel(t).kernelCycles(100, DType::F16), 25);
  EXPECT_EQ(TimingModel(t).kernelCycles(100, DType::F32), 100);
  // A quarter cycle of memory access per MAC halves the f16 rate.
  t.memoryCyclesPerOp = 0.25;
  EXPECT_DOUBLE_EQ(TimingModel(t).macsPerCycle(DType::F16), 2);
  EXPECT_EQ(TimingModel(t).kernelCycles(100, DType::F16), 50);
  EXPECT_EQ(TimingModel(t).kernelCycles(100, DType::F32), 125);
  // Partial cycles round up per kernel.
  EXPECT_EQ(TimingModel(t).kernelCycles(3, DType::F16), 2);
}

TEST(Target, JsonRoundTrip) {
  Target w3 = llvm::cantFail(getPresetTarget("wse3"));
  std::string text;
  llvm::raw_string_ostream(text) << targetToJSON(w3);
  Target back = llvm::cantFail(parseTarget(text, "t.json"));
  EXPECT_EQ(back.name, "wse3");
  EXPECT_EQ(back.fabricWidth, 755);
  EXPECT_EQ(back.macsPerCycleF16, 8);
  EXPECT_EQ(back.relayCycles, w3.relayCycles);
}

TEST(Target, BaseWithOverrides) {
  Target t = llvm::cantFail(parseTarget(
      R"({"base": "wse2", "name": "small", "fabric": [8, 6],
          "sram_bytes": 1024, "macs_per_cycle": {"f16": 16}})",
      "t.json"));
  EXPECT_EQ(t.name, "small");
  EXPECT_EQ(t.fabricWidth, 8);
  EXPECT_EQ(t.fabricHeight, 6);
  EXPECT_EQ(t.sramBytes, 1024);
  EXPECT_EQ(t.macsPerCycleF16, 16);
  EXPECT_EQ(t.macsPerCycleF32, 1);
  EXPECT_EQ(t.routesPerCore, 24);
  Target s = llvm::cantFail(
      parseTarget(R"({"base": "wse3", "fabric": "10x12"})", "t.json"));
  EXPECT_EQ(s.fabricWidth, 10);
  EXPECT_EQ(s.fabricHeight, 12);
  // Changed without a name of its own, it is not reported as the preset.
  EXPECT_EQ(s.name, "wse3 (changed by t.json)");
  EXPECT_EQ(llvm::cantFail(parseTarget(R"({"base": "wse3"})", "t.json")).name,
            "wse3");
  EXPECT_EQ(llvm::cantFail(parseTarget(R"({"base": "wse2", "sram_bytes": )"
                                       R"(1024})",
                                       "dir/a\nb.json"))
                .name,
            "wse2 (changed by a?b.json)");
}

TEST(Target, Errors) {
  // A key twice in one object: llvm::json keeps one silently (a probe's
  // two bases ran as the second).
  EXPECT_EQ(
      errorOf(parseTarget(R"({"base": "wse2", "base": "wse3"})", "t.json")),
      "t.json: JSON object has the key \"base\" twice at byte 18");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "macs_per_cycle": )"
                                R"({"f16": 4, "f16" : 3}})",
                                "t.json")),
            "t.json: JSON object has the key \"f16\" twice at byte 47");
  // The same key in different objects, or as a value, is no repeat.
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "name": "base", )"
                                R"("macs_per_cycle": {"f16": 4, "f32": 2},)"
                                R"( "sources": {"sram_bytes": "x"}})",
                                "t.json")),
            "");
  // Names are printed within one-line errors and reports.
  EXPECT_EQ(
      errorOf(parseTarget(R"({"base": "wse2", "name": "a\nb"})", "t.json")),
      "t.json: target field 'name' has a control character");
  // A field set twice: neither value would be seen to win.
  EXPECT_EQ(
      errorOf(parseTarget(
          R"({"base": "wse2", "fabric": "4x4", "fabric_width": 5})", "t.json")),
      "t.json: target field 'fabric_width' is set twice (by itself and "
      "through 'fabric' or its group)");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "macs_per_cycle":)"
                                R"( {"f16": 4}, "macs_per_cycle.f16": 3})",
                                "t.json")),
            "t.json: target field 'macs_per_cycle.f16' is set twice (by "
            "itself and through 'fabric' or its group)");
  EXPECT_EQ(
      errorOf(parseTarget(R"({"base": "wse2", "sram_bytes": -4})", "t.json")),
      "t.json: target field 'sram_bytes' must be an integer in [64, "
      "4294967296] (bytes), got -4");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "sram_bytes": "big"})",
                                "t.json")),
            "t.json: target field 'sram_bytes' must be an integer in [64, "
            "4294967296] (bytes), got a value of another type");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "hop_cycles": 1.5})",
                                "t.json")),
            "t.json: target field 'hop_cycles' must be an integer in [1, "
            "1000000] (cycles), got a value of another type");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "colour": 3})", "t.json")),
            "t.json: unknown target field 'colour'");
  EXPECT_EQ(errorOf(parseTarget(
                R"({"base": "wse2", "macs_per_cycle": {"f8": 3}})", "t.json")),
            "t.json: unknown target field 'macs_per_cycle.f8'");
  EXPECT_EQ(
      errorOf(parseTarget(R"({"base": "wse2", "fabric": "10by12"})", "t.json")),
      "t.json: target field 'fabric' must be \"WxH\" or "
      "[W, H] with positive integers");
  EXPECT_EQ(
      errorOf(parseTarget(R"({"base": "wse2", "clock_hz": 0})", "t.json")),
      "t.json: target field 'clock_hz' must be a number in [1000, 1e+12] "
      "(Hz), got 0");
  // Values near INT64_MAX would wrap the emulator's clock: out of range.
  EXPECT_EQ(errorOf(parseTarget(
                R"({"base": "wse2", "relay_cycles": 9223372036854775807})",
                "t.json")),
            "t.json: target field 'relay_cycles' must be an integer in [0, "
            "1000000] (cycles), got 9223372036854775807");
  EXPECT_EQ(errorOf(parseTarget(R"({"base": "wse2", "fabric": [100000, 4]})",
                                "t.json")),
            "t.json: target field 'fabric_width' must be an integer in [1, "
            "4096] (cores), got 100000");
  EXPECT_EQ(errorOf(parseTarget(
                R"({"base": "wse2", "sources": {"colour": "a guess"}})",
                "t.json")),
            "t.json: 'sources' names unknown target field 'colour'");
  // Without a base every field is needed.
  EXPECT_EQ(errorOf(parseTarget(R"({"name": "x", "fabric": "4x4"})", "t.json")),
            "t.json: target field 'clock_hz' is missing (give every field, or "
            "start from a preset with \"base\")");
  EXPECT_EQ(errorOf(parseTarget("[1, 2]", "t.json")),
            "t.json: a target must be a JSON object");
  EXPECT_NE(errorOf(parseTarget("{", "t.json")), "");
}

/// A target whose every field differs from the wse2 preset's value.
static Target everyFieldChanged() {
  Target t = llvm::cantFail(getPresetTarget("wse2"));
  t.name = "changed";
  for (const TargetFieldInfo &f : targetFields()) {
    double value = f.get(t) == f.max ? f.max - 1 : f.get(t) + 1;
    f.set(t, value);
  }
  return t;
}

TEST(Target, EveryFieldThroughJson) {
  Target t = everyFieldChanged();
  ASSERT_EQ(errorOf(validateTarget(t)), "");
  std::string text;
  llvm::raw_string_ostream(text) << targetToJSON(t);
  Target back = llvm::cantFail(parseTarget(text, "t.json"));
  EXPECT_EQ(back.name, t.name);
  for (const TargetFieldInfo &f : targetFields())
    EXPECT_EQ(f.get(back), f.get(t)) << f.key.str();
}

TEST(Target, EveryFieldThroughTheBundle) {
  Program p = test::ringShiftProgram(2, 2, false);
  p.target = everyFieldChanged();
  std::vector<uint8_t> bytes = llvm::cantFail(serializeBundle(p));
  Program back = llvm::cantFail(deserializeBundle(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                      bytes.size()),
      "t.bundle"));
  EXPECT_EQ(back.target.name, p.target.name);
  for (const TargetFieldInfo &f : targetFields())
    EXPECT_EQ(f.get(back.target), f.get(p.target)) << f.key.str();
}

TEST(Target, EveryFieldHasARangeThePresetsMeet) {
  for (const std::string &name : presetTargetNames()) {
    Target t = llvm::cantFail(getPresetTarget(name));
    for (const TargetFieldInfo &f : targetFields()) {
      EXPECT_EQ(errorOf(f.check(f.get(t))), "") << name << " " << f.key.str();
      EXPECT_NE(errorOf(f.check(f.max * 2 + 1)), "") << f.key.str();
      EXPECT_NE(errorOf(f.check(f.min - 1)), "") << f.key.str();
    }
  }
}

TEST(Target, LoadPresetOrFile) {
  EXPECT_EQ(llvm::cantFail(loadTarget("wse3")).name, "wse3");
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("target", "json", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << R"({"base": "wse2", "name": "custom", "relay_cycles": 9})";
  }
  Target t = llvm::cantFail(loadTarget(path));
  EXPECT_EQ(t.name, "custom");
  EXPECT_EQ(t.relayCycles, 9);
  llvm::sys::fs::remove(path);
  llvm::Expected<Target> missing = loadTarget("/nonexistent/target.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(
      llvm::toString(missing.takeError()).find("/nonexistent/target.json"),
      std::string::npos);
}

} // namespace
