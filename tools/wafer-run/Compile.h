//===- Compile.h - tfm module to runtime program ----------------*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_COMPILE_H
#define WAFER_TOOLS_WAFER_RUN_COMPILE_H

#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace wafer {

/// Compiles `module` (in place) with buildCompilePipeline and builds the
/// runtime program (without weight data unless `weights`). The first error
/// diagnostic becomes the error, as "<file>: node '<name>': <message>"; a
/// plan that does not fit the cores' memory also names the smallest square
/// grid it fits. `maxValueBytes` as buildRuntimeProgram's.
llvm::Expected<rt::Program> compileModule(mlir::ModuleOp module,
                                          const CompileOptions &options,
                                          bool weights = true,
                                          uint64_t maxValueBytes = UINT64_MAX);

/// Whether `module` fits the memory of the grid in `options` (the pipeline
/// up to mesh-check-memory, on a copy; from convert-tfm-to-mesh on when
/// `raised`: the module went through buildRaisePipeline already).
bool planFits(mlir::ModuleOp module, CompileOptions options,
              bool raised = false);

/// A rate (tokens/s) for the reports: one decimal, or three significant
/// digits below 0.1, where one decimal would print a slow target's rate as
/// 0.0.
std::string formatRate(double perSecond);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_COMPILE_H
