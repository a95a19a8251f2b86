//===- MeshInterfaces.h - What communicating mesh ops tell ------*- C++ -*-===//
//
// The answers of CommunicatingOpInterface (MeshInterfaces.td): the message
// paths, working buffers and allreduces of a mesh op on a grid.
// Implemented next to the ops (dialects/mesh/MeshCommunication.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_DIALECT_MESH_MESHINTERFACES_H
#define WAFER_DIALECT_MESH_MESHINTERFACES_H

#include "wafer/Runtime/Fabric.h"

#include "mlir/IR/OpDefinition.h"

#include <optional>
#include <string>
#include <vector>

namespace wafer {

/// One routing channel's paths: the cores one kind of message travels
/// between.
struct ChannelFamily {
  /// Unique per path set: ops with equal names share a channel and colors.
  std::string name;
  rt::Axis axis = rt::Axis::X;
  std::vector<rt::LinePath> paths;
  /// Color of each path, relative to the family's first color.
  std::vector<int32_t> colors;
  int32_t numColors = 0;
};

/// A working buffer of one op, named `<op tag><suffix>` by the lowering.
struct ScratchBuffer {
  std::string suffix;
  int64_t elements = 0;
};

/// How an op combines values across a grid axis with an allreduce
/// (mesh.gemv, mesh.rms_norm, decode mesh.attention).
struct AllreduceUse {
  bool alongX = false;
  mesh::AllreduceAttr allreduce;
  bool relayed = false;
  /// Elements per core of each allreduce the op runs, in order.
  std::vector<int64_t> messageElements;
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
