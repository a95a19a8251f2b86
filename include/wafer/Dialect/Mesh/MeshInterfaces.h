//===- MeshInterfaces.h - What communicating mesh ops tell ------*- C++ -*-===//
//
// The answers of CommunicatingOpInterface (MeshInterfaces.td): the message
// paths, working buffers and allreduces of a mesh op on a grid.
// Implemented next to the ops (dialects/mesh/MeshCommunication.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_DIALECT_MESH_MESHINTERFACES_H
#define WAFER_DIALECT_MESH_MESHINTERFACES_H

#include "wafer/CostModel/CostModel.h"
#include "wafer/Runtime/Fabric.h"
#include "wafer/Runtime/TimingModel.h"

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace wafer {

/// What a channel carries in an op's algorithm: the lowering finds the
/// op's channels by role, never by position.
enum class ChannelRole {
  ShiftA,    ///< MeshGEMM/Cannon and allgather: A's ring along x.
  ShiftB,    ///< ... and B's ring along y.
  ForwardA,  ///< SUMMA: A's blocks moving east,
  BackwardA, ///< ... west,
  ForwardB,  ///< B's moving south,
  BackwardB, ///< ... north.
  Ring,      ///< A ring shift (ring allreduce, prefill keys, relayout).
  TreeLevel, ///< One level of a K-tree (or the pipeline's chain).
  Broadcast, ///< The K-tree's broadcast of the result.
  HopIn,     ///< One hop towards position 0 (relayed trees, KV shift).
  HopOut,    ///< One hop away from position 0 (relayed broadcast).
};

/// One routing channel's paths: the cores one kind of message travels
/// between.
struct ChannelFamily {
  ChannelRole role = ChannelRole::Ring;
  /// The K-tree level of a TreeLevel family.
  unsigned level = 0;
  /// Unique per path set: ops with equal names share a channel and colors.
  std::string name;
  rt::Axis axis = rt::Axis::X;
  std::vector<rt::LinePath> paths;
  /// Color of each path, relative to the family's first color.
  std::vector<int32_t> colors;
  int32_t numColors = 0;
};

/// What a working buffer holds in an op's algorithm.
enum class BufferRole {
  OwnA, OwnB,     ///< GEMM: copies of operands other ops read too.
  NextA, NextB,   ///< ... the ring shift's arriving tiles.
  PanelA, PanelB, ///< ... gathered panels (allgather) or broadcast blocks
                  ///< (SUMMA).
  BlockA, BlockB, ///< ... the block pair an allgather multiplies.
  Passing,        ///< Ring allreduce and relayout: the tile passed on,
  Arriving,       ///< ... and the one arriving.
  Partial,        ///< K-tree: a received partial.
  SumOfSquares,   ///< rms_norm: one sum of squares per row.
  Outgoing,       ///< KV shift: the token passed up,
  Incoming,       ///< ... and the one arriving from below.
  KeysValues,     ///< Prefill attention: the keys and values passed round,
  KeysValuesNext, ///< ... the ones arriving,
  MaxAndSum,      ///< ... the running max and sum per query.
  Scores,         ///< Decode attention: scores of the local keys,
  Max,            ///< ... their max per query head,
  Sum,            ///< ... and their sum.
};

/// Whether an allreduce's messages arrive in buffers of the role (those
/// addAllreduceScratch adds: the ring's two, the tree's partial).
inline bool receivesAllreduce(BufferRole role) {
  return role == BufferRole::Passing || role == BufferRole::Arriving ||
         role == BufferRole::Partial;
}

/// A working buffer of one op, named `<op tag><suffix()>` by the lowering.
struct ScratchBuffer {
  BufferRole role;
  /// Which of the op's allreduces it serves (AllreduceUse::messageElements).
  unsigned message = 0;
  int64_t elements = 0;

  /// The buffer's name after the op's tag, e.g. "_a_next" or "_partial1".
  std::string suffix() const;
  /// Its element type for an op computing in `opElement`: f32 for running
  /// softmax statistics (a sum over thousands of keys needs more than f16's
  /// 11 bits), otherwise the op's.
  mlir::Type elementType(mlir::Type opElement) const;
};

/// Runs of logical columns an allreduce along x sums apart: `count`
/// segments from lx = 0 of `columns` columns each, the last of
/// `lastColumns` (at most `columns`); the columns past them take no part.
/// Attention over lanes sums each KV head's partial scores only over the
/// columns that hold its lanes (the paper's ReduceAdd of Q x K^T along X
/// into a distributed score matrix).
struct AxisSegments {
  int64_t columns = 1, count = 1, lastColumns = 1;

  /// The columns the segments cover.
  int64_t used() const { return (count - 1) * columns + lastColumns; }
};

/// How an op combines values across a grid axis with an allreduce
/// (mesh.gemv, mesh.rms_norm, decode mesh.attention).
struct AllreduceUse {
  bool alongX = false;
  mesh::AllreduceAttr allreduce;
  bool relayed = false;
  /// Elements per core of each allreduce the op runs, in order.
  std::vector<int64_t> messageElements;
  /// The messages combined along the other axis (decode attention's lane
  /// scores, summed over a row of cores before the softmax along y).
  std::vector<unsigned> crossMessages;

  /// The messages along x run within these segments (never with the ring
  /// or a relayed tree).
  std::optional<AxisSegments> segments;

  bool messageAlongX(unsigned message) const {
    return llvm::is_contained(crossMessages, message) ? !alongX : alongX;
  }
  /// The segments of the trees along x (`x`) or y (never cut).
  std::optional<AxisSegments> segmentsAlong(bool x) const {
    return x ? segments : std::nullopt;
  }
  /// The positions a tree along x (`x`) or y reduces over: the grid's
  /// extent along it, or the widest segment's.
  int64_t extentAlong(bool x, mesh::GridAttr grid) const;
  int64_t extent(unsigned message, mesh::GridAttr grid) const {
    return extentAlong(messageAlongX(message), grid);
  }
  /// The levels of the deepest of the trees along x (`x`) or y (K-tree or
  /// pipeline): the channel of their join comes after them. A narrower
  /// tree may be the deeper (ktreeLevels is not monotonic in n).
  unsigned treeDepthAlong(bool x, mesh::GridAttr grid) const;
  unsigned treeDepth(unsigned message, mesh::GridAttr grid) const {
    return treeDepthAlong(messageAlongX(message), grid);
  }
};

/// Elements of the local tile every core holds of a distributed value.
int64_t localElements(mlir::Value distributed, mesh::GridAttr grid);

/// The interface's answers for any op: none when the op does not
/// communicate.
std::vector<ChannelFamily> getChannelFamilies(mlir::Operation *op,
                                              mesh::GridAttr grid,
                                              bool interleave);
std::vector<ScratchBuffer> scratchBuffers(mlir::Operation *op,
                                          mesh::GridAttr grid);
std::optional<AllreduceUse> getAllreduceUse(mlir::Operation *op,
                                            mesh::GridAttr grid);

} // namespace wafer

#include "mesh/MeshInterfaces.h.inc"

#endif // WAFER_DIALECT_MESH_MESHINTERFACES_H
