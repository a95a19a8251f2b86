//===- Network.cpp - Routes, links and mailboxes of the fabric ------------===//
#include "Network.h"
#include "HugePages.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace wafer::rt::emulator {

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Network::Network(const Program &p, const TimingModel &timing)
    : p(p), timing(timing), W(p.gridWidth), H(p.gridHeight), N(W * H),
      rowHops(H, 1), colHops(W, 1) {
  for (int64_t y = 0; y + 1 < int64_t(p.fabricRows.size()); ++y)
    rowHops[y] = p.fabricRows[y + 1] - p.fabricRows[y];
  for (int64_t x = 0; x + 1 < int64_t(p.fabricCols.size()); ++x)
    colHops[x] = p.fabricCols[x + 1] - p.fabricCols[x];
}

Error Network::checkSpareRouters() {
  // Colors are below routesPerCore (validateProgram), so the routers in
  // between never hold more; they count towards the high-water mark.
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x)
      for (Dir d : {Dir::East, Dir::South}) {
        bool east = d == Dir::East;
        if (east ? x + 1 >= W || colHops[x] == 1
                 : y + 1 >= H || rowHops[y] == 1)
          continue;
        int64_t a = y * W + x, b = east ? a + 1 : a + W;
        int64_t colors = 0;
        for (int32_t color = 0; color < numColors; ++color) {
          const Route *forward = routeAt(a, color);
          const Route *backward = routeAt(b, color);
          bool there = forward && (forward->outMask & dirBit(d));
          bool back = backward && (backward->outMask & dirBit(opposite(d)));
          if (there && back)
            return err(formatv("color {0} crosses the skipped fabric between "
                               "grid cores ({1},{2}) and ({3},{4}) both ways; "
                               "the routers in between hold one route per "
                               "color",
                               color, x, y, b % W, b / W));
          colors += there || back;
        }
        maxRoutes = std::max(maxRoutes, colors);
      }
  return Error::success();
}

Error Network::buildRouteTables() {
  for (const Channel &ch : p.channels)
    for (const Route &r : ch.routes)
      numColors = std::max(numColors, r.color + 1);
  routeRefs.clear();
  assignOnHugePages(routeIndex, size_t(N * numColors), kNoRoute);
  for (size_t c = 0; c < p.channels.size(); ++c)
    for (const Route &r : p.channels[c].routes) {
      uint32_t index = uint32_t(routeRefs.size());
      routeRefs.push_back({&r, int32_t(c)});
      for (int64_t y = r.cores.y.lo; y <= r.cores.y.hi; y += r.cores.y.step)
        for (int64_t x = r.cores.x.lo; x <= r.cores.x.hi; x += r.cores.x.step) {
          uint32_t &slot = routeIndex[(y * W + x) * numColors + r.color];
          if (slot != kNoRoute)
            return err(formatv("route conflict: core ({0},{1}) color {2} is "
                               "configured by channel '{3}' and channel "
                               "'{4}'",
                               x, y, r.color,
                               p.channels[routeRefs[slot].channel].name,
                               p.channels[c].name));
          slot = index;
        }
    }
  assignOnHugePages(routeShapes, size_t(N * numColors), kNoShape);
  for (size_t slot = 0; slot < routeIndex.size(); ++slot)
    if (routeIndex[slot] != kNoRoute)
      routeShapes[slot] = shapeOf(*routeRefs[routeIndex[slot]].route);
  // validateProgram keeps colors below routesPerCore, so a core never
  // holds more than the target allows; the high-water mark is a statistic.
  for (int64_t id = 0; id < N; ++id)
    maxRoutes = std::max<int64_t>(
        maxRoutes, std::count_if(routeIndex.begin() + id * numColors,
                                 routeIndex.begin() + (id + 1) * numColors,
                                 [](uint32_t r) { return r != kNoRoute; }));
  tabulateChannelColors();
  return checkSpareRouters();
}

