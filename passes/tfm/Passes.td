//===- Passes.td - tfm passes ------------------------------*- tablegen -*-===//
#ifndef WAFER_TFM_PASSES
#define WAFER_TFM_PASSES

include "mlir/Pass/PassBase.td"

def TfmBindPositionInputs : Pass<"tfm-bind-position-inputs", "mlir::ModuleOp"> {
  let summary = "Binds position_ids and attention_mask graph inputs to their values";
  let description = [{
    Hugging Face exports (and Optimum's) take `position_ids` and
    `attention_mask` as graph inputs and compute the rotary factors and the
    additive mask from them. The mesh plans run one unpadded sequence, whose
    positions follow its past and whose every token is attended to, so the
    values are known when the shapes are: `position_ids` ([S] or [1, S]) is
    past, past + 1, ..., past + S - 1 and `attention_mask` ([1, T]) is all
    ones. This pass replaces those arguments of @main (found by name, of an
    integer type) by `tfm.constant`s of those values, so that
    tfm-fold-shapes folds the masks and tables as it does for graphs that
    compute them from shapes, and records them in the module attribute
    `tfm.bound_inputs` (`{attention_mask = "ones", position_ids =
    "positions"}`), which convert-mesh-to-core copies to `core.program`: a
    run given such an input checks that it holds these values (at the
    run's position) rather than ignoring it. The past is T - S when the
    mask is bound, else the positions (dimension 2) of the rank-4 float
    arguments (the past KV caches), else 0. Errors: a bound input of a
    float type, of another rank, of batch other than 1, or past KV caches
    that disagree.

    Before:
    ```mlir
    func.func @main(%ids: tensor<1x3xi64> {tfm.name = "input_ids"},
                    %mask: tensor<1x3xi64> {tfm.name = "attention_mask"},
                    %pos: tensor<1x3xi64> {tfm.name = "position_ids"}) ...
    ```
    After:
    ```mlir
    module attributes {tfm.bound_inputs = {attention_mask = "ones",
                                           position_ids = "positions"}} {
      func.func @main(%ids: tensor<1x3xi64> {tfm.name = "input_ids"}) ... {
        %mask = tfm.constant dense<1> : tensor<1x3xi64>
        %pos = tfm.constant dense<[[0, 1, 2]]> : tensor<1x3xi64>
    ```
  }];
}

def TfmFoldShapes : Pass<"tfm-fold-shapes", "mlir::func::FuncOp"> {
  let summary = "Folds the shape computations of exported graphs to constants";
  let description = [{
    Exporters compute masks, positions and shapes at run time (Shape,
    Gather, Concat, Range, ConstantOfShape, Equal, Trilu, Where ...). Once
    every shape is static those are constants: each op whose operands are
    all constants (or, for `tfm.shape`, whose input has a static shape) is
    evaluated with the host kernels and replaced by a `tfm.constant`, as long
    as the result has at most `max-elements` elements. Reshapes, expands and
    casts that change nothing are dropped, so are the empty operands of a
    concat (a past KV cache of length 0: a graph with a cache run as a
    prefill) and then a concat of one operand, and dead ops erased.

    Before:
    ```mlir
    %s = tfm.shape %ids : tensor<1x8xi64> -> tensor<2xi64>
    %i = tfm.constant dense<1> : tensor<i64>
    %n = tfm.gather %s[%i] {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
    %m = tfm.constant_of_shape {value = -3.4e38 : f32} : tensor<8x8xf32>
    %u = tfm.trilu %m {upper = true, k = 1 : i64} : tensor<8x8xf32>
    %y = tfm.add %scores, %u : (tensor<1x4x8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8x8xf32>
    ```
    After:
    ```mlir
    %u = tfm.constant dense<[[0.0, -3.4e38, ...], ...]> : tensor<8x8xf32>
    %y = tfm.add %scores, %u : (tensor<1x4x8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 25",
           "Largest result (in elements) folded into a constant">,
  ];
}

def TfmRaiseTransformer : Pass<"tfm-raise-transformer", "mlir::func::FuncOp"> {
  let summary = "Recognises transformer building blocks in folded graphs";
  let description = [{
    Replaces the subgraphs exporters write for the blocks of a LLaMA by one
    op each, keeping their exact meaning: `tfm.embed` (Gather of a weight
    table), `tfm.linear` (MatMul by a weight, possibly transposed; a
    fused projection's parts, ranges of the last axis of one linear's
    result as Phi-3's qkv_proj Split makes them, become linears of
    `tfm.slice`s of the weight, a bias cut alike), `tfm.rms_norm` (x * 1/sqrt(mean(x^2) + eps) * w in its written forms:
    a division by the root, its reciprocal, or (mean(x^2) + eps)^-0.5),
    `tfm.swiglu` (x * sigmoid(x) * up), `tfm.rope` (a rotation of pairs
    of the last axis, halves or adjacent pairs, by per-position angles:
    recognised by evaluating the subgraph as a linear map on basis and
    pseudo-random inputs, so rotate-half by slices, Split or
    `cat([a*c - b*s, b*c + a*s])` and Meta's reshape-to-pairs + stack are
    all accepted; the tables come from the probe), and
    `tfm.attention` (softmax(q k^T * scale + causal mask) v, with the GQA
    head repetition, recognised by probing, folded in). Run after
    tfm-fold-shapes: masks and rotary tables must be constants. Subgraphs
    that almost match (no epsilon, another axis, an odd rotary width, a mask
    that is not causal) stay as they are. The matches are rewrite patterns
    (`populateTfmRaiseTransformerPatterns`) applied by the greedy driver;
    `-debug-only=tfm-raise-transformer` traces each raise.

    Before:
    ```mlir
    %p = tfm.pow %x, %two : (tensor<1x8x64xf32>, tensor<f32>) -> tensor<1x8x64xf32>
    %m = tfm.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
    %a = tfm.add %m, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
    %s = tfm.sqrt %a : tensor<1x8x1xf32>
    %r = tfm.div %one, %s : (tensor<f32>, tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
    %n = tfm.mul %x, %r : (tensor<1x8x64xf32>, tensor<1x8x1xf32>) -> tensor<1x8x64xf32>
    %y = tfm.mul %w, %n : (tensor<64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
    ```
    After:
    ```mlir
    %y = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
    ```
  }];
}

def TfmKeepLayers : Pass<"tfm-keep-layers", "mlir::ModuleOp"> {
  let summary = "Keeps the first N decoder layers of a raised LLaMA";
  let description = [{
    Cuts the chain of decoder layers of @main after layer `layers`: the
    final norm reads layer N's residual output (the input of layer N's first
    norm) instead of the last layer's, the outputs computed from the later
    layers (their KV caches) are dropped with the arguments only they used
    (their past KV caches), and what died is erased. Run after
    tfm-raise-transformer: a layer is found from its `tfm.attention`, whose
    query is computed from a `tfm.rms_norm` of the layer's input (through
    linear, reshape, transpose, rope and elementwise ops), so it works for
    any raised LLaMA, whatever its node names. The final norm is the last
    `tfm.rms_norm` of @main, after the last attention.

    Sets the module attributes `tfm.layers` (N), `tfm.model_layers` (the
    model's count) and `tfm.non_layer_ops` (the location names of the ops
    outside the decoder layers: embedding, final norm, output projection),
    from which wafer-run derives the time per layer. Fails with one error
    when the model has fewer than N layers or its layers cannot be found.

    Before (layers=1 of 2): `%h2 = tfm.add %h1, %mlp1 ...`,
    `%n = tfm.rms_norm %h2, %w ...`. After: `%n = tfm.rms_norm %h1, %w ...`,
    and layer 1 is gone.
  }];
  let options = [
    Option<"layers", "layers", "int64_t", /*default=*/"0",
           "Decoder layers to keep (at least 1)">,
  ];
}

def TfmRopeTablesToInputs : Pass<"tfm-rope-tables-to-inputs", "mlir::ModuleOp"> {
  let summary = "Makes the rotary tables of a one-token graph inputs";
  let description = [{
    An exported decode graph computes its RoPE factors from the length of
    its past; once the shapes are folded they are constants of one
    position, so a program compiled from it is right at that position only.
    This pass replaces the constant cos and sin tables of every `tfm.rope`
    in @main (one row each: the graph handles one token, and all ropes must
    share the same tables) by two new arguments of @main named `rope.cos`
    and `rope.sin`, appended after the others, so that one program serves
    every position: the caller passes the factors of each step (wafer-run
    generate computes them from the tables' angles). Run after
    tfm-raise-transformer. Fails with one error naming the rope when a
    table is computed rather than constant, has more than one row, or
    differs from the other ropes' tables.

    Before: `%c = tfm.constant dense<[[...]]> : tensor<1x16xf32>`,
    `%q2 = tfm.rope %q, %c, %s : (tensor<1x4x1x16xf32>, tensor<1x16xf32>,
    tensor<1x16xf32>) -> tensor<1x4x1x16xf32>`. After: @main takes
    `%cos: tensor<1x16xf32> {tfm.name = "rope.cos"}` and
    `%sin: tensor<1x16xf32> {tfm.name = "rope.sin"}`, and
    `%q2 = tfm.rope %q, %cos, %sin : ...`.
  }];
}

#endif // WAFER_TFM_PASSES
