//===- RaiseMatchers.h - Helpers of tfm-raise-transformer -------*- C++ -*-===//
//
// Analysis only (nothing here rewrites IR): constant values, and probing a
// data-movement subgraph by evaluating it on an index tensor to learn which
// input element each output element holds.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_PASSES_TFM_RAISEMATCHERS_H
#define WAFER_PASSES_TFM_RAISEMATCHERS_H

#include "wafer/Eval/Kernels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <tuple>

namespace wafer::raise {

/// The value of a tfm.constant.
std::optional<eval::Tensor> constantValue(mlir::Value v);

/// The value of a one-element tfm.constant.
std::optional<double> scalarConstant(mlir::Value v);

/// The shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

/// Evaluates the subgraph computing `root` from `leaf` with `leaf` set to
/// `input`. Only data-movement and sign ops (reshape, expand, transpose,
/// slice, concat, gather, neg) whose other operands are constants may lie
/// in between, and with `arithmetic` also mul, add and sub; otherwise (or
/// past `maxOps` ops) there is no answer.
std::optional<eval::Tensor> probe(mlir::Value root, mlir::Value leaf,
                                  const eval::Tensor &input, int maxOps = 32,
                                  bool arithmetic = false);

/// For probes: a tensor of `shape` holding 1, 2, 3, ... (so a probe result
/// holds each element's source index + 1, negated where the subgraph negates;
/// 0 marks no source). Empty when f32 cannot hold the indices exactly.
std::optional<eval::Tensor> indexProbe(llvm::ArrayRef<int64_t> shape);

/// The data-movement input `v` is computed from: follows ops of the kind
/// `probe` accepts, through their one non-constant operand, and returns
/// every value met on the way (v first).
llvm::SmallVector<mlir::Value> dataMovementChain(mlir::Value v);

/// A rotation's tables in tfm.rope's full-width form (f32), broadcast
/// dimensions collapsed.
struct RotationTables {
  mlir::DenseElementsAttr cos, sin;
};

/// A rotary embedding found by matchRotation: `root` = tfm.rope(input,
/// cos, sin).
struct Rotation {
  mlir::Value input;
  RotationTables tables;
  bool interleaved = false;
};

/// What matchRotation found for rotate-half tables, by their constants and
/// the rotated type (none: not a rotation). A model's layers share their
/// tables, and checking them is most of raising a long prompt's RoPE (2^19
/// values per table at 4096 tokens).
struct RotationCache {
  llvm::DenseMap<std::tuple<mlir::Attribute, mlir::Attribute, mlir::Type>,
                 std::optional<RotationTables>>
      rotateHalf;
};

/// Whether `root` is a rotary embedding of one value: computed from that
/// value and constants by data movement, mul, add and sub only, and, as a
/// linear map probed on basis inputs and confirmed on a pseudo-random one,
/// a rotation of each pair of the last axis (halves or adjacent pairs) by a
/// per-element angle (cos^2 + sin^2 = 1, the same for both members of a
/// pair; all zero at position 0 of a one-token prompt). Recognises the
/// meaning, not an op sequence; up to 2^22 values, since probing evaluates
/// the subgraph on whole tensors. PyTorch's export of LLaMA's rotate-half
/// (`x * cos + cat(-x[.., D/2:], x[.., :D/2]) * sin`, constant tables) is
/// recognised by its ops first, at any size.
std::optional<Rotation> matchRotation(mlir::Value root, RotationCache &cache,
                                      int maxOps = 64);

} // namespace wafer::raise

#endif // WAFER_PASSES_TFM_RAISEMATCHERS_H
