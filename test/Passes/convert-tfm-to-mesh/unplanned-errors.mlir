// What the plans cannot take (graph inputs other than token ids and KV
// caches, an attention not raised) is named where it is read, not where a
// later op fails on it (an ONNX export probe).
// RUN: not wafer-opt %s -split-input-file --convert-tfm-to-mesh="grid=2x2" 2>&1 | FileCheck %s

// A batch of two sequences (every later op failed on the batch dimension).
// CHECK: error: {{.*}}convert-tfm-to-mesh: token ids of batch 2: the mesh plans run one sequence at a time (batch 1)
func.func @main(%ids: tensor<2x4xi64>) -> tensor<2x4x8xf32> {
  %t = tfm.weight "embed" from "m.onnx" : tensor<16x8xf32>
  %0 = tfm.embed %t[%ids] : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// A model exported without its parameters: the table is a graph input.
// CHECK: error: {{.*}}convert-tfm-to-mesh: a gather from a graph input: an embedding table must be an initializer (export the model with its weights, e.g. torch.onnx.export(export_params=True))
func.func @main(%t: tensor<16x8xf32>, %ids: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %0 = tfm.gather %t[%ids] {axis = 0 : i64} : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// Ids given as a graph input select rows of a constant table (the position
// inputs tfm-bind-position-inputs binds in the pipeline would too).
// CHECK: error: {{.*}}convert-tfm-to-mesh: no mesh plan for 'tfm.gather' of graph input 'segment_ids' (the plans read only token ids and KV caches from graph inputs)
func.func @main(%pos: tensor<1x4xi64> {tfm.name = "segment_ids"}) -> tensor<1x4x8xf32> {
  %t = tfm.constant dense<1.0> : tensor<16x8xf32>
  %0 = tfm.gather %t[%pos] {axis = 0 : i64} : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// An attention the raise pass did not recognise (a sliding window, a
// soft cap, another axis) leaves its softmax, which is named rather than
// the head reshape around it (here: a softmax of a graph input).
// CHECK: error: {{.*}}convert-tfm-to-mesh: this softmax is not part of an attention tfm-raise-transformer recognises: softmax over the last axis of q k^T (scaled by constants, with a constant causal mask added or applied by a where) times v, each [batch, heads, positions, head dim]
func.func @main(%s: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %p = tfm.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
  return %p : tensor<1x4x8x8xf32>
}