void Network::reset(bool countLinks) {
  assignOnHugePages(ports, size_t(N), Ports());
  assignOnHugePages(inboxes, size_t(N), Inbox());
  tally = Tally();
  for (int d = 0; d < 4; ++d) {
    wordsOut[d].assign(countLinks ? N : 0, 0);
    wordsIn[d].assign(countLinks ? N : 0, 0);
  }
}

Error Network::checkAllReceived() const {
  for (int64_t core = 0; core < N; ++core) {
    const auto &waiting = inboxes[core].messages;
    if (waiting.empty())
      continue;
    int32_t color = waiting.front().color;
    uint32_t route = routeIndex[size_t(core) * numColors + color];
    std::string channel = route == kNoRoute
                              ? std::string("?")
                              : p.channels[routeRefs[route].channel].name;
    return err(formatv("core ({0},{1}) ends with {2} message(s) it never "
                       "received, the first on channel '{3}' color {4}: its "
                       "program receives fewer than are sent to it",
                       core % W, core / W, waiting.size(), channel, color));
  }
  return Error::success();
}

bool Network::hasMessage(int32_t core, int32_t color) const {
  return llvm::any_of(inboxes[core].messages,
                      [&](const Message &m) { return m.color == color; });
}

Message Network::takeMessage(int32_t core, int32_t color) {
  auto &box = inboxes[core].messages;
  auto it =
      llvm::find_if(box, [&](const Message &m) { return m.color == color; });
  Message msg = std::move(*it);
  box.erase(it);
  return msg;
}

Error Network::inject(int32_t src, const Outgoing &o, int64_t serial,
                      Tally &counts,
                      function_ref<void(int32_t, int32_t, int64_t)> delivered) {
  int64_t words = o.words;
  int64_t occ = timing.occupancy(words);
  Ports &sp = ports[src];
  int64_t start = rampStart(o.time, sp.rampOut);
  sp.rampOut = start + occ;
  ++counts.messages;

  struct Head {
    int32_t core;
    Dir from;
    int64_t time;
  };
  SmallVector<Head, 8> work{{src, Dir::Ramp, start + timing.rampCycles()}};
  auto where = [&](int64_t id) {
    return formatv("({0},{1})", id % W, id / W).str();
  };
  // Formatted only when a message goes astray.
  auto origin = [&] {
    return formatv("message on color {0} from {1}", o.color, where(src)).str();
  };
  while (!work.empty()) {
    Head h = work.pop_back_val();
    uint8_t shape = routeShapes[size_t(h.core) * numColors + o.color];
    if (shape == kNoShape)
      return err(origin() + " reaches " + where(h.core) +
                 ", which has no route for it");
    if (shapeIn(shape) != h.from)
      return err(formatv("{0} arrives at {1} from {2} but its route expects "
                         "{3}",
                         origin(), where(h.core), dirName(h.from),
                         dirName(shapeIn(shape))));
    uint8_t outMask = shapeOut(shape);
    Ports &hp = ports[h.core];
    if (hp.visitedBy == serial)
      return err(origin() + " reaches " + where(h.core) +
                 " twice (routing loop)");
    hp.visitedBy = serial;
    int64_t x = h.core % W, y = h.core / W;
    for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
      if (!(outMask & dirBit(d)))
        continue;
      auto [nx, ny] = towards(x, y, d);
      if (!inGrid(nx, ny))
        return err(formatv("{0} leaves the grid at {1} going {2}", origin(),
                           where(h.core), dirName(d)));
      int64_t &link = hp.link[unsigned(d) - 1];
      int64_t linkStart = std::max(h.time, link);
      int64_t hops = d == Dir::East    ? colHops[x]
                     : d == Dir::West  ? colHops[nx]
                     : d == Dir::South ? rowHops[y]
                                       : rowHops[ny];
      link = linkStart + occ;
      counts.linkWords += words * hops;
      if (!wordsOut[0].empty()) {
        wordsOut[unsigned(d) - 1][h.core] += words;
        wordsIn[unsigned(opposite(d)) - 1][ny * W + nx] += words;
      }
      // Its route and ports are read next, its mailbox and receiver's
      // state too if the message ends there: ask for them all at once
      // rather than miss on one after another (6% of a timing run).
      int64_t next = ny * W + nx;
      prefetchHop(next, o.color);
      // The skipped cores' links carry only this pair's traffic, so the
      // first link's reservation stands for all of them.
      work.push_back(
          {int32_t(next), opposite(d), linkStart + timing.hopCycles() * hops});
    }
    if (outMask & dirBit(Dir::Ramp)) {
      int64_t rampInStart = std::max(h.time, hp.rampIn);
      hp.rampIn = rampInStart + occ;
      int64_t arrival = rampInStart + occ + timing.rampCycles();
      counts.latestArrival = std::max(counts.latestArrival, arrival);
      auto &waiting = inboxes[h.core].messages;
      if (waiting.size() >= kMaxWaitingMessages)
        return err(formatv("core {0}: more than {1} messages wait unreceived "
                           "(the latest on color {2}): its program receives "
                           "fewer than are sent to it",
                           where(h.core), kMaxWaitingMessages, o.color));
      waiting.push_back({arrival, o.color, o.elements, o.data});
      delivered(h.core, o.color, arrival);
    }
  }
  return Error::success();
}

