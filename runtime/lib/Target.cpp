//===- Target.cpp - PLMR hardware description -----------------------------===//
//
// Every field comes from TargetFields.def; the presets are the JSON files of
// runtime/targets/, compiled in (TargetPresets.inc), with their sources.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Target.h"
#include "wafer/Runtime/BoundedJson.h"
#include "wafer/Support/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace llvm;

namespace wafer::rt {

namespace {

constexpr bool kIntegerKindInt = true, kIntegerKindReal = false;

/// Sorts a member pointer into TargetFieldInfo's integer or real slot.
template <typename T> struct TargetFieldTraits;
template <> struct TargetFieldTraits<int64_t> {
  static constexpr int64_t Target::*integer(int64_t Target::*m) { return m; }
  static constexpr double Target::*real(int64_t Target::*) { return nullptr; }
};
template <> struct TargetFieldTraits<double> {
  static constexpr int64_t Target::*integer(double Target::*) {
    return nullptr;
  }
  static constexpr double Target::*real(double Target::*m) { return m; }
};

const TargetFieldInfo kFields[] = {
#define WAFER_TARGET_FIELD(Member, Key, Kind, Unit, Min, Max, Description)   \
  {Key,                                                                        \
   kIntegerKind##Kind,                                                         \
   Unit,                                                                       \
   double(Min),                                                                \
   double(Max),                                                                \
   Description,                                                                \
   TargetFieldTraits<TargetField##Kind>::integer(&Target::Member),             \
   TargetFieldTraits<TargetField##Kind>::real(&Target::Member)},
#include "wafer/Runtime/TargetFields.def"
};

struct PresetText {
  const char *name;
  const char *json;
};
const PresetText kPresets[] = {
#include "wafer/Runtime/TargetPresets.inc"
};

Error error(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Error prefixed(StringRef origin, Error err) {
  return error(origin + ": " + toString(std::move(err)));
}

const TargetFieldInfo *findField(StringRef key) {
  for (const TargetFieldInfo &f : kFields)
    if (f.key == key)
      return &f;
  return nullptr;
}

/// Reads one field's JSON value; integer fields take JSON integers only.
Error readField(const TargetFieldInfo &f, const json::Value &v, Target &t) {
  std::optional<double> value;
  if (f.isInteger) {
    if (std::optional<int64_t> i = v.getAsInteger()) {
      if (Error e = f.checkInteger(*i))
        return e;
      value = double(*i);
    }
  } else {
    value = v.getAsNumber();
  }
  if (!value)
    return f.check(std::nan(""));
  if (Error e = f.check(*value))
    return e;
  f.set(t, *value);
  return Error::success();
}

Error readFabric(const json::Value &v, Target &t,
                 SmallVectorImpl<StringRef> &given) {
  auto bad = [] {
    return error("target field 'fabric' must be \"WxH\" or [W, H] with "
                 "positive integers");
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
  for (auto [key, value] : {std::pair{"fabric_width", w},
                            std::pair{"fabric_height", h}}) {
    const TargetFieldInfo *f = findField(key);
    if (Error e = f->check(double(value)))
      return e;
    f->set(t, double(value));
    given.push_back(key);
  }
  return Error::success();
}

/// "sources" documents fields: an object of strings keyed by field names.
Error checkSources(const json::Value &v) {
  const json::Object *obj = v.getAsObject();
  if (!obj)
    return error("'sources' must be an object of strings keyed by field");
  for (const auto &[key, text] : *obj) {
    if (!findField(key))
      return error("'sources' names unknown target field '" + key.str() + "'");
    if (!text.getAsString())
      return error("'sources' of '" + key.str() + "' must be a string");
  }
  return Error::success();
}

/// "dead_cores": [[y, x], ...], kept sorted (validateTarget rejects repeats).
Error readDeadCores(const json::Value &v, Target &t) {
  auto bad = [] {
    return error("target field 'dead_cores' must be a list of [y, x] "
                 "pairs of integers");
  };
  const json::Array *list = v.getAsArray();
  if (!list)
    return bad();
  t.deadCores.clear();
  for (const json::Value &entry : *list) {
    const json::Array *pair = entry.getAsArray();
    if (!pair || pair->size() != 2)
      return bad();
    std::optional<int64_t> y = (*pair)[0].getAsInteger();
    std::optional<int64_t> x = (*pair)[1].getAsInteger();
    if (!y || !x)
      return bad();
    t.deadCores.push_back({*y, *x});
  }
  llvm::sort(t.deadCores);
  return Error::success();
}

/// "dead_links": [[y, x, direction], ...]; a link named from its west or
/// north end is stored from its other end.
Error readDeadLinks(const json::Value &v, Target &t) {
  auto bad = [] {
    return error("target field 'dead_links' must be a list of [y, x, "
                 "\"east\" | \"south\" | \"west\" | \"north\"]");
  };
  const json::Array *list = v.getAsArray();
  if (!list)
    return bad();
  t.deadLinks.clear();
  for (const json::Value &entry : *list) {
    const json::Array *triple = entry.getAsArray();
    if (!triple || triple->size() != 3)
      return bad();
    std::optional<int64_t> y = (*triple)[0].getAsInteger();
    std::optional<int64_t> x = (*triple)[1].getAsInteger();
    std::optional<StringRef> dir = (*triple)[2].getAsString();
    if (!y || !x || !dir)
      return bad();
    if (*dir == "east")
      t.deadLinks.push_back({*y, *x, false});
    else if (*dir == "south")
      t.deadLinks.push_back({*y, *x, true});
    else if (*dir == "west")
      t.deadLinks.push_back({*y, *x - 1, false});
    else if (*dir == "north")
      t.deadLinks.push_back({*y - 1, *x, true});
    else
      return bad();
  }
  llvm::sort(t.deadLinks);
  return Error::success();
}

Expected<Target> parseTargetAtDepth(StringRef jsonText, StringRef origin,
                                    int depth);

Expected<Target> presetAtDepth(StringRef name, int depth) {
  for (const PresetText &preset : kPresets)
    if (name == preset.name) {
      // A preset's base is another preset; the chain is short and acyclic
      // in the shipped files, the bound keeps a bad edit from recursing.
      if (depth > 4)
        return error("preset '" + name + "': base chain too deep");
      return parseTargetAtDepth(preset.json, ("preset '" + name + "'").str(),
                                depth + 1);
    }
  return error("unknown target preset '" + name + "' (known: " +
               join(presetTargetNames(), ", ") + ")");
}

/// A preset changed by a file that gives no name of its own is named after
/// both, so that reports and errors do not present it as the preset.
std::string changedPresetName(StringRef preset, StringRef origin) {
  std::string name =
      (preset + " (changed by " + sys::path::filename(origin) + ")").str();
  // A file name may hold characters a one-line report cannot.
  for (char &c : name)
    if ((unsigned char)c < 0x20 || c == 0x7f)
      c = '?';
  return name;
}

Expected<Target> parseTargetAtDepth(StringRef jsonText, StringRef origin,
                                    int depth) {
  Expected<json::Value> parsed = parseBoundedJson(jsonText);
  if (!parsed)
    return prefixed(origin, parsed.takeError());
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return error(origin + ": a target must be a JSON object");

  Target t;
  bool hasBase = false;
  if (const json::Value *base = obj->get("base")) {
    std::optional<StringRef> baseName = base->getAsString();
    if (!baseName)
      return error(origin + ": target field 'base' must be a preset name");
    Expected<Target> preset = presetAtDepth(*baseName, depth);
    if (!preset)
      return prefixed(origin, preset.takeError());
    t = std::move(*preset);
    hasBase = true;
  }

  // Iterate in key order so that the first error reported is deterministic.
  std::vector<StringRef> keys;
  for (const auto &entry : *obj)
    keys.push_back(entry.first);
  llvm::sort(keys);
  SmallVector<StringRef> given;
  // 'fabric' sets fabric_width and fabric_height, a group its dotted
  // fields: a field set twice would be an override the user cannot see.
  auto givenOnce = [&](StringRef field) -> Error {
    if (llvm::is_contained(given, field))
      return error(
          "target field '" + field +
          "' is set twice (by itself and through 'fabric' or its group)");
    return Error::success();
  };
  bool named = false;
  for (StringRef key : keys) {
    const json::Value &v = *obj->get(key);
    Error err = Error::success();
    if (key == "base") {
      continue;
    } else if (key == "name") {
      std::optional<StringRef> s = v.getAsString();
      if (!s || s->empty())
        err = error("target field 'name' must be a non-empty string");
      else
        t.name = s->str();
      named = true;
    } else if (key == "sources") {
      err = checkSources(v);
    } else if (key == "fabric") {
      err = readFabric(v, t, given);
    } else if (key == "dead_cores") {
      err = readDeadCores(v, t);
    } else if (key == "dead_links") {
      err = readDeadLinks(v, t);
    } else if (const TargetFieldInfo *f = findField(key)) {
      err = givenOnce(f->key);
      if (!err)
        err = readField(*f, v, t);
      given.push_back(f->key);
    } else if (const json::Object *group = v.getAsObject()) {
      // A group of dotted fields, as "macs_per_cycle": {"f16": 4}.
      std::vector<std::string> inner;
      for (const auto &entry : *group)
        inner.push_back((key + "." + entry.first.str()).str());
      llvm::sort(inner);
      for (const std::string &dotted : inner) {
        const TargetFieldInfo *f = findField(dotted);
        if (!f) {
          err = error("unknown target field '" + dotted + "'");
          break;
        }
        if ((err = givenOnce(f->key)))
          break;
        if ((err = readField(*f, *group->get(dotted.substr(key.size() + 1)),
                             t)))
          break;
        given.push_back(f->key);
      }
    } else {
      err = error("unknown target field '" + key + "'");
    }
    if (err)
      return prefixed(origin, std::move(err));
  }
  if (hasBase && !named && llvm::any_of(keys, [](StringRef key) {
        return key != "base" && key != "sources";
      }))
    t.name = changedPresetName(t.name, origin);
  if (!hasBase) {
    if (!named)
      return error(origin + ": target field 'name' is missing");
    for (const TargetFieldInfo &f : kFields)
      if (!is_contained(given, f.key))
        return error(origin + ": target field '" + f.key +
                     "' is missing (give every field, or start from a "
                     "preset with \"base\")");
  }
  if (Error e = validateTarget(t))
    return prefixed(origin, std::move(e));
  return t;
}

} // namespace

Error TargetFieldInfo::check(double value) const {
  if (isInteger && std::isfinite(value) && value == std::floor(value) &&
      std::fabs(value) < 9e18)
    return checkInteger(int64_t(value));
  bool inRange = !isInteger && std::isfinite(value) && value >= min &&
                 value <= max;
  if (inRange)
    return Error::success();
  return outOfRange(std::isnan(value) ? std::string("a value of another type")
                                      : formatv("{0}", format("%g", value))
                                            .str());
}

Error TargetFieldInfo::checkInteger(int64_t value) const {
  if (!isInteger)
    return check(double(value));
  if (double(value) >= min && double(value) <= max)
    return Error::success();
  return outOfRange(std::to_string(value));
}

Error TargetFieldInfo::outOfRange(StringRef got) const {
  std::string range =
      isInteger ? formatv("an integer in [{0}, {1}]", int64_t(min),
                          int64_t(max))
                      .str()
                : formatv("a number in [{0}, {1}]", format("%g", min),
                          format("%g", max))
                      .str();
  return error("target field '" + key + "' must be " + range + " (" + unit +
               "), got " + got);
}

ArrayRef<TargetFieldInfo> targetFields() { return kFields; }

std::vector<std::string> presetTargetNames() {
  std::vector<std::string> names;
  for (const PresetText &preset : kPresets)
    names.push_back(preset.name);
  return names;
}

Expected<Target> getPresetTarget(StringRef name) {
  return presetAtDepth(name, 0);
}

Expected<Target> parseTarget(StringRef jsonText, StringRef origin) {
  return parseTargetAtDepth(jsonText, origin, 0);
}

Expected<Target> loadTarget(StringRef nameOrPath) {
  if (is_contained(presetTargetNames(), nameOrPath.str()))
    return getPresetTarget(nameOrPath);
  if (Error special = refuseSpecialFile(nameOrPath))
    return std::move(special);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!file)
    return error(formatv("target '{0}' is not a preset ({1}) and cannot be "
                         "read as a file: {2}",
                         nameOrPath, join(presetTargetNames(), ", "),
                         file.getError().message()));
  return parseTarget((*file)->getBuffer(), nameOrPath);
}

json::Value targetToJSON(const Target &t) {
  json::Object obj{{"name", t.name}};
  for (const TargetFieldInfo &f : kFields) {
    json::Value value =
        f.isInteger ? json::Value(t.*f.integer) : json::Value(t.*f.real);
    auto [group, inner] = f.key.split('.');
    if (inner.empty()) {
      obj[f.key] = std::move(value);
      continue;
    }
    json::Value &slot = obj[group];
    if (!slot.getAsObject())
      slot = json::Object{};
    (*slot.getAsObject())[inner] = std::move(value);
  }
  // Written only when present, so a target without defects prints as
  // before.
  if (!t.deadCores.empty()) {
    json::Array cores;
    for (const DeadCore &c : t.deadCores)
      cores.push_back(json::Array{c.y, c.x});
    obj["dead_cores"] = std::move(cores);
  }
  if (!t.deadLinks.empty()) {
    json::Array links;
    for (const DeadLink &l : t.deadLinks)
      links.push_back(json::Array{l.y, l.x, l.south ? "south" : "east"});
    obj["dead_links"] = std::move(links);
  }
  return obj;
}

FlatDefects flattenDefects(const Target &t) {
  FlatDefects flat;
  for (const DeadCore &c : t.deadCores)
    flat.cores.insert(flat.cores.end(), {c.y, c.x});
  for (const DeadLink &l : t.deadLinks)
    flat.links.insert(flat.links.end(), {l.y, l.x, int64_t(l.south)});
  return flat;
}

bool unflattenDefects(ArrayRef<int64_t> cores, ArrayRef<int64_t> links,
                      Target &t) {
  if (cores.size() % 2 || links.size() % 3)
    return false;
  for (size_t i = 0; i < cores.size(); i += 2)
    t.deadCores.push_back({cores[i], cores[i + 1]});
  for (size_t i = 0; i < links.size(); i += 3) {
    if (links[i + 2] != 0 && links[i + 2] != 1)
      return false;
    t.deadLinks.push_back({links[i], links[i + 1], links[i + 2] == 1});
  }
  return true;
}

static Error checkDefects(const Target &t) {
  auto onFabric = [&](int64_t y, int64_t x) {
    return y >= 0 && x >= 0 && y < t.fabricHeight && x < t.fabricWidth;
  };
  for (size_t i = 0; i < t.deadCores.size(); ++i) {
    const DeadCore &c = t.deadCores[i];
    if (!onFabric(c.y, c.x))
      return error(formatv("target field 'dead_cores': [{0}, {1}] is off "
                           "the {2}x{3} (HxW) fabric",
                           c.y, c.x, t.fabricHeight, t.fabricWidth));
    if (i && !(t.deadCores[i - 1] < c))
      return error(formatv("target field 'dead_cores': [{0}, {1}] is "
                           "{2}",
                           c.y, c.x,
                           t.deadCores[i - 1] == c ? "listed twice"
                                                   : "out of order"));
  }
  for (size_t i = 0; i < t.deadLinks.size(); ++i) {
    const DeadLink &l = t.deadLinks[i];
    int64_t y2 = l.y + l.south, x2 = l.x + !l.south;
    if (!onFabric(l.y, l.x) || !onFabric(y2, x2))
      return error(formatv("target field 'dead_links': the link between "
                           "[{0}, {1}] and [{2}, {3}] is off the {4}x{5} "
                           "(HxW) fabric",
                           l.y, l.x, y2, x2, t.fabricHeight, t.fabricWidth));
    if (i && !(t.deadLinks[i - 1] < l))
      return error(formatv("target field 'dead_links': the link between "
                           "[{0}, {1}] and [{2}, {3}] is {4}",
                           l.y, l.x, y2, x2,
                           t.deadLinks[i - 1] == l ? "listed twice"
                                                   : "out of order"));
  }
  return Error::success();
}

Error validateTarget(const Target &t) {
  if (t.name.empty())
    return error("target field 'name' must be a non-empty string");
  if (llvm::any_of(t.name,
                   [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; }))
    return error("target field 'name' has a control character");
  for (const TargetFieldInfo &f : kFields)
    if (Error e = f.check(f.get(t)))
      return e;
  return checkDefects(t);
}

} // namespace wafer::rt
