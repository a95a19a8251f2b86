//===- Target.h - PLMR hardware description ---------------------*- C++ -*-===//
//
// One struct describes a wafer-scale target (DESIGN section 4). Passes, the
// bundle and the emulator read the same description; nothing else hard-codes
// hardware numbers.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_TARGET_H
#define WAFER_RUNTIME_TARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace wafer::rt {

using TargetFieldInt = int64_t;
using TargetFieldReal = double;

/// A core that cannot be used, neither to compute nor to pass messages
/// through its router; at fabric row y, column x.
struct DeadCore {
  int64_t y = 0, x = 0;
  bool operator==(const DeadCore &o) const { return y == o.y && x == o.x; }
  bool operator<(const DeadCore &o) const {
    return std::tie(y, x) < std::tie(o.y, o.x);
  }
};

/// A link that cannot carry messages (either way): between the core at
/// fabric row y, column x and its east neighbour (x + 1), or its south
/// neighbour (y + 1) when `south`.
struct DeadLink {
  int64_t y = 0, x = 0;
  bool south = false;
  bool operator==(const DeadLink &o) const {
    return y == o.y && x == o.x && south == o.south;
  }
  bool operator<(const DeadLink &o) const {
    return std::tie(y, x, south) < std::tie(o.y, o.x, o.south);
  }
};

/// A wafer-scale target. The members are the fields of TargetFields.def,
/// which says what each means, its unit and its accepted range, and the
/// fabric's defects (lists, so not in the table of numbers).
struct Target {
  std::string name;
#define WAFER_TARGET_FIELD(Member, Key, Kind, Unit, Min, Max, Description)   \
  TargetField##Kind Member = 0;
#include "wafer/Runtime/TargetFields.def"
  /// Sorted, without repeats (validateTarget); the compiler places grids
  /// around them (FabricPlacement.h).
  std::vector<DeadCore> deadCores;
  std::vector<DeadLink> deadLinks;

  bool hasDefects() const { return !deadCores.empty() || !deadLinks.empty(); }
};

/// One field of TargetFields.def, for code that treats fields uniformly.
struct TargetFieldInfo {
  llvm::StringRef key;
  bool isInteger;
  llvm::StringRef unit;
  double min, max;
  llvm::StringRef description;
  /// Exactly one of the two is set, by isInteger.
  int64_t Target::*integer;
  double Target::*real;

  /// The field's value as a double (exact: integer fields are bounded far
  /// below 2^53).
  double get(const Target &t) const {
    return isInteger ? double(t.*integer) : t.*real;
  }
  /// Checks the range (and, for integer fields, that the value is whole);
  /// the error names the field and the value.
  llvm::Error check(double value) const;
  llvm::Error checkInteger(int64_t value) const;
  /// Stores a value check() accepted.
  void set(Target &t, double value) const {
    if (isInteger)
      t.*integer = int64_t(value);
    else
      t.*real = value;
  }

private:
  llvm::Error outOfRange(llvm::StringRef got) const;
};

/// Every field, in TargetFields.def's order.
llvm::ArrayRef<TargetFieldInfo> targetFields();

/// Names of the built-in presets ("wse2", "wse3").
std::vector<std::string> presetTargetNames();

/// A preset by name, or an error naming the known presets.
llvm::Expected<Target> getPresetTarget(llvm::StringRef name);

/// Parses a target from JSON text. The object may name `"base": "wse2"` and
/// override any field ("fabric": "WxH" or [W, H] sets both fabric fields; a
/// "sources" object of strings documents fields and is not read); without
/// a base every field is needed. Defects are optional lists:
/// "dead_cores": [[y, x], ...] and
/// "dead_links": [[y, x, "east" | "south" | "west" | "north"], ...]. Unknown fields, ill-typed values and
/// values out of range are errors. `origin` names the source in errors.
llvm::Expected<Target> parseTarget(llvm::StringRef jsonText,
                                   llvm::StringRef origin);

/// A preset name or the path of a JSON file.
llvm::Expected<Target> loadTarget(llvm::StringRef nameOrPath);

/// The JSON form accepted by parseTarget (every field, no base).
llvm::json::Value targetToJSON(const Target &target);

/// A target's defects as the #mesh.target attribute and the bundle store
/// them: (y, x) pairs and (y, x, south) triples, flat.
struct FlatDefects {
  std::vector<int64_t> cores, links;
};
FlatDefects flattenDefects(const Target &target);

/// Appends flat defects to `target`; false when the lists are not pairs and
/// triples with a direction of 0 or 1.
bool unflattenDefects(llvm::ArrayRef<int64_t> cores,
                      llvm::ArrayRef<int64_t> links, Target &target);

/// Checks that the name is not empty and has no control characters (errors
/// and reports print it within one line), every field is in range and every
/// defect lies on the fabric, once, in order; the error names the field.
llvm::Error validateTarget(const Target &target);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_TARGET_H
