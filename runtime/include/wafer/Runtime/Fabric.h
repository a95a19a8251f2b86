//===- Fabric.h - Logical rings, K-trees and route construction -*- C++ -*-===//
//
// Pure functions over one grid axis, shared by the compiler (placement and
// route allocation) and the emulator (logical coordinates). An axis has n
// cores at physical indices 0..n-1; "logical position" is the position on
// the axis' ring (interleaved or identity).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_FABRIC_H
#define WAFER_RUNTIME_FABRIC_H

#include "wafer/Runtime/Program.h"

#include <cstdint>
#include <vector>

namespace wafer::rt {

/// Paper Algorithm 1, verbatim: the physical index core `index` sends to and
/// receives from on an interleaved ring of n >= 3 cores.
struct InterleaveNeighbors {
  int64_t send = 0;
  int64_t recv = 0;
};
InterleaveNeighbors interleave(int64_t index, int64_t n);

/// ring[l] is the physical index of logical position l. With interleave and
/// n >= 3 the ring starts at 0 and follows Algorithm 1's send links, so
/// consecutive positions (cyclically) are at most 2 hops apart; otherwise the
/// identity.
std::vector<int64_t> ringOrder(int64_t n, bool interleaved);

/// The inverse of ringOrder: position[p] is the logical position of
/// physical index p.
std::vector<int64_t> ringPositions(int64_t n, bool interleaved);

/// One level of a K-tree allreduce over n logical positions. At this level
/// the members are the positions l with l % stride == 0; consecutive members
/// form groups of groupSize, reduced as a chain towards the group's first
/// member (its root): member number m = (l / stride) % groupSize receives
/// from l + stride (when m + 1 < groupSize and l + stride < n), adds, and
/// sends to l - stride (when m > 0).
struct KTreeLevel {
  int64_t stride = 1;
  int64_t groupSize = 1;
};

/// The levels of a K-tree over n positions: groupSize is the smallest g with
/// g^k >= n, strides 1, g, g^2, ...; at most k levels, none when n == 1.
std::vector<KTreeLevel> ktreeLevels(int64_t n, int64_t k);

/// Where the tree of an allreduce over n physical positions is rooted: in
/// the middle for the K-tree (`centered`), so that its reduction and its
/// broadcast each cross half the axis (the paper's "N hops" in all); at
/// position 0 for the pipeline, the paper's baseline. The tree is two
/// halves, positions root, root - 1, ..., 0 and root + 1, ..., n - 1, each
/// reduced towards its first position with the same levels; the right
/// half's root then hands its sum to the root (the join), which multicasts
/// the result both ways.
int64_t ktreeRoot(int64_t n, bool centered);
/// The levels both halves of a tree rooted at `root` use: those of the
/// larger half.
std::vector<KTreeLevel> rootedTreeLevels(int64_t n, int64_t root, int64_t k);

/// A message path along one axis: from physical index `src` to the cores in
/// `dsts` (a line multicast, one way or both ways from src).
struct LinePath {
  int64_t src = 0;
  std::vector<int64_t> dsts;
};

/// Paths of a logical ring shift: each position l sends to l - 1 (mod n).
/// Empty when n == 1.
std::vector<LinePath> ringShiftPaths(int64_t n, bool interleaved);
/// Paths of one level's chains in both halves of a tree over n physical
/// positions rooted at `root` (ktreeRoot): half position q sends to
/// q - stride.
std::vector<LinePath> ktreeLevelPaths(int64_t n, int64_t root,
                                      const KTreeLevel &level);
/// The join: root + 1 to root (none when the right half is empty).
std::vector<LinePath> ktreeJoinPaths(int64_t n, int64_t root);
/// One multicast from physical position `root` to every other position.
std::vector<LinePath> broadcastPaths(int64_t n, int64_t root);

/// Paths between consecutive logical positions, l -> l + 1 (forward) or
/// l + 1 -> l, at most 2 hops apart when interleaved, physical neighbours
/// otherwise: the hops of a message forwarded core by core in software.
std::vector<LinePath> neighborPaths(int64_t n, bool forward,
                                    bool interleaved = false);

/// Colors the paths so that two paths that share a core (endpoints
/// included) never share a color; greedy in order of the lowest core, which
/// is optimal for intervals. Returns the color of each path (0-based);
/// `numColors` receives how many were used.
std::vector<int32_t> colorLinePaths(const std::vector<LinePath> &paths,
                                    int32_t &numColors);

/// The router rules the colored paths need, for a family of paths laid
/// along `axis` (Axis::X: paths run along every row; Axis::Y: along every
/// column) of a gridHeight x gridWidth grid, with colors offset by
/// baseColor. Cores with identical rules are grouped into arithmetic
/// progressions, so the result has O(distinct rule patterns) entries, not
/// O(cores).
std::vector<Route> buildRoutes(const std::vector<LinePath> &paths,
                               const std::vector<int32_t> &colors,
                               Axis axis, int64_t gridHeight,
                               int64_t gridWidth, int32_t baseColor);

/// The largest number of distinct colors any single index of the axis uses
/// for these colored paths.
int32_t maxColorsPerIndex(const std::vector<LinePath> &paths,
                          const std::vector<int32_t> &colors, int64_t n);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_FABRIC_H
