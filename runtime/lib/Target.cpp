//===- Target.cpp - PLMR hardware description -----------------------------===//
//
// Preset values and their sources are documented in ../shared/target-facts.md
// (vendor SDK docs, the WaferLLM code, the wafer-scale reduce paper).
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace llvm;

namespace wafer::rt {

namespace {

Target makeWse2() {
  Target t;
  t.name = "wse2";
  // Largest program rectangle left when the host memcpy infrastructure is
  // in use (SDK: dim_x >= 7 + width, dim_y >= 2 + height on 757 x 996).
  t.fabricWidth = 750;
  t.fabricHeight = 994;
  // The design clock WaferLLM converts cycles with (vendor scripts use 850
  // MHz).
  t.clockHz = 1.1e9;
  t.sramBytes = 48 * 1024;
  t.routesPerCore = 24;
  t.hopCycles = 1;
  // Ramp latency core <-> router, from the reduce paper's fitted model.
  t.rampCycles = 2;
  // beta is not published: "within a few cycles" of task activation plus the
  // ramps; 5 = 2 * ramp + 1, the dependency step of the reduce paper's model.
  t.relayCycles = 5;
  t.linkWordsPerCycle = 1;
  t.macsPerCycleF32 = 1;
  t.macsPerCycleF16 = 4;
  t.macsPerCycleF16AccF32 = 2;
  return t;
}

Target makeWse3() {
  Target t = makeWse2();
  t.name = "wse3";
  // 762 x 1172 fabric minus the same memcpy margins.
  t.fabricWidth = 755;
  t.fabricHeight = 1170;
  // WSE-3 doubles the fp16 SIMD width (SDK SIMD-mode table).
  t.macsPerCycleF16 = 8;
  t.macsPerCycleF16AccF32 = 4;
  return t;
}

Error fieldError(StringRef field, StringRef what) {
  return createStringError(inconvertibleErrorCode(),
                           "target field '" + field + "' must be " + what);
}

Error prefixed(StringRef origin, Error err) {
  std::string msg = toString(std::move(err));
  return createStringError(inconvertibleErrorCode(), origin + ": " + msg);
}

Error readPositiveInt(const json::Value &v, StringRef field, int64_t &out) {
  std::optional<int64_t> i = v.getAsInteger();
  if (!i || *i <= 0)
    return fieldError(field, "a positive integer");
  out = *i;
  return Error::success();
}

Error readPositiveNumber(const json::Value &v, StringRef field, double &out) {
  std::optional<double> d = v.getAsNumber();
  if (!d || !std::isfinite(*d) || *d <= 0)
    return fieldError(field, "a positive number");
  out = *d;
  return Error::success();
}

Error readFabric(const json::Value &v, Target &t) {
  auto bad = [] {
    return fieldError("fabric", "\"WxH\" or [W, H] with positive integers");
  };
  int64_t w = 0, h = 0;
  if (std::optional<StringRef> s = v.getAsString()) {
    auto [ws, hs] = s->split('x');
    if (ws.getAsInteger(10, w) || hs.getAsInteger(10, h))
      return bad();
  } else if (const json::Array *a = v.getAsArray()) {
    if (a->size() != 2)
      return bad();
    std::optional<int64_t> wv = (*a)[0].getAsInteger();
    std::optional<int64_t> hv = (*a)[1].getAsInteger();
    if (!wv || !hv)
      return bad();
    w = *wv;
    h = *hv;
  } else {
    return bad();
  }
  if (w <= 0 || h <= 0)
    return bad();
  t.fabricWidth = w;
  t.fabricHeight = h;
  return Error::success();
}

Error readMacs(const json::Value &v, Target &t) {
  const json::Object *obj = v.getAsObject();
  if (!obj)
    return fieldError("macs_per_cycle",
                      "an object with keys f32, f16, f16_f32");
  for (const auto &[key, value] : *obj) {
    std::string field = ("macs_per_cycle." + key.str());
    double *slot = StringSwitch<double *>(key.str())
                       .Case("f32", &t.macsPerCycleF32)
                       .Case("f16", &t.macsPerCycleF16)
                       .Case("f16_f32", &t.macsPerCycleF16AccF32)
                       .Default(nullptr);
    if (!slot)
      return createStringError(inconvertibleErrorCode(),
                               "unknown target field '" + field + "'");
    if (Error e = readPositiveNumber(value, field, *slot))
      return e;
  }
  return Error::success();
}

} // namespace

std::vector<std::string> presetTargetNames() { return {"wse2", "wse3"}; }

Expected<Target> getPresetTarget(StringRef name) {
  if (name == "wse2")
    return makeWse2();
  if (name == "wse3")
    return makeWse3();
  return createStringError(inconvertibleErrorCode(),
                           "unknown target preset '" + name + "' (known: " +
                               join(presetTargetNames(), ", ") + ")");
}

Expected<Target> parseTarget(StringRef jsonText, StringRef origin) {
  Expected<json::Value> parsed = json::parse(jsonText);
  if (!parsed)
    return prefixed(origin, parsed.takeError());
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return createStringError(inconvertibleErrorCode(),
                             origin + ": a target must be a JSON object");

  Target t;
  if (const json::Value *base = obj->get("base")) {
    std::optional<StringRef> baseName = base->getAsString();
    if (!baseName)
      return prefixed(origin, fieldError("base", "a preset name"));
    Expected<Target> preset = getPresetTarget(*baseName);
    if (!preset)
      return prefixed(origin, preset.takeError());
    t = std::move(*preset);
  }

  // Iterate in key order so that the first error reported is deterministic.
  std::vector<StringRef> keys;
  for (const auto &entry : *obj)
    keys.push_back(entry.first);
  llvm::sort(keys);
  for (StringRef key : keys) {
    const json::Value &v = *obj->get(key);
    Error err = Error::success();
    if (key == "base") {
      continue;
    } else if (key == "name") {
      std::optional<StringRef> s = v.getAsString();
      if (!s || s->empty())
        err = fieldError("name", "a non-empty string");
      else
        t.name = s->str();
    } else if (key == "fabric") {
      err = readFabric(v, t);
    } else if (key == "clock_hz") {
      err = readPositiveNumber(v, key, t.clockHz);
    } else if (key == "macs_per_cycle") {
      err = readMacs(v, t);
    } else {
      int64_t *slot = StringSwitch<int64_t *>(key)
                          .Case("sram_bytes", &t.sramBytes)
                          .Case("routes_per_core", &t.routesPerCore)
                          .Case("hop_cycles", &t.hopCycles)
                          .Case("ramp_cycles", &t.rampCycles)
                          .Case("relay_cycles", &t.relayCycles)
                          .Case("link_words_per_cycle", &t.linkWordsPerCycle)
                          .Default(nullptr);
      if (!slot)
        err = createStringError(inconvertibleErrorCode(),
                                "unknown target field '" + key + "'");
      else
        err = readPositiveInt(v, key, *slot);
    }
    if (err)
      return prefixed(origin, std::move(err));
  }
  if (Error e = validateTarget(t))
    return prefixed(origin, std::move(e));
  return t;
}

Expected<Target> loadTarget(StringRef nameOrPath) {
  if (is_contained(presetTargetNames(), nameOrPath.str()))
    return getPresetTarget(nameOrPath);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!file)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("target '{0}' is not a preset ({1}) and cannot be read as a "
                "file: {2}",
                nameOrPath, join(presetTargetNames(), ", "),
                file.getError().message()));
  return parseTarget((*file)->getBuffer(), nameOrPath);
}

