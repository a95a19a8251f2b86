//===- Network.cpp - Routes, links and mailboxes of the fabric ------------===//
#include "Network.h"

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
          const Route *forward = routeAt[a * numColors + color];
          const Route *backward = routeAt[b * numColors + color];
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
  routeAt.assign(N * numColors, nullptr);
  channelOf.assign(N * numColors, -1);
  for (size_t c = 0; c < p.channels.size(); ++c)
    for (const Route &r : p.channels[c].routes)
      for (int64_t y = r.cores.y.lo; y <= r.cores.y.hi; y += r.cores.y.step)
        for (int64_t x = r.cores.x.lo; x <= r.cores.x.hi; x += r.cores.x.step) {
          int64_t slot = (y * W + x) * numColors + r.color;
          if (routeAt[slot])
            return err(formatv("route conflict: core ({0},{1}) color {2} is "
                               "configured by channel '{3}' and channel "
                               "'{4}'",
                               x, y, r.color, p.channels[channelOf[slot]].name,
                               p.channels[c].name));
          routeAt[slot] = &r;
          channelOf[slot] = int32_t(c);
        }
  // validateProgram keeps colors below routesPerCore, so a core never
  // holds more than the target allows; the high-water mark is a statistic.
  for (int64_t id = 0; id < N; ++id)
    maxRoutes = std::max<int64_t>(
        maxRoutes, std::count_if(routeAt.begin() + id * numColors,
                                 routeAt.begin() + (id + 1) * numColors,
                                 [](const Route *r) { return r != nullptr; }));
  // The rules at each core's ramp, which every send and receive looks up.
  rampRulesAt.assign(N + 1, 0);
  rampRules.clear();
  for (int64_t id = 0; id < N; ++id) {
    rampRulesAt[id] = int64_t(rampRules.size());
    for (int32_t color = 0; color < numColors; ++color) {
      int64_t slot = id * numColors + color;
      const Route *r = routeAt[slot];
      if (!r)
        continue;
      bool takesSends = r->in == Dir::Ramp,
           delivers = (r->outMask & dirBit(Dir::Ramp)) != 0;
      if (takesSends || delivers)
        rampRules.push_back({channelOf[slot], color, takesSends, delivers});
    }
  }
  rampRulesAt[N] = int64_t(rampRules.size());
  return checkSpareRouters();
}

void Network::reset(bool countLinks) {
  ports.assign(N, Ports());
  inboxes.assign(N, Inbox());
  visitedBy.assign(N, 0);
  totalMessages = totalLinkWords = latestArrival = 0;
  for (int d = 0; d < 4; ++d) {
    wordsOut[d].assign(countLinks ? N : 0, 0);
    wordsIn[d].assign(countLinks ? N : 0, 0);
  }
}

int32_t Network::channelColor(int32_t core, int32_t channel, bool send) const {
  // A core has a few rules at its ramp, however many routes the channel
  // has.
  for (int64_t i = rampRulesAt[core]; i < rampRulesAt[core + 1]; ++i) {
    const RampRule &rule = rampRules[i];
    if (rule.channel == channel && (send ? rule.takesSends : rule.delivers))
      return rule.color;
  }
  return -1;
}

bool Network::hasMessage(int32_t core, int32_t color) const {
  return llvm::any_of(inboxes[core],
                      [&](const Message &m) { return m.color == color; });
}

Message Network::takeMessage(int32_t core, int32_t color) {
  Inbox &box = inboxes[core];
  auto it =
      llvm::find_if(box, [&](const Message &m) { return m.color == color; });
  Message msg = std::move(*it);
  box.erase(it);
  return msg;
}

Expected<int64_t>
Network::inject(int32_t src, const Outgoing &o,
                function_ref<void(int32_t, int32_t, int64_t)> delivered) {
  int64_t words = o.words;
  int64_t occ = timing.occupancy(words);
  Ports &sp = ports[src];
  int64_t start = std::max(o.time, sp.rampOut);
  sp.rampOut = start + occ;
  ++totalMessages;
  ++messageSerial;

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
    const Route *r = routeAt[int64_t(h.core) * numColors + o.color];
    if (!r)
      return err(origin() + " reaches " + where(h.core) +
                 ", which has no route for it");
    if (r->in != h.from)
      return err(formatv("{0} arrives at {1} from {2} but its route expects "
                         "{3}",
                         origin(), where(h.core), dirName(h.from),
                         dirName(r->in)));
    if (visitedBy[h.core] == messageSerial)
      return err(origin() + " reaches " + where(h.core) +
                 " twice (routing loop)");
    visitedBy[h.core] = messageSerial;
    Ports &hp = ports[h.core];
    int64_t x = h.core % W, y = h.core / W;
    for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
      if (!(r->outMask & dirBit(d)))
        continue;
      int64_t nx = x + (d == Dir::East) - (d == Dir::West);
      int64_t ny = y + (d == Dir::South) - (d == Dir::North);
      if (nx < 0 || ny < 0 || nx >= W || ny >= H)
        return err(formatv("{0} leaves the grid at {1} going {2}", origin(),
                           where(h.core), dirName(d)));
      int64_t &link = hp.link[unsigned(d)];
      int64_t linkStart = std::max(h.time, link);
      int64_t hops = d == Dir::East    ? colHops[x]
                     : d == Dir::West  ? colHops[nx]
                     : d == Dir::South ? rowHops[y]
                                       : rowHops[ny];
      link = linkStart + occ;
      totalLinkWords += words * hops;
      if (!wordsOut[0].empty()) {
        wordsOut[unsigned(d) - 1][h.core] += words;
        wordsIn[unsigned(opposite(d)) - 1][ny * W + nx] += words;
      }
      // The skipped cores' links carry only this pair's traffic, so the
      // first link's reservation stands for all of them.
      work.push_back({int32_t(ny * W + nx), opposite(d),
                      linkStart + timing.hopCycles() * hops});
    }
    if (r->outMask & dirBit(Dir::Ramp)) {
      int64_t rampStart = std::max(h.time, hp.rampIn);
      hp.rampIn = rampStart + occ;
      int64_t arrival = rampStart + occ + timing.rampCycles();
      latestArrival = std::max(latestArrival, arrival);
      inboxes[h.core].push_back({arrival, o.color, o.elements, o.data});
      delivered(h.core, o.color, arrival);
    }
  }
  return start + occ;
}

} // namespace wafer::rt::emulator
