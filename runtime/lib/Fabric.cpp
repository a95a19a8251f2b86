//===- Fabric.cpp - Logical rings, K-trees and route construction ---------===//
#include "wafer/Runtime/Fabric.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace wafer::rt {

InterleaveNeighbors interleave(int64_t index, int64_t n) {
  InterleaveNeighbors r;
  if (index % 2 == 0) {
    r.recv = std::max<int64_t>(index - 2, 0);
    r.send = std::min<int64_t>(index + 2, n - 1);
  } else {
    r.recv = std::min<int64_t>(index + 2, n - 1);
    r.send = std::max<int64_t>(index - 2, 0);
  }
  if (index == 0)
    r.recv = 1;
  if (index == n - 1) {
    if (n % 2 == 0)
      r.recv = n - 2;
    else
      r.send = n - 2;
  }
  return r;
}

std::vector<int64_t> ringOrder(int64_t n, bool interleaved) {
  std::vector<int64_t> ring(std::max<int64_t>(n, 0));
  if (!interleaved || n < 3) {
    for (int64_t i = 0; i < n; ++i)
      ring[i] = i;
    return ring;
  }
  int64_t p = 0;
  for (int64_t l = 0; l < n; ++l) {
    ring[l] = p;
    p = interleave(p, n).send;
  }
  return ring;
}

std::vector<int64_t> ringPositions(int64_t n, bool interleaved) {
  std::vector<int64_t> ring = ringOrder(n, interleaved);
  std::vector<int64_t> pos(ring.size());
  for (size_t l = 0; l < ring.size(); ++l)
    pos[ring[l]] = int64_t(l);
  return pos;
}

std::vector<KTreeLevel> ktreeLevels(int64_t n, int64_t k) {
  std::vector<KTreeLevel> levels;
  if (n <= 1 || k <= 0)
    return levels;
  // Smallest g with g^k >= n; the power saturates at n to avoid overflow.
  auto reaches = [&](int64_t g) {
    int64_t p = 1;
    for (int64_t i = 0; i < k && p < n; ++i)
      p = p > n / g ? n : p * g;
    return p >= n;
  };
  int64_t g = 2;
  while (!reaches(g))
    ++g;
  for (int64_t stride = 1; stride < n && int64_t(levels.size()) < k;
       stride = stride > n / g ? n : stride * g)
    levels.push_back({stride, g});
  return levels;
}

int64_t ktreeRoot(int64_t n, bool centered) {
  return centered && n > 1 ? (n - 1) / 2 : 0;
}

std::vector<KTreeLevel> rootedTreeLevels(int64_t n, int64_t root, int64_t k) {
  return ktreeLevels(std::max(root + 1, n - 1 - root), k);
}

std::vector<LinePath> ringShiftPaths(int64_t n, bool interleaved) {
  std::vector<LinePath> paths;
  if (n <= 1)
    return paths;
  std::vector<int64_t> ring = ringOrder(n, interleaved);
  for (int64_t l = 0; l < n; ++l)
    paths.push_back({ring[l], {ring[(l + n - 1) % n]}});
  return paths;
}

std::vector<LinePath> ktreeLevelPaths(int64_t n, int64_t root,
                                      const KTreeLevel &level) {
  std::vector<LinePath> paths;
  // Position q of the left half is root - q, of the right root + 1 + q.
  for (auto [size, sign, origin] :
       {std::tuple(root + 1, int64_t(-1), root),
        std::tuple(n - 1 - root, int64_t(1), root + 1)})
    for (int64_t q = level.stride; q < size; q += level.stride)
      if ((q / level.stride) % level.groupSize != 0)
        paths.push_back(
            {origin + sign * q, {origin + sign * (q - level.stride)}});
  return paths;
}

std::vector<LinePath> ktreeJoinPaths(int64_t n, int64_t root) {
  if (root + 1 >= n)
    return {};
  return {{root + 1, {root}}};
}

std::vector<LinePath> broadcastPaths(int64_t n, int64_t root) {
  if (n <= 1)
    return {};
  LinePath path{root, {}};
  for (int64_t p = 0; p < n; ++p)
    if (p != root)
      path.dsts.push_back(p);
  return {path};
}

std::vector<LinePath> neighborPaths(int64_t n, bool forward, bool interleaved) {
  std::vector<LinePath> paths;
  std::vector<int64_t> ring = ringOrder(n, interleaved);
  for (int64_t l = 0; l + 1 < n; ++l)
    paths.push_back(forward ? LinePath{ring[l], {ring[l + 1]}}
                            : LinePath{ring[l + 1], {ring[l]}});
  return paths;
}

