//===- TfmTransformerOps.td - Raised transformer ops -------*- tablegen -*-===//
//
// What tfm-raise-transformer recognises in imported graphs. Each op has the
// exact meaning of the subgraph it replaces; the host evaluator implements
// them directly (lib/Eval/Kernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_TFM_TRANSFORMER_OPS
#define WAFER_TFM_TRANSFORMER_OPS

def Tfm_LinearOp : Tfm_Op<"linear", [Pure]> {
  let summary = "x times a weight matrix: the projections of a transformer";
  let description = [{
    `x [..., K] x W [K, N] -> [..., N]`; with `transpose_weight` the weight
    is stored `[N, K]` (PyTorch's nn.Linear layout) and used transposed. The
    weight operand is a `tfm.weight` reference, so plans can place it
    without reading it.

    ```mlir
    %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x172xf32>) -> tensor<1x8x172xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$weight,
                       UnitAttr:$transpose_weight);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_EmbedOp : Tfm_Op<"embed", [Pure]> {
  let summary = "Token embedding: rows of a [vocab, dim] table";
  let description = [{
    ```mlir
    %h = tfm.embed %table[%ids] : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$table, Tfm_IndexTensor:$ids);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_RmsNormOp : Tfm_Op<"rms_norm", [Pure]> {
  let summary = "Root-mean-square normalisation over the last axis";
  let description = [{
    `x / sqrt(mean(x^2, -1) + epsilon) * weight`, weight of shape
    `[x.shape[-1]]`.

    ```mlir
    %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$weight,
                       F64Attr:$epsilon);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_RopeOp : Tfm_Op<"rope", [Pure]> {
  let summary = "Rotary position embedding over the last axis";
  let description = [{
    `cos` and `sin` hold the per-position factors, broadcast to the input
    (usually `[L, D]` against `[B, H, L, D]`). Rotate-half convention
    (Hugging Face): `y = x * cos + concat(-x[D/2:], x[:D/2]) * sin`. With
    `interleaved` (GPT-J, Meta): pairs `(x[2i], x[2i+1])` rotate together:
    `y[2i] = x[2i] cos[2i] - x[2i+1] sin[2i]`,
    `y[2i+1] = x[2i+1] cos[2i+1] + x[2i] sin[2i+1]`.

    ```mlir
    %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$cos,
                       Tfm_F32Tensor:$sin, UnitAttr:$interleaved);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_AttentionOp : Tfm_Op<"attention", [Pure]> {
  let summary = "Scaled dot-product attention, causal, with grouped KV heads";
  let description = [{
    `q [B, H, Lq, D]`, `k` and `v` `[B, KVH, Lk, D]`; `num_heads = H`,
    `num_kv_heads = KVH` (equal: MHA; 1: MQA; otherwise GQA, query head `h`
    reads KV head `h / (H / KVH)`). `softmax(q k^T * scale + mask) v` where
    the causal mask hides key `j` from query `i` when `j > i + Lk - Lq`: the
    queries are the last `Lq` positions, so a decode step (`Lq = 1`) with a
    past of `Lk - 1` tokens sees every key.

    ```mlir
    %o = tfm.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64, causal} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$query, Tfm_F32Tensor:$key,
                       Tfm_F32Tensor:$value, I64Attr:$num_heads,
                       I64Attr:$num_kv_heads, F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_SwigluOp : Tfm_Op<"swiglu", [Pure, SameOperandsAndResultType]> {
  let summary = "silu(gate) * up: the gated unit of a LLaMA MLP";
  let description = [{
    ```mlir
    %h = tfm.swiglu %gate, %up : tensor<1x8x172xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$gate, Tfm_F32Tensor:$up);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

#endif // WAFER_TFM_TRANSFORMER_OPS
