//===- TfmOps.h - Transformer graph dialect ---------------------*- C++ -*-===//
#ifndef WAFER_DIALECT_TFM_TFMOPS_H
#define WAFER_DIALECT_TFM_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfm/TfmDialect.h.inc"

#define GET_OP_CLASSES
#include "tfm/TfmOps.h.inc"

namespace wafer::tfm {
/// The numpy broadcast of two shapes, or failure when they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);
} // namespace wafer::tfm

#endif // WAFER_DIALECT_TFM_TFMOPS_H
