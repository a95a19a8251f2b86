//===- Network.h - Routes, links and mailboxes of the fabric ----*- C++ -*-===//
//
// The fabric's state: which route every core's router holds for each color,
// when each ramp and link is next free, and the messages waiting at each
// core. A message moves hop by hop along the configured routes, reserving
// each link and ramp it crosses for its occupancy (TimingModel); what a
// core does with a message is the scheduler's business.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_NETWORK_H
#define WAFER_RUNTIME_EMULATOR_NETWORK_H

#include "DataPath.h"

#include "wafer/Runtime/Program.h"
#include "wafer/Runtime/TimingModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace wafer::rt::emulator {

struct Message {
  int64_t arrival = 0;
  /// The color it came on (a core's messages wait in one queue).
  int32_t color = 0;
  /// Values the message carries; the element count is checked on receipt.
  int64_t elements = 0;
  Payload data;
};

/// A send a core issued, injected into the fabric when its batch commits.
struct Outgoing {
  int64_t time = 0;
  int32_t color = 0;
  /// The sender's storage slot, busy until the message has left.
  int32_t storage = 0;
  /// 32-bit link words the message occupies (two f16 values per word).
  int64_t words = 0;
  int64_t elements = 0;
  Payload data;
};

class Network {
public:
  Network(const Program &p, const TimingModel &timing);

  /// Loads every channel's routes into the routers; two routes on one
  /// core and color are an error naming both channels. Under a fabric
  /// placement that skips rows or columns, the routers in between pass
  /// on the colors that cross their link, one direction per color (a color
  /// crossing both ways is an error).
  llvm::Error buildRouteTables();
  /// Empties the links and mailboxes; with `countLinks`, also counts the
  /// words over each core's links (linkWordsOut/In).
  void reset(bool countLinks);

  /// The color of the channel's route that starts at (send) or delivers to
  /// (recv) the core, or -1.
  int32_t channelColor(int32_t core, int32_t channel, bool send) const;

  /// Injects a message; `delivered(core, color, arrival)` is called for
  /// each core whose mailbox receives it. Returns when the sender's storage is
  /// free again, or an error for a message that leaves its routes.
  llvm::Expected<int64_t>
  inject(int32_t src, const Outgoing &message,
         llvm::function_ref<void(int32_t, int32_t, int64_t)> delivered);

  /// Whether a message waits at the core on the color.
  bool hasMessage(int32_t core, int32_t color) const;
  /// Removes and returns the first one (hasMessage must hold).
  Message takeMessage(int32_t core, int32_t color);

  int64_t maxRoutesPerCore() const { return maxRoutes; }
  int64_t messages() const { return totalMessages; }
  int64_t linkWords() const { return totalLinkWords; }
  int64_t lastArrival() const { return latestArrival; }
  /// Words over each link, [direction - 1][core] (when counted).
  const std::vector<int64_t> *linkWordsOut() const { return wordsOut; }
  const std::vector<int64_t> *linkWordsIn() const { return wordsIn; }

private:
  /// When each of a core's fabric resources is next free.
  struct Ports {
    int64_t rampOut = 0, rampIn = 0;
    int64_t link[5] = {0, 0, 0, 0, 0}; // indexed by Dir; [Ramp] unused
  };
  /// The messages waiting at one core, all colors in arrival order: rarely
  /// more than a few, so one small queue per core rather than one per core
  /// and color (which at 660x660 and 24 colors took 334 MB).
  using Inbox = llvm::SmallVector<Message, 1>;

  const Program &p;
  const TimingModel &timing;
  const int64_t W, H, N;

  /// Fabric hops from grid row y to y + 1 (rowHops[y]) and from column x
  /// to x + 1: 1 unless the placement skips rows or columns between them.
  std::vector<int64_t> rowHops, colHops;

  llvm::Error checkSpareRouters();

  int32_t numColors = 0;
  std::vector<const Route *> routeAt; // [core * numColors + color]
  std::vector<int32_t> channelOf;     // the channel that route belongs to
  int64_t maxRoutes = 0;
  /// A route that takes the core's sends from its ramp or delivers to it.
  struct RampRule {
    int32_t channel;
    int32_t color;
    bool takesSends, delivers;
  };
  /// Core c's ramp rules are rampRules[rampRulesAt[c] .. rampRulesAt[c+1]).
  std::vector<int64_t> rampRulesAt;
  std::vector<RampRule> rampRules;

  std::vector<Ports> ports;
  std::vector<Inbox> inboxes;     // [core]
  std::vector<int64_t> visitedBy; // message serial that last crossed a core
  int64_t messageSerial = 0;
  int64_t totalMessages = 0, totalLinkWords = 0, latestArrival = 0;
  std::vector<int64_t> wordsOut[4], wordsIn[4];
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_NETWORK_H
