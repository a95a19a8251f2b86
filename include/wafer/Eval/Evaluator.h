//===- Evaluator.h - Host evaluation of tfm modules -------------*- C++ -*-===//
//
// Runs tfm ops on the host with the reference kernels. Used as the golden
// model (`wafer-run eval`), by the importer to learn the values of shape
// computations, by tfm-fold-shapes, and by tfm-raise-transformer to check a
// candidate subgraph's meaning on probe inputs.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_EVAL_EVALUATOR_H
#define WAFER_EVAL_EVALUATOR_H

#include "wafer/Eval/Kernels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>

namespace wafer::eval {

/// The most elements one result may have on the host (2^31 values held as
/// doubles: 16 GiB); larger ones are an error rather than an allocation that
/// fails.
constexpr int64_t kMaxHostElements = int64_t(1) << 31;

/// The kernel element kind of a tfm element type (f32, i64 or i1).
ElementKind kindOf(mlir::Type elementType);

/// A tensor from a dense attribute of a tfm element type.
Tensor tensorFromAttr(mlir::ElementsAttr attr);

/// A dense attribute of `type` holding `tensor`'s values.
mlir::DenseElementsAttr attrFromTensor(const Tensor &tensor,
                                       mlir::RankedTensorType type);

/// Evaluates one op from its operands' values. Fails (without a diagnostic)
/// for ops that need more than their operands (tfm.weight, ops not of the
/// tfm dialect), for gathers with an index out of range, integer division
/// by zero and results above kMaxHostElements.
mlir::FailureOr<Tensor> evaluateOp(mlir::Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands);

/// Supplies the value of a tfm.weight.
using WeightLoader =
    std::function<llvm::Expected<Tensor>(mlir::Operation *weightOp)>;

/// Evaluates the body of `function` (a func.func of tfm ops) on `inputs`,
/// keyed by the arguments' `tfm.name` (or `arg<i>`); results are keyed by the
/// function's `tfm.output_names` (or `out<i>`). Errors name the input or op.
llvm::Expected<std::map<std::string, Tensor>>
evaluateFunction(mlir::Operation *function,
                 const std::map<std::string, Tensor> &inputs,
                 const WeightLoader &loadWeight);

} // namespace wafer::eval

#endif // WAFER_EVAL_EVALUATOR_H
