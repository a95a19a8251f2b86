//===- ChannelFamilies.h - Message paths of mesh ops ------------*- C++ -*-===//
//
// The message paths a communicating mesh op needs, grouped in families that
// become one routing channel each. mesh-allocate-routes colors them and
// convert-mesh-to-core builds the channels from them, so both see the same
// paths.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_CHANNELFAMILIES_H
#define WAFER_SUPPORT_CHANNELFAMILIES_H

#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/Fabric.h"

#include <optional>
#include <string>
#include <vector>

namespace wafer {

struct ChannelFamily {
  /// Unique per path set: ops with equal names share a channel and colors.
  std::string name;
  rt::Axis axis = rt::Axis::X;
  std::vector<rt::LinePath> paths;
  /// Color of each path, relative to the family's first color.
  std::vector<int32_t> colors;
  int32_t numColors = 0;
};

/// The families of a mesh.gemm (meshgemm, cannon: x ring, y ring; summa:
/// east, west, south, north neighbour hops) or a mesh.gemv (one per tree
/// level, then the broadcast; ring: the y ring; x-axis families for the
/// transposed orientation; relayed trees: hops in, hops out); empty for
/// other ops.
std::vector<ChannelFamily> getChannelFamilies(mlir::Operation *op,
                                              mesh::GridAttr grid,
                                              bool interleave);

/// How an op combines values across a grid axis with an allreduce
/// (mesh.gemv, mesh.rms_norm, mesh.attention).
struct AllreduceUse {
  bool alongX = false;
  mesh::AllreduceAttr allreduce;
  bool relayed = false;
  /// Elements per core of each allreduce the op runs, in order.
  std::vector<int64_t> messageElements;
};
std::optional<AllreduceUse> getAllreduceUse(mlir::Operation *op,
                                            mesh::GridAttr grid);

/// Fails, naming the first op and `pass`, when a K-tree in `root` still
/// has an open K (mesh-choose-ktree has not run).
mlir::LogicalResult requireChosenKtrees(mlir::Operation *root,
                                        mesh::GridAttr grid,
                                        llvm::StringRef pass);

/// For every index of an axis of n cores, adds the colors (offset by
/// baseColor) the family's paths use there.
void addColorsPerIndex(const ChannelFamily &family, int32_t baseColor,
                       std::vector<llvm::SmallVector<int32_t>> &perIndex);

} // namespace wafer

#endif // WAFER_SUPPORT_CHANNELFAMILIES_H
