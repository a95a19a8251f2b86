//===- RouteAllocation.h - Routing colors of a mesh program -----*- C++ -*-===//
//
// Which routing colors every communicating mesh op's message paths take,
// and which GEMV trees must relay their messages hop by hop to fit the
// target's routes per core. mesh-allocate-routes applies it to the plan;
// mesh-choose-ktree and convert-tfm-to-mesh's `gemm=auto` apply it to
// copies of candidate plans (PlanPrice.h), so that they never choose a K
// or an algorithm whose routes do not fit.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_ROUTEALLOCATION_H
#define WAFER_SUPPORT_ROUTEALLOCATION_H

#include "wafer/Dialect/Mesh/MeshOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace wafer {

/// Where the colors some core needs first exceed the budget.
struct RouteOverflow {
  mlir::Operation *op = nullptr;
  int64_t needed = 0, x = 0, y = 0;
};

/// Gives every communicating op of `module` (whose K-trees have their K)
/// its base colors (the `colors` attribute), in program order. Paths that
/// share a core never share a color; ops with the same paths share colors.
/// A GEMV tree that does not fit is marked `relayed` when that needs fewer
/// colors; if an op still does not fit, every tree is relayed and the
/// colors assigned again. When nothing fits, returns the overflow that came
/// closer to `routesPerCore` (the ops' attributes are then partial).
std::optional<RouteOverflow> allocateRoutes(mlir::ModuleOp module,
                                            mesh::GridAttr grid,
                                            int64_t routesPerCore);

} // namespace wafer

#endif // WAFER_SUPPORT_ROUTEALLOCATION_H
