//===- MeshOps.h - Distributed tensors on a core grid -----------*- C++ -*-===//
#ifndef WAFER_DIALECT_MESH_MESHOPS_H
#define WAFER_DIALECT_MESH_MESHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "wafer/Runtime/Program.h"
#include "wafer/Runtime/RowShapes.h"
#include "wafer/Runtime/Target.h"

#include "mesh/MeshDialect.h.inc"
#include "mesh/MeshEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mesh/MeshAttrs.h.inc"

#include "wafer/Dialect/Mesh/MeshInterfaces.h"

#define GET_OP_CLASSES
#include "mesh/MeshOps.h.inc"

namespace wafer::mesh {

/// The grid and target an op is compiled for: the `mesh.grid` and
/// `mesh.target` attributes of the closest enclosing op that has them.
GridAttr lookupGrid(mlir::Operation *op);
TargetAttr lookupTarget(mlir::Operation *op);

/// The layout of a distributed tensor type, or null.
LayoutAttr getLayout(mlir::Type type);

/// Whether two dimensions of distributed tensors (of one length and block
/// count) are split into the same blocks: both balanced, both ceil-sized,
/// or divided evenly, where the two are the same.
bool sameBlocks(mlir::Type a, size_t da, mlir::Type b, size_t db);

/// Places every distributed value under `root` on INTERLEAVE (one placement
/// for a whole module, so producers and consumers keep agreeing).
void placeInterleaved(mlir::Operation *root);
/// Whether any value under `root` is placed on INTERLEAVE.
bool isInterleaved(mlir::Operation *root);

/// Conversions between the attribute and the runtime's description.
TargetAttr getTargetAttr(mlir::MLIRContext *context,
                         const rt::Target &target);
rt::Target getRuntimeTarget(TargetAttr attr);

} // namespace wafer::mesh

#endif // WAFER_DIALECT_MESH_MESHOPS_H
