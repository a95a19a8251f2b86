//===- Target.h - PLMR hardware description ---------------------*- C++ -*-===//
//
// One struct describes a wafer-scale target (DESIGN section 4). Passes, the
// bundle and the emulator read the same description; nothing else hard-codes
// hardware numbers.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_TARGET_H
#define WAFER_RUNTIME_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wafer::rt {

struct Target {
  std::string name;
  /// Usable program area: fabricWidth cores along x, fabricHeight along y.
  int64_t fabricWidth = 0;
  int64_t fabricHeight = 0;
  double clockHz = 0;
  int64_t sramBytes = 0;
  /// Routable colors per core (R).
  int64_t routesPerCore = 0;
  /// alpha: cycles per hop on a configured route.
  int64_t hopCycles = 0;
  /// Cycles between a core and its router, paid at each end of a message.
  int64_t rampCycles = 0;
  /// beta: cycles a core's software spends handling one received message.
  int64_t relayCycles = 0;
  /// Cycles a core spends issuing a send (the transfer is asynchronous).
  int64_t sendIssueCycles = 1;
  /// 32-bit words per link direction per cycle.
  int64_t linkWordsPerCycle = 0;
  /// Fused multiply-accumulates per cycle, by arithmetic type.
  double macsPerCycleF32 = 0;
  double macsPerCycleF16 = 0;
  double macsPerCycleF16AccF32 = 0;
};

/// Names of the built-in presets ("wse2", "wse3").
std::vector<std::string> presetTargetNames();

/// A preset by name, or an error naming the known presets.
llvm::Expected<Target> getPresetTarget(llvm::StringRef name);

/// Parses a target from JSON text. The object may name `"base": "wse2"` and
/// override any field; unknown fields and ill-typed values are errors.
/// `origin` names the source in error messages.
llvm::Expected<Target> parseTarget(llvm::StringRef jsonText,
                                   llvm::StringRef origin);

/// A preset name or the path of a JSON file.
llvm::Expected<Target> loadTarget(llvm::StringRef nameOrPath);

/// The JSON form accepted by parseTarget (all fields, no base).
llvm::json::Value targetToJSON(const Target &target);

/// Checks that every field is in range; the error names the field.
llvm::Error validateTarget(const Target &target);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_TARGET_H
