//===- RunInputs.h - run --init and --check ---------------------*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_RUN_RUNINPUTS_H
#define WAFER_TOOLS_WAFER_RUN_RUNINPUTS_H

#include "wafer/Runtime/NDArray.h"
#include "wafer/Runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace wafer {

/// Inputs for the model: zeros, or uniform values from the seed (raw 64-bit
/// Mersenne Twister, the same on every platform): floats in [-1, 1), token
/// ids over the embedding's rows; the inputs the program was compiled with
/// bound (Program::boundInputs) hold those values. Shapes are those of
/// `imported` (the graph as imported) when given, so the host evaluator
/// takes them too; else the program's.
rt::NDArrayMap makeInputs(const rt::Program &program, mlir::ModuleOp imported,
                          bool random, uint64_t seed);

/// --check: every output of a run against the host evaluator's on the same
/// inputs, relative to the reference's largest magnitude; prints one line
/// per output, and errs at the first above `tolerance`.
llvm::Error checkOutputs(mlir::ModuleOp imported, llvm::StringRef modelPath,
                         const rt::NDArrayMap &inputs,
                         const rt::NDArrayMap &outputs, double tolerance);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_RUN_RUNINPUTS_H
