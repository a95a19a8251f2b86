//===- Kernels.h - Reference tensor kernels for the host evaluator -*- C++ -*-===//
//
// Plain, readable implementations of every tfm operation on host tensors.
// They are the golden model of later stages, so clarity beats speed: loops
// over multi-indices, numpy/ONNX semantics, no MLIR dependency. Callers pass
// shapes that the tfm verifiers have already checked.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_EVAL_KERNELS_H
#define WAFER_EVAL_KERNELS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace wafer::eval {

/// Element types tfm tensors use.
enum class ElementKind { F32, I64, Bool };

/// A dense row-major tensor. Values of every kind are held as double: f32
/// tensors hold values already rounded to float (each kernel rounds its
/// result), i64 tensors hold integers (exact up to 2^53; larger magnitudes,
/// as in ONNX Slice's INT64_MAX ends, are only compared), Bool holds 0 or 1.
struct Tensor {
  ElementKind kind = ElementKind::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  Tensor(ElementKind kind, std::vector<int64_t> shape, double fill = 0.0);
  int64_t size() const { return int64_t(data.size()); }
  int64_t rank() const { return int64_t(shape.size()); }
};

/// Number of elements of a shape (1 for a scalar).
int64_t elementCount(llvm::ArrayRef<int64_t> shape);

/// Saturating conversion of a held value to an index (INT64_MAX-like values
/// stay representable).
int64_t toIndex(double value);

enum class UnaryFn { Neg, Sqrt, Reciprocal, Sigmoid, Exp, Cos, Sin, Tanh, Erf,
                     Abs, Relu, Silu, Not };
/// Element-wise; the result has the operand's kind.
Tensor unary(UnaryFn fn, const Tensor &x);

enum class BinaryFn { Add, Sub, Mul, Div, Pow, Max, Min, Mod, Equal, Less,
                      LessOrEqual, Greater, GreaterOrEqual, And, Or };
/// Element-wise with numpy broadcasting. Comparisons and And/Or give Bool;
/// the others give `lhs.kind`. Integer Div truncates toward zero, as ONNX.
Tensor binary(BinaryFn fn, const Tensor &lhs, const Tensor &rhs);

/// cond ? a : b with three-way numpy broadcasting.
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b);

/// Converts to `kind` (f32 rounds, i64 truncates toward zero, Bool is != 0).
Tensor cast(const Tensor &x, ElementKind kind);

/// ONNX MatMul: numpy.matmul semantics (1-D operands promoted, batch
/// dimensions broadcast). Accumulates in double.
Tensor matmul(const Tensor &a, const Tensor &b);

/// result.shape[i] = x.shape[perm[i]].
Tensor transpose(const Tensor &x, llvm::ArrayRef<int64_t> perm);

/// Same data, new shape (element counts agree).
Tensor reshape(const Tensor &x, llvm::ArrayRef<int64_t> shape);

/// numpy.broadcast_to(x, shape).
Tensor broadcastTo(const Tensor &x, llvm::ArrayRef<int64_t> shape);

/// Concatenation along `axis` (non-negative) of tensors of one kind.
Tensor concat(llvm::ArrayRef<Tensor> parts, int64_t axis);

/// One entry per dimension of x: element i of the result along dimension d
/// is x's element starts[d] + i * steps[d], for the count that stays on the
/// start side of ends[d] (Python slicing once starts/ends are normalised
/// into [-1, dim]; steps are nonzero, may be negative).
Tensor slice(const Tensor &x, llvm::ArrayRef<int64_t> starts,
             llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> steps);

/// ONNX Gather: result shape = x.shape[:axis] + indices.shape +
/// x.shape[axis+1:]; negative indices count from the end.
Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis);

enum class ReduceFn { Mean, Sum, Max, Min };
/// Reduces over `axes` (non-negative, sorted, unique); keepdims keeps them
/// as size-1 dimensions.
Tensor reduce(ReduceFn fn, const Tensor &x, llvm::ArrayRef<int64_t> axes,
              bool keepdims);

/// Softmax over `axis` (non-negative), computed stably (max subtracted).
Tensor softmax(const Tensor &x, int64_t axis);

/// ONNX Trilu on the last two dimensions: upper keeps j - i >= k, lower
/// keeps j - i <= k; other elements become 0.
Tensor trilu(const Tensor &x, bool upper, int64_t k);

/// ONNX Range: start, start+delta, ... stopping before limit.
Tensor range(ElementKind kind, double start, double limit, double delta);

// ---------------------------------------------------------------------------
// Raised transformer operations.
// ---------------------------------------------------------------------------

/// x / sqrt(mean(x^2 over the last axis) + epsilon) * weight, weight of
/// shape [x.shape.back()].
Tensor rmsNorm(const Tensor &x, const Tensor &weight, double epsilon);

/// Rotary embedding over the last axis of x (width D, even). cos and sin
/// broadcast to x's shape. Half convention (Hugging Face rotate_half):
///   y = x * cos + concat(-x[D/2:], x[:D/2]) * sin
/// Interleaved-pair convention (GPT-J / Meta):
///   y[2i]   = x[2i] * cos[2i]   - x[2i+1] * sin[2i]
///   y[2i+1] = x[2i+1] * cos[2i+1] + x[2i] * sin[2i+1]
Tensor rope(const Tensor &x, const Tensor &cos, const Tensor &sin,
            bool interleaved);

/// Scaled dot-product attention. q: [B, H, Lq, D]; k, v: [B, KVH, Lk, D]
/// with H a multiple of KVH (query head h reads KV head h / (H / KVH)).
/// scores = q k^T * scale; causal masks key j for query i when
/// j > i + (Lk - Lq) (the queries are the last Lq positions). Result
/// [B, H, Lq, D].
Tensor attention(const Tensor &q, const Tensor &k, const Tensor &v,
                 double scale, bool causal);

/// silu(gate) * up = gate * sigmoid(gate) * up (same shapes).
Tensor swiglu(const Tensor &gate, const Tensor &up);

/// Rows of table [V, E] selected by integer ids: result ids.shape + [E].
Tensor embed(const Tensor &table, const Tensor &ids);

} // namespace wafer::eval

#endif // WAFER_EVAL_KERNELS_H
