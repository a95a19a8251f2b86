//===- TfmOps.td - Transformer graph ops -------------------*- tablegen -*-===//
#ifndef WAFER_TFM_OPS
#define WAFER_TFM_OPS

include "TfmDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributes.td"

def Tfm_F32Tensor : StaticShapeTensorOf<[F32]>;
def Tfm_Tensor : StaticShapeTensorOf<[F32, I64, I1]>;
def Tfm_IndexTensor : StaticShapeTensorOf<[I64]>;
def Tfm_NumberTensor : StaticShapeTensorOf<[F32, I64]>;
def Tfm_BoolTensor : StaticShapeTensorOf<[I1]>;

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "A reference to a weight in a weight store";
  let description = [{
    Names a tensor stored outside the IR: the initializer `name` of the
    ONNX file `source` (its data may live in ONNX external data next to
    it). Only the reference is kept; readers map the data when they need it.

    ```mlir
    %w = tfm.weight "fc.weight" from "model.onnx" : tensor<50x29xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$source);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$name `from` $source attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tfm_ConstantOp : Tfm_Op<"constant",
    [Pure, ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "A small constant tensor held in the IR";
  let description = [{
    For scalars and small tensors only (ONNX Constant nodes, small
    initializers, folded shape computations); weights use `tfm.weight`.

    ```mlir
    %c = tfm.constant dense<2.0> : tensor<f32>
    %s = tfm.constant dense<[1, 8, 4, 16]> : tensor<4xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

class Tfm_UnaryOp<string mnemonic, string formula,
                  TypeConstraint tensor = Tfm_F32Tensor>
    : Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "Element-wise " # formula;
  let description = [{
    Computes }] # formula # [{ for every element (ONNX semantics); the
    result has the input's type. f32 results are rounded to float after
    each op by the host evaluator.

    ```mlir
    %y = tfm.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tfm_NegOp : Tfm_UnaryOp<"neg", "-x", Tfm_NumberTensor>;
def Tfm_SqrtOp : Tfm_UnaryOp<"sqrt", "sqrt(x)">;
def Tfm_ReciprocalOp : Tfm_UnaryOp<"reciprocal", "1 / x">;
def Tfm_SigmoidOp : Tfm_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Tfm_ExpOp : Tfm_UnaryOp<"exp", "exp(x)">;
def Tfm_CosOp : Tfm_UnaryOp<"cos", "cos(x)">;
def Tfm_SinOp : Tfm_UnaryOp<"sin", "sin(x)">;
def Tfm_TanhOp : Tfm_UnaryOp<"tanh", "tanh(x)">;
def Tfm_ErfOp : Tfm_UnaryOp<"erf", "erf(x)">;
def Tfm_AbsOp : Tfm_UnaryOp<"abs", "|x|", Tfm_NumberTensor>;
def Tfm_ReluOp : Tfm_UnaryOp<"relu", "max(x, 0)", Tfm_NumberTensor>;
def Tfm_NotOp : Tfm_UnaryOp<"not", "logical not", Tfm_BoolTensor>;
def Tfm_SiluOp : Tfm_UnaryOp<"silu", "x * sigmoid(x) (raised)">;

def Tfm_CastOp : Tfm_Op<"cast", [Pure]> {
  let summary = "Converts the element type (ONNX Cast)";
  let description = [{
    f32 rounds, i64 truncates toward zero, i1 is `x != 0`.

    ```mlir
    %f = tfm.cast %i : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Tfm_BroadcastBinaryOp<string mnemonic, string what>
    : Tfm_Op<mnemonic, [Pure]> {
  let summary = "Element-wise " # what # " with numpy broadcasting";
  let description = [{
    ONNX semantics: shapes align from the right; a dimension of 1
    broadcasts. Comparisons and logical ops give i1; the others keep the
    left operand's element type.

    ```mlir
    %z = tfm.}] # mnemonic # [{ %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$lhs, Tfm_Tensor:$rhs);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_AddOp : Tfm_BroadcastBinaryOp<"add", "addition">;
def Tfm_SubOp : Tfm_BroadcastBinaryOp<"sub", "subtraction">;
def Tfm_MulOp : Tfm_BroadcastBinaryOp<"mul", "multiplication">;
def Tfm_DivOp : Tfm_BroadcastBinaryOp<"div", "division (integers truncate)">;
def Tfm_PowOp : Tfm_BroadcastBinaryOp<"pow", "power">;
def Tfm_MaxOp : Tfm_BroadcastBinaryOp<"max", "maximum">;
def Tfm_MinOp : Tfm_BroadcastBinaryOp<"min", "minimum">;
def Tfm_ModOp : Tfm_BroadcastBinaryOp<"mod", "remainder (sign of the divisor)">;
def Tfm_EqualOp : Tfm_BroadcastBinaryOp<"equal", "comparison ==">;
def Tfm_LessOp : Tfm_BroadcastBinaryOp<"less", "comparison <">;
def Tfm_LessOrEqualOp : Tfm_BroadcastBinaryOp<"less_or_equal", "comparison <=">;
def Tfm_GreaterOp : Tfm_BroadcastBinaryOp<"greater", "comparison >">;
def Tfm_GreaterOrEqualOp
    : Tfm_BroadcastBinaryOp<"greater_or_equal", "comparison >=">;
def Tfm_AndOp : Tfm_BroadcastBinaryOp<"and", "logical and">;
def Tfm_OrOp : Tfm_BroadcastBinaryOp<"or", "logical or">;

def Tfm_WhereOp : Tfm_Op<"where", [Pure]> {
  let summary = "cond ? a : b with numpy broadcasting of all three";
  let description = [{
    ```mlir
    %y = tfm.where %mask, %a, %b : (tensor<8x8xi1>, tensor<f32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
    ```
  }];
  let arguments = (ins Tfm_BoolTensor:$condition, Tfm_Tensor:$lhs,
                       Tfm_Tensor:$rhs);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions, reductions, normalisation
//===----------------------------------------------------------------------===//

def Tfm_MatMulOp : Tfm_Op<"matmul", [Pure]> {
  let summary = "Matrix product with numpy.matmul semantics (ONNX MatMul)";
  let description = [{
    1-D operands are promoted and the promoted dimension dropped; batch
    dimensions broadcast.

    ```mlir
    %y = tfm.matmul %x, %w : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
    %s = tfm.matmul %q, %kt : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$lhs, Tfm_F32Tensor:$rhs);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Tfm_ReduceOp<string mnemonic, string what> : Tfm_Op<mnemonic, [Pure]> {
  let summary = "The " # what # " over `axes`";
  let description = [{
    `axes` are non-negative, sorted and unique; with `keepdims` the reduced
    dimensions stay with size 1.

    ```mlir
    %m = tfm.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_ReduceMeanOp : Tfm_ReduceOp<"reduce_mean", "mean">;
def Tfm_ReduceSumOp : Tfm_ReduceOp<"reduce_sum", "sum">;
def Tfm_ReduceMaxOp : Tfm_ReduceOp<"reduce_max", "maximum">;

def Tfm_SoftmaxOp : Tfm_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax over one axis";
  let description = [{
    ```mlir
    %p = tfm.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, I64Attr:$axis);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tfm_TransposeOp : Tfm_Op<"transpose", [Pure]> {
  let summary = "Permutes the dimensions of a tensor (ONNX Transpose)";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = tfm.transpose %w [1, 0] : tensor<29x50xf32> -> tensor<50x29xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ReshapeOp : Tfm_Op<"reshape", [Pure]> {
  let summary = "Same elements, new static shape";
  let description = [{
    ONNX Reshape, Squeeze, Unsqueeze and Flatten all import as this op:
    with static shapes the result type says everything.

    ```mlir
    %r = tfm.reshape %x : tensor<1x8x64xf32> -> tensor<1x8x4x16xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_ExpandOp : Tfm_Op<"expand", [Pure]> {
  let summary = "Broadcasts to the result shape (ONNX Expand)";
  let description = [{
    ```mlir
    %e = tfm.expand %k : tensor<1x2x1x8x16xf32> -> tensor<1x2x2x8x16xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_ConcatOp : Tfm_Op<"concat", [Pure]> {
  let summary = "Concatenation along `axis` (non-negative)";
  let description = [{
    ```mlir
    %c = tfm.concat %a, %b {axis = 2 : i64} : (tensor<1x2x8x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x9x16xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfm_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

def Tfm_SliceOp : Tfm_Op<"slice", [Pure]> {
  let summary = "Strided slice with one start, end and step per dimension";
  let description = [{
    ONNX Slice and Split import as this op, normalised: one entry per
    dimension, starts and ends clamped into [-1, dim], steps nonzero. Along
    dimension d the result takes `starts[d] + i * steps[d]` while it stays on
    the start side of `ends[d]`.

    ```mlir
    %h = tfm.slice %x starts [0, 0, 8] ends [1, 4, 16] steps [1, 1, 1] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` $starts `ends` $ends `steps` $steps attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_GatherOp : Tfm_Op<"gather", [Pure]> {
  let summary = "Selects slices along `axis` by integer indices (ONNX Gather)";
  let description = [{
    Result shape `input.shape[:axis] + indices.shape + input.shape[axis+1:]`;
    negative indices count from the end.

    ```mlir
    %e = tfm.gather %table[%ids] {axis = 0 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input, Tfm_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape computation (folded away by tfm-fold-shapes)
//===----------------------------------------------------------------------===//

def Tfm_ShapeOp : Tfm_Op<"shape", [Pure]> {
  let summary = "The shape of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let description = [{
    ```mlir
    %s = tfm.shape %x : tensor<1x8x64xf32> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input);
  let results = (outs Tfm_IndexTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_ConstantOfShapeOp : Tfm_Op<"constant_of_shape", [Pure]> {
  let summary = "A tensor of the result shape filled with `value`";
  let description = [{
    ONNX ConstantOfShape once its shape input is known (it becomes the
    result type).

    ```mlir
    %m = tfm.constant_of_shape {value = -3.4e38 : f32} : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tfm_RangeOp : Tfm_Op<"range", [Pure]> {
  let summary = "start, start + delta, ... up to limit (ONNX Range)";
  let description = [{
    ```mlir
    %p = tfm.range {start = 0.0, limit = 8.0, delta = 1.0} : tensor<8xi64>
    ```
  }];
  let arguments = (ins F64Attr:$start, F64Attr:$limit, F64Attr:$delta);
  let results = (outs Tfm_NumberTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tfm_TriluOp : Tfm_Op<"trilu", [Pure, SameOperandsAndResultType]> {
  let hasVerifier = 1;
  let summary = "Keeps the upper or lower triangle of the last two dims";
  let description = [{
    ONNX Trilu: `upper` keeps elements with `j - i >= k`, lower keeps
    `j - i <= k`; the rest become 0.

    ```mlir
    %u = tfm.trilu %m {upper = true, k = 1 : i64} : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Tfm_Tensor:$input, BoolAttr:$upper, I64Attr:$k);
  let results = (outs Tfm_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

include "TfmTransformerOps.td"

#endif // WAFER_TFM_OPS