json::Value targetToJSON(const Target &t) {
  return json::Object{
      {"name", t.name},
      {"fabric", formatv("{0}x{1}", t.fabricWidth, t.fabricHeight).str()},
      {"clock_hz", t.clockHz},
      {"sram_bytes", t.sramBytes},
      {"routes_per_core", t.routesPerCore},
      {"hop_cycles", t.hopCycles},
      {"ramp_cycles", t.rampCycles},
      {"relay_cycles", t.relayCycles},
      {"link_words_per_cycle", t.linkWordsPerCycle},
      {"macs_per_cycle", json::Object{{"f32", t.macsPerCycleF32},
                                      {"f16", t.macsPerCycleF16},
                                      {"f16_f32", t.macsPerCycleF16AccF32}}},
  };
}

Error validateTarget(const Target &t) {
  if (t.name.empty())
    return fieldError("name", "a non-empty string");
  if (t.fabricWidth <= 0 || t.fabricHeight <= 0)
    return fieldError("fabric", "\"WxH\" or [W, H] with positive integers");
  const std::pair<const char *, int64_t> ints[] = {
      {"sram_bytes", t.sramBytes},
      {"routes_per_core", t.routesPerCore},
      {"hop_cycles", t.hopCycles},
      {"ramp_cycles", t.rampCycles},
      {"relay_cycles", t.relayCycles},
      {"link_words_per_cycle", t.linkWordsPerCycle}};
  for (const auto &[field, value] : ints)
    if (value <= 0)
      return fieldError(field, "a positive integer");
  const std::pair<const char *, double> numbers[] = {
      {"clock_hz", t.clockHz},
      {"macs_per_cycle.f32", t.macsPerCycleF32},
      {"macs_per_cycle.f16", t.macsPerCycleF16},
      {"macs_per_cycle.f16_f32", t.macsPerCycleF16AccF32}};
  for (const auto &[field, value] : numbers)
    if (!(value > 0) || !std::isfinite(value))
      return fieldError(field, "a positive number");
  return Error::success();
}

} // namespace wafer::rt