void Network::prefetchFirstHops(int32_t src, int32_t color) const {
  uint8_t shape = routeShapes[size_t(src) * numColors + color];
  if (shape == kNoShape)
    return;
  int64_t x = src % W, y = src / W;
  for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
    if (!(shapeOut(shape) & dirBit(d)))
      continue;
    auto [nx, ny] = towards(x, y, d);
    if (inGrid(nx, ny))
      prefetchHop(ny * W + nx, color);
  }
}

void Network::tabulateChannelColors() {
  sendColors.assign(p.channels.size(), AxisColors());
  recvColors.assign(p.channels.size(), AxisColors());
  for (size_t c = 0; c < p.channels.size(); ++c)
    for (bool send : {true, false}) {
      auto spans = [](const Range &r, int64_t n) {
        return r.lo <= 0 && r.hi >= n - 1 && r.step == 1;
      };
      bool allRows = true, allColumns = true;
      for (const Route &r : p.channels[c].routes)
        if (startsOrEnds(r, send)) {
          allRows &= spans(r.cores.y, H);
          allColumns &= spans(r.cores.x, W);
        }
      if (!allRows && !allColumns)
        continue;
      // Every route holds its cores' slot of its color (buildRouteTables),
      // so the lowest color of the channel's routes covering a coordinate
      // is the one the core's slots give.
      AxisColors &table = (send ? sendColors : recvColors)[c];
      table.axis = allRows ? Axis::X : Axis::Y;
      table.colors.assign(size_t(allRows ? W : H), -1);
      for (const Route &r : p.channels[c].routes) {
        if (!startsOrEnds(r, send))
          continue;
        // validateProgram keeps the ranges inside the grid.
        const Range &along = allRows ? r.cores.x : r.cores.y;
        for (int64_t i = along.lo; i <= along.hi; i += along.step)
          if (table.colors[i] < 0 || r.color < table.colors[i])
            table.colors[i] = r.color;
      }
    }
}

uint8_t Network::bands(int32_t src, int32_t color) const {
  // inject's walk without its reservations.
  SmallDenseSet<int32_t, 16> visited;
  int32_t row = rowBand(src / W), column = columnBand(src % W);
  uint8_t flags = InRowBand | InColumnBand;
  SmallVector<std::pair<int32_t, Dir>, 8> work{{src, Dir::Ramp}};
  while (!work.empty()) {
    auto [core, from] = work.pop_back_val();
    const Route *r = routeAt(core, color);
    if (!r || r->in != from || !visited.insert(core).second)
      return 0;
    int64_t x = core % W, y = core / W;
    if (rowBand(y) != row)
      flags &= ~InRowBand;
    if (columnBand(x) != column)
      flags &= ~InColumnBand;
    for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
      if (!(r->outMask & dirBit(d)))
        continue;
      auto [nx, ny] = towards(x, y, d);
      if (!inGrid(nx, ny))
        return 0;
      work.push_back({int32_t(ny * W + nx), opposite(d)});
    }
  }
  return flags;
}

} // namespace wafer::rt::emulator
