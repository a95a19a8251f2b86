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

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <algorithm>
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
  int32_t channelColor(int32_t core, int32_t channel, bool send) const {
    // Most channels' colors vary along one axis only: a small table then
    // answers without the core's slots (a cache miss on a large grid).
    const AxisColors &table = (send ? sendColors : recvColors)[channel];
    if (table.axis == Axis::X)
      return table.colors[core % W];
    if (table.axis == Axis::Y)
      return table.colors[core / W];
    // The core's routes lie together, a slot per color.
    const uint32_t *slots = &routeIndex[size_t(core) * numColors];
    for (int32_t color = 0; color < numColors; ++color) {
      if (slots[color] == kNoRoute)
        continue;
      const RouteRef &ref = routeRefs[slots[color]];
      if (ref.channel == channel && startsOrEnds(*ref.route, send))
        return color;
    }
    return -1;
  }

  /// What injections add to the run's totals. Injections on different
  /// threads keep their own and add them up afterwards.
  struct Tally {
    int64_t messages = 0, linkWords = 0, latestArrival = 0;
  };
  /// Injects a message; `delivered(core, color, arrival)` is called for
  /// each core whose mailbox receives it. An error for a message that
  /// leaves its routes.
  llvm::Error
  inject(int32_t src, const Outgoing &message,
         llvm::function_ref<void(int32_t, int32_t, int64_t)> delivered) {
    return inject(src, message, ++messageSerial, tally, delivered);
  }
  /// The same with the message's serial (unique in the run, see
  /// reserveSerials) and the tally to count it in: injections whose
  /// messages cross no common core may run on different threads.
  llvm::Error
  inject(int32_t src, const Outgoing &message, int64_t serial, Tally &counts,
         llvm::function_ref<void(int32_t, int32_t, int64_t)> delivered);
  /// When a message of `words` words the core issues at `time` will have
  /// left its ramp (and the storage it is sent from is free again), after
  /// the core's `queued` sends not yet injected. Only the core's own sends
  /// use its ramp, so this is known when the send is issued.
  int64_t leavesRamp(int32_t src, llvm::ArrayRef<Outgoing> queued, int64_t time,
                     int64_t words) const {
    int64_t free = ports[src].rampOut;
    for (const Outgoing &o : queued)
      free = rampStart(o.time, free) + timing.occupancy(o.words);
    return rampStart(time, free) + timing.occupancy(words);
  }
  /// Reserves `n` message serials and returns the first.
  int64_t reserveSerials(int64_t n) {
    int64_t first = messageSerial + 1;
    messageSerial += n;
    return first;
  }
  void add(const Tally &counts) {
    tally.messages += counts.messages;
    tally.linkWords += counts.linkWords;
    tally.latestArrival = std::max(tally.latestArrival, counts.latestArrival);
  }

  /// Bands: the grid cut into `bands` bands of rows, or of columns. A
  /// batch's sends whose messages all stay in their senders' bands can be
  /// injected band by band at once: they cross no common core.
  void cutIntoBands(int32_t bands) { bandCount = bands; }
  int32_t rowBand(int64_t y) const { return int32_t(y * bandCount / H); }
  /// The first row y with rowBand(y) >= band.
  int64_t firstRowOfBand(int32_t band) const {
    return (int64_t(band) * H + bandCount - 1) / bandCount;
  }
  int32_t columnBand(int64_t x) const { return int32_t(x * bandCount / W); }
  /// Whether the core's messages on the color stay in its band of rows
  /// (InRowBand) or of columns (InColumnBand); neither when one would go
  /// astray (inject reports how). A walk of the route that touches nothing
  /// shared: routes do not change, so callers keep the answer.
  enum BandFlags : uint8_t { InRowBand = 1, InColumnBand = 2 };
  uint8_t bands(int32_t src, int32_t color) const;

  /// Where the per-core state that inject's `delivered` callback reads
  /// lies (`stride` bytes per core from `base`): inject asks for it with
  /// the rest of a hop's state.
  void setReceiverState(const void *base, size_t stride) {
    receiverState = static_cast<const char *>(base);
    receiverStride = stride;
  }
  /// Asks for what a message's hop to `core` on `color` reads: its route
  /// byte, ports and mailbox, and the receiver's state.
  void prefetchHop(int64_t core, int32_t color) const {
    __builtin_prefetch(&routeShapes[size_t(core) * numColors + color]);
    prefetch(int32_t(core));
    if (receiverState)
      __builtin_prefetch(receiverState + core * receiverStride);
  }
  /// Asks for the core's mailbox and ports ahead of a run of the core.
  void prefetch(int32_t core) const {
    __builtin_prefetch(&inboxes[core]);
    __builtin_prefetch(&ports[core]);
  }
  /// Asks for what injecting a message from the core on the color reads
  /// at its sender, well ahead of its injection...
  void prefetchSend(int32_t src, int32_t color) const {
    __builtin_prefetch(&ports[src]);
    __builtin_prefetch(&routeShapes[size_t(src) * numColors + color]);
  }
  /// ... and, shortly before it, at the sender's neighbours the route goes
  /// to (most messages go one hop; its route is in cache by then).
  void prefetchFirstHops(int32_t src, int32_t color) const;
  /// Most messages that may wait unreceived at one core. Hardware stalls
  /// the senders long before (its queues hold a few words), and a program
  /// that sends more than it receives would otherwise grow the host's
  /// memory without bound; real programs keep a few waiting.
  static constexpr size_t kMaxWaitingMessages = 4096;
  /// An error naming the first core (in y, x order) where messages wait
  /// that its program never received, once every core is done.
  llvm::Error checkAllReceived() const;
  /// Whether a message waits at the core on the color.
  bool hasMessage(int32_t core, int32_t color) const;
  /// Removes and returns the first one (hasMessage must hold).
  Message takeMessage(int32_t core, int32_t color);

  int64_t maxRoutesPerCore() const { return maxRoutes; }
  int64_t messages() const { return tally.messages; }
  int64_t linkWords() const { return tally.linkWords; }
  int64_t lastArrival() const { return tally.latestArrival; }
  /// Words over each link, [direction - 1][core] (when counted).
  const std::vector<int64_t> *linkWordsOut() const { return wordsOut; }
  const std::vector<int64_t> *linkWordsIn() const { return wordsIn; }

