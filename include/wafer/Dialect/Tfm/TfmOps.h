//===- TfmOps.h - Transformer graph dialect ---------------------*- C++ -*-===//
#ifndef WAFER_DIALECT_TFM_TFMOPS_H
#define WAFER_DIALECT_TFM_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "tfm/TfmDialect.h.inc"

#define GET_OP_CLASSES
#include "tfm/TfmOps.h.inc"

namespace wafer::tfm {
/// The numpy broadcast of two shapes, or failure when they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// numpy.matmul's result shape, or failure when the operands do not agree.
mlir::FailureOr<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The shape left after reducing `axes` (non-negative).
llvm::SmallVector<int64_t> reduceShape(llvm::ArrayRef<int64_t> shape,
                                       llvm::ArrayRef<int64_t> axes,
                                       bool keepdims);

/// How many elements ONNX Range(start, limit, delta) makes (0 for an empty
/// range, -inf included), or nullopt when delta is 0 or the length is NaN,
/// +inf or over 2^40.
std::optional<int64_t> rangeLength(double start, double limit, double delta);

/// How many elements a normalised slice start:end:step takes.
int64_t sliceLength(int64_t start, int64_t end, int64_t step);

/// One contiguous range [start, end) of one axis.
struct AxisRange {
  int64_t axis, start, end;
};
/// What `slice` takes when it keeps every axis whole but one, and of that
/// one a non-empty range with step 1 (the parts of a fused projection);
/// nullopt for any other slice.
std::optional<AxisRange> axisRangeOf(SliceOp slice);
/// The slice of `input` that keeps every axis whole but `axis`, of which it
/// takes start:end:step (normalised as SliceOp's verifier wants them).
SliceOp createAxisSlice(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value input, int64_t axis, int64_t start,
                        int64_t end, int64_t step = 1);

/// The name by which `function`'s argument `index` is given: its tfm.name
/// (the ONNX graph input), or input<index> in a module written by hand.
/// The bundle, the host evaluator and --init all name inputs by it.
std::string inputName(mlir::func::FuncOp function, unsigned index);
/// The name of result `index`: its tfm.output_names entry, or
/// output<index>.
std::string outputName(mlir::func::FuncOp function, unsigned index);

/// ONNX Gather's result shape for a non-negative axis.
llvm::SmallVector<int64_t> gatherShape(llvm::ArrayRef<int64_t> shape,
                                       llvm::ArrayRef<int64_t> indices,
                                       int64_t axis);
} // namespace wafer::tfm

#endif // WAFER_DIALECT_TFM_TFMOPS_H
