//===- PlanPrice.h - What a whole routed plan costs -------------*- C++ -*-===//
//
// The planner's choices (mesh-choose-ktree's K, convert-tfm-to-mesh's
// `gemm=auto` and `prefill-heads=auto`) compare whole plans, each routed as
// mesh-allocate-routes will (a tree that does not fit is relayed, which can
// cost it hundreds of times more) and priced as the analytic mode will, by
// adding up the ops' estimates.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_PLANPRICE_H
#define WAFER_SUPPORT_PLANPRICE_H

#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace wafer {

/// A routed plan's cost: whether its routes fit the target (else the colors
/// its busiest core needs) and its buffers the SRAM, and the sum of its
/// mesh ops' cycle estimates.
struct PlanPrice {
  bool routed = false, fitsMemory = false;
  int64_t colorsNeeded = 0;
  int64_t cycles = 0;

  bool fits() const { return routed && fitsMemory; }
};

/// Routes `module` (allocateRoutes: it sets the ops' `colors` and
/// `relayed`, so give it a copy when only the price is wanted), plans its
/// memory and adds up its ops' estimates under the module's placement.
PlanPrice priceRoutedPlan(mlir::ModuleOp module, mesh::GridAttr grid,
                          const rt::Target &target);

/// Closes every K-tree of `module` whose K is open with one K: of K = 1 up
/// to a binary tree's depth on the widest, the one whose routed plan
/// (priceRoutedPlan, on a copy) costs the fewest cycles among those that
/// fit the routes and the SRAM, or, when none does, the one whose routes
/// came closest (the smaller K on ties). Returns that plan's price, or nothing
/// when no K-tree is open.
std::optional<PlanPrice> chooseOpenKtreeK(mlir::ModuleOp module,
                                          mesh::GridAttr grid,
                                          const rt::Target &target);

} // namespace wafer

#endif // WAFER_SUPPORT_PLANPRICE_H