private:
  /// When each of a core's fabric resources is next free, and the last
  /// message that crossed it: what a hop reads, in one cache line.
  struct alignas(64) Ports {
    int64_t rampOut = 0, rampIn = 0;
    int64_t link[4] = {0, 0, 0, 0}; // indexed by Dir - 1
    int64_t visitedBy = 0;          // message serial
  };
  /// The messages waiting at one core, all colors in arrival order: rarely
  /// more than a few, so one small queue per core rather than one per core
  /// and color (which at 660x660 and 24 colors took 334 MB).
  /// A line of its own: at 56 bytes, three in four mailboxes straddled two
  /// lines, two misses where one was asked for.
  struct alignas(64) Inbox {
    llvm::SmallVector<Message, 1> messages;
  };
  static_assert(sizeof(Inbox) == 64, "a mailbox fills one cache line");

  const Program &p;
  const TimingModel &timing;
  const int64_t W, H, N;

  /// Fabric hops from grid row y to y + 1 (rowHops[y]) and from column x
  /// to x + 1: 1 unless the placement skips rows or columns between them.
  std::vector<int64_t> rowHops, colHops;

  llvm::Error checkSpareRouters();
  /// A message issued at `time` enters the sender's ramp once the ramp is
  /// free.
  static int64_t rampStart(int64_t time, int64_t rampFree) {
    return std::max(time, rampFree);
  }
  /// The coordinates next to (x, y) towards d.
  static std::pair<int64_t, int64_t> towards(int64_t x, int64_t y, Dir d) {
    return {x + (d == Dir::East) - (d == Dir::West),
            y + (d == Dir::South) - (d == Dir::North)};
  }
  bool inGrid(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < W && y < H;
  }

  int32_t numColors = 0;
  /// The program's routes, each with its channel.
  struct RouteRef {
    const Route *route;
    int32_t channel;
  };
  std::vector<RouteRef> routeRefs;
  static constexpr uint32_t kNoRoute = ~uint32_t(0);
  /// The route each core's router holds per color, [core * numColors +
  /// color]: an index into routeRefs or kNoRoute.
  std::vector<uint32_t> routeIndex;
  /// Whether a route starts at (send) or delivers to (recv) its cores.
  static bool startsOrEnds(const Route &r, bool send) {
    return send ? r.in == Dir::Ramp : (r.outMask & dirBit(Dir::Ramp)) != 0;
  }
  /// A channel's sending (receiving) colors as a function of one grid
  /// coordinate, when its routes from (to) a ramp each span the whole other
  /// axis: colors[x] (Axis::X) or colors[y] (Axis::Y), -1 where the
  /// channel has none. Axis::None: they do not; look at the core's slots.
  struct AxisColors {
    Axis axis = Axis::None;
    std::vector<int32_t> colors;
  };
  std::vector<AxisColors> sendColors, recvColors; // per channel
  void tabulateChannelColors();
  /// The routes' `in` and `outMask` per core and color, a byte each (a
  /// quarter of routeIndex, so that a message's walk from core to core
  /// misses the cache less): (in << 5) | outMask, or kNoShape.
  static constexpr uint8_t kNoShape = 0xff;
  static_assert(((unsigned(Dir::West) << 5) | 0x1f) < kNoShape,
                "every route's shape differs from kNoShape");
  std::vector<uint8_t> routeShapes;
  static uint8_t shapeOf(const Route &r) {
    // validateProgram keeps `in` a direction and outMask below 32.
    return uint8_t((unsigned(r.in) << 5) | r.outMask);
  }
  static Dir shapeIn(uint8_t shape) { return Dir(shape >> 5); }
  static uint8_t shapeOut(uint8_t shape) { return shape & 0x1f; }
  const Route *routeAt(int64_t core, int32_t color) const {
    uint32_t index = routeIndex[core * numColors + color];
    return index == kNoRoute ? nullptr : routeRefs[index].route;
  }
  int64_t maxRoutes = 0;

  std::vector<Ports> ports;
  std::vector<Inbox> inboxes; // [core]
  int64_t messageSerial = 0;
  /// setReceiverState's; none if null.
  const char *receiverState = nullptr;
  size_t receiverStride = 0;
  Tally tally;
  int32_t bandCount = 1;
  std::vector<int64_t> wordsOut[4], wordsIn[4];
};

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_NETWORK_H
