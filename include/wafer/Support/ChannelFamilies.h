//===- ChannelFamilies.h - Message paths of mesh ops ------------*- C++ -*-===//
//
// Helpers over the channel families and allreduces that communicating mesh
// ops report (CommunicatingOpInterface, wafer/Dialect/Mesh/MeshInterfaces.h):
// mesh-allocate-routes colors the families and convert-mesh-to-core builds
// the channels from them, so both see the same paths.
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
