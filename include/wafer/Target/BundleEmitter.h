//===- BundleEmitter.h - core.program to runtime program --------*- C++ -*-===//
#ifndef WAFER_TARGET_BUNDLEEMITTER_H
#define WAFER_TARGET_BUNDLEEMITTER_H

#include "wafer/Dialect/Core/CoreOps.h"
#include "wafer/Runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace wafer {

/// Translates the module's core.program into the runtime's program, loading
/// the weights it refers to so the bundle is self-contained. Without
/// `loadWeights` the weights and constants are left out (their data empty): a
/// program only the timing and analytic modes can run, which read no data.
/// Values that would take more than `maxValueBytes` as a bundle stores them
/// (rt::kMaxBundleBytes: a bundle could not hold them) are an error, found
/// from the weights' sizes before any weight is read.
llvm::Expected<rt::Program>
buildRuntimeProgram(mlir::ModuleOp module, bool loadWeights = true,
                    uint64_t maxValueBytes = UINT64_MAX);

/// Registers the `--emit-bundle` and `--dump-bundle` translations.
void registerBundleTranslations();

} // namespace wafer

#endif // WAFER_TARGET_BUNDLEEMITTER_H