namespace {

/// The closed interval of indices a path occupies.
std::pair<int64_t, int64_t> span(const LinePath &p) {
  int64_t lo = p.src, hi = p.src;
  for (int64_t d : p.dsts) {
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  return {lo, hi};
}

/// One router rule at one index of the axis.
struct Rule {
  int32_t color;
  Dir in;
  uint8_t outMask;
  bool operator<(const Rule &o) const {
    return std::tie(color, in, outMask) < std::tie(o.color, o.in, o.outMask);
  }
};

/// Calls visit(index, in, outMask) for every core the path crosses: from
/// the source one way or (a multicast with destinations on both sides)
/// both ways.
template <typename Fn>
void forEachPathRule(const LinePath &p, Axis axis, Fn visit) {
  auto [lo, hi] = span(p);
  auto onward = [&](bool forward) {
    return axis == Axis::X ? (forward ? Dir::East : Dir::West)
                           : (forward ? Dir::South : Dir::North);
  };
  uint8_t fromSource = 0;
  for (bool forward : {false, true})
    if ((forward ? hi : lo) != p.src)
      fromSource |= dirBit(onward(forward));
  if (!fromSource)
    return;
  visit(p.src, Dir::Ramp, fromSource);
  for (bool forward : {false, true}) {
    int64_t far = forward ? hi : lo;
    if (far == p.src)
      continue;
    Dir from = opposite(onward(forward));
    int64_t step = forward ? 1 : -1;
    for (int64_t i = p.src + step; i != far; i += step) {
      uint8_t out = dirBit(onward(forward));
      if (llvm::is_contained(p.dsts, i))
        out |= dirBit(Dir::Ramp);
      visit(i, from, out);
    }
    visit(far, from, dirBit(Dir::Ramp));
  }
}

/// Splits a sorted index list into arithmetic progressions. A progression
/// starts with the first two remaining indices unless the third would not
/// follow them, in which case the first index stands alone (so {0, 1, 3, 5}
/// becomes {0}, {1, 3, 5} rather than {0, 1}, {3, 5}).
std::vector<Range> toProgressions(const std::vector<int64_t> &idx) {
  std::vector<Range> out;
  size_t i = 0;
  while (i < idx.size()) {
    if (i + 1 == idx.size() ||
        (i + 2 < idx.size() &&
         idx[i + 2] - idx[i + 1] != idx[i + 1] - idx[i])) {
      out.push_back({idx[i], idx[i], 1});
      ++i;
      continue;
    }
    int64_t step = idx[i + 1] - idx[i];
    size_t j = i + 1;
    while (j + 1 < idx.size() && idx[j + 1] - idx[j] == step)
      ++j;
    out.push_back({idx[i], idx[j], step});
    i = j + 1;
  }
  return out;
}

} // namespace

std::vector<int32_t> colorLinePaths(const std::vector<LinePath> &paths,
                                    int32_t &numColors) {
  std::vector<size_t> order(paths.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return span(paths[a]).first < span(paths[b]).first;
  });
  // busyUntil[c]: the highest index a path of color c occupies so far.
  std::vector<int64_t> busyUntil;
  std::vector<int32_t> colors(paths.size(), 0);
  for (size_t i : order) {
    auto [lo, hi] = span(paths[i]);
    size_t c = 0;
    while (c < busyUntil.size() && busyUntil[c] >= lo)
      ++c;
    if (c == busyUntil.size())
      busyUntil.push_back(hi);
    else
      busyUntil[c] = hi;
    colors[i] = int32_t(c);
  }
  numColors = int32_t(busyUntil.size());
  return colors;
}

std::vector<Route> buildRoutes(const std::vector<LinePath> &paths,
                               const std::vector<int32_t> &colors, Axis axis,
                               int64_t gridHeight, int64_t gridWidth,
                               int32_t baseColor) {
  int64_t extent = axis == Axis::X ? gridWidth : gridHeight;
  int64_t other = axis == Axis::X ? gridHeight : gridWidth;
  std::map<Rule, std::vector<int64_t>> indicesByRule;
  for (size_t i = 0; i < paths.size() && i < colors.size(); ++i)
    forEachPathRule(paths[i], axis, [&](int64_t index, Dir in, uint8_t out) {
      if (index >= 0 && index < extent)
        indicesByRule[{baseColor + colors[i], in, out}].push_back(index);
    });

  std::vector<Route> routes;
  Range full{0, other - 1, 1};
  for (auto &[rule, indices] : indicesByRule) {
    llvm::sort(indices);
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    for (const Range &r : toProgressions(indices)) {
      Route route;
      route.color = rule.color;
      route.in = rule.in;
      route.outMask = rule.outMask;
      route.cores = axis == Axis::X ? CoreSet{r, full} : CoreSet{full, r};
      routes.push_back(route);
    }
  }
  return routes;
}

int32_t maxColorsPerIndex(const std::vector<LinePath> &paths,
                          const std::vector<int32_t> &colors, int64_t n) {
  std::vector<std::vector<int32_t>> used(std::max<int64_t>(n, 0));
  for (size_t i = 0; i < paths.size() && i < colors.size(); ++i) {
    auto [lo, hi] = span(paths[i]);
    for (int64_t j = std::max<int64_t>(lo, 0); j <= hi && j < n; ++j)
      used[j].push_back(colors[i]);
  }
  int32_t best = 0;
  for (std::vector<int32_t> &c : used) {
    llvm::sort(c);
    best = std::max(best, int32_t(std::unique(c.begin(), c.end()) - c.begin()));
  }
  return best;
}

} // namespace wafer::rt
