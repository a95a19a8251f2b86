//===- TfmOps.td - Transformer graph ops -------------------*- tablegen -*-===//
#ifndef WAFER_TFM_OPS
#define WAFER_TFM_OPS

include "TfmDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributes.td"

def Tfm_F32Tensor : RankedTensorOf<[F32]>;

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "A reference to a weight in a weight store";
  let description = [{
    Names a tensor stored outside the IR: the initializer `name` of the
    ONNX file `source`. Only the reference is kept; readers load the data
    when they need it.

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
    For scalars and small tensors only (Gemm's alpha and beta, ONNX
    Constant nodes); weights use `tfm.weight`.

    ```mlir
    %c = tfm.constant dense<2.0> : tensor<f32>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Tfm_MatMulOp : Tfm_Op<"matmul", [Pure]> {
  let summary = "Matrix product [M, K] x [K, N] (or [K] x [K, N])";
  let description = [{
    ONNX MatMul for the ranks the mesh plans handle: a matrix or a vector
    on the left, a matrix on the right.

    ```mlir
    %y = tfm.matmul %x, %w : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$lhs, Tfm_F32Tensor:$rhs);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_TransposeOp : Tfm_Op<"transpose", [Pure]> {
  let summary = "Permutes the dimensions of a tensor (ONNX Transpose)";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = tfm.transpose %w [1, 0] : tensor<29x50xf32> -> tensor<50x29xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Tfm_BroadcastBinaryOp<string mnemonic, string what>
    : Tfm_Op<mnemonic, [Pure]> {
  let summary = "Element-wise " # what # " with numpy broadcasting";
  let description = [{
    ONNX semantics: shapes align from the right; a dimension of 1
    broadcasts.

    ```mlir
    %z = tfm.}] # mnemonic # [{ %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$lhs, Tfm_F32Tensor:$rhs);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_AddOp : Tfm_BroadcastBinaryOp<"add", "addition">;
def Tfm_MulOp : Tfm_BroadcastBinaryOp<"mul", "multiplication">;

#endif // WAFER_TFM_OPS
