//===- RaisePatterns.h - Rewrites of tfm-raise-transformer ------*- C++ -*-===//
//
// What the pass's pattern files share: operand and parameter tests, the
// replacement of an anchor by its raised op, and the rewrites of the
// projections (RaiseProjections.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_TFM_RAISEPATTERNS_H
#define WAFER_PASSES_TFM_RAISEPATTERNS_H

#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/IR/PatternMatch.h"

namespace wafer::raise {

/// The operand pair of a commutative binary op, in both orders.
template <typename OpTy>
llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>
operandOrders(mlir::Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op)
    return {};
  return {{op.getLhs(), op.getRhs()}, {op.getRhs(), op.getLhs()}};
}

inline bool isWeight(mlir::Value v) {
  return bool(v.getDefiningOp<tfm::WeightOp>());
}

inline bool isParameter(mlir::Value v) {
  return isWeight(v) || bool(v.getDefiningOp<tfm::ConstantOp>());
}

/// Replaces `anchor` by the raised op `op`.
mlir::LogicalResult raised(mlir::PatternRewriter &rewriter,
                           mlir::Operation *anchor, mlir::Operation *op);

/// tfm.embed: a gather of rows of a weight.
mlir::LogicalResult raiseEmbed(tfm::GatherOp gather, mlir::PatternRewriter &b);
/// tfm.linear: x times a weight, or times its transpose.
mlir::LogicalResult raiseLinear(tfm::MatMulOp matmul, mlir::PatternRewriter &b);
/// A fused projection's part: the linear of a range of the weight.
mlir::LogicalResult raiseProjectionPart(tfm::SliceOp slice,
                                        mlir::PatternRewriter &b);

} // namespace wafer::raise

#endif // WAFER_PASSES_TFM_RAISEPATTERNS_H
