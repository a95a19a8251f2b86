//===- Passes.h - All of wafer's passes -------------------------*- C++ -*-===//
#ifndef WAFER_PASSES_PASSES_H
#define WAFER_PASSES_PASSES_H

#include "wafer/Dialect/Core/CoreOps.h"
#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Passes/CompileOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace wafer {

// Each generated file undefines the macro it reads, so define it per file.
#define GEN_PASS_DECL
#include "tfm/Passes.h.inc"
#define GEN_PASS_DECL
#include "conversion/Passes.h.inc"
#define GEN_PASS_DECL
#include "mesh/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "conversion/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "mesh/Passes.h.inc"

/// Adds tfm-bind-position-inputs, tfm-fold-shapes, tfm-raise-transformer,
/// tfm-keep-layers (when options.layers > 0), convert-tfm-to-mesh,
/// mesh-plan-kv-cache, mesh-relayout-phases (when options.handoffCapacity > 0),
/// mesh-place-interleave, mesh-choose-ktree, mesh-allocate-routes,
/// mesh-check-memory and convert-mesh-to-core to `pm`.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompileOptions &options);
/// Its grid-independent front: tfm-bind-position-inputs, tfm-fold-shapes,
/// tfm-raise-transformer and tfm-keep-layers.
void buildRaisePipeline(mlir::OpPassManager &pm, const CompileOptions &options);
/// The rest, from convert-tfm-to-mesh on.
void buildPlanPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// The rewrite patterns of tfm-raise-transformer (embed, linear, rms_norm,
/// swiglu, silu, rope, attention), for the greedy driver.
void populateTfmRaiseTransformerPatterns(mlir::RewritePatternSet &patterns);

/// Registers the named pipeline `wafer-compile`.
void registerPipelines();

} // namespace wafer

#endif // WAFER_PASSES_PASSES_H
