// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// The raised transformer ops (TfmTransformerOps.td).

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<1x8x64xf32>, %v: tensor<64xf32>) {
  // CHECK: tfm.linear %{{.*}}, %{{.*}} : (tensor<1x8x64xf32>, tensor<64x172xf32>) -> tensor<1x8x172xf32>
  %w = tfm.weight "up.weight" from "model.onnx" : tensor<64x172xf32>
  %0 = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x172xf32>) -> tensor<1x8x172xf32>
  // CHECK: tfm.linear %{{.*}}, %{{.*}} {transpose_weight} : (tensor<1x8x64xf32>, tensor<172x64xf32>) -> tensor<1x8x172xf32>
  %wt = tfm.weight "up_t.weight" from "model.onnx" : tensor<172x64xf32>
  %1 = tfm.linear %x, %wt {transpose_weight} : (tensor<1x8x64xf32>, tensor<172x64xf32>) -> tensor<1x8x172xf32>
  // CHECK: tfm.linear %{{.*}}, %{{.*}} : (tensor<64xf32>, tensor<64x172xf32>) -> tensor<172xf32>
  %2 = tfm.linear %v, %w : (tensor<64xf32>, tensor<64x172xf32>) -> tensor<172xf32>
  return
}

// CHECK-LABEL: func.func @embed
func.func @embed(%ids: tensor<1x8xi64>, %id: tensor<i64>) {
  %t = tfm.weight "embed_tokens.weight" from "model.onnx" : tensor<256x64xf32>
  // CHECK: tfm.embed %{{.*}}[%{{.*}}] : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  %0 = tfm.embed %t[%ids] : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  // CHECK: tfm.embed %{{.*}}[%{{.*}}] : (tensor<256x64xf32>, tensor<i64>) -> tensor<64xf32>
  %1 = tfm.embed %t[%id] : (tensor<256x64xf32>, tensor<i64>) -> tensor<64xf32>
  return
}

// CHECK-LABEL: func.func @rms_norm
func.func @rms_norm(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) -> tensor<1x8x64xf32> {
  // CHECK: tfm.rms_norm %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  %0 = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  // CHECK: tfm.rms_norm %{{.*}}, %{{.*}} {epsilon = 0.000000e+00 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  %1 = tfm.rms_norm %0, %w {epsilon = 0.0 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return %1 : tensor<1x8x64xf32>
}

// CHECK-LABEL: func.func @rope
func.func @rope(%q: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>,
                %c4: tensor<1x1x8x16xf32>) {
  // CHECK: tfm.rope %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  %0 = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: tfm.rope %{{.*}}, %{{.*}}, %{{.*}} {interleaved} : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  %1 = tfm.rope %q, %c4, %sin {interleaved} : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
                     %q1: tensor<1x4x1x16xf32>, %kp: tensor<1x4x9x16xf32>) {
  // CHECK: tfm.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  %0 = tfm.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64, causal} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  // A decode step: one query against nine keys, MHA, not causal.
  // CHECK: tfm.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f64} : (tensor<1x4x1x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x1x16xf32>
  %1 = tfm.attention %q1, %kp, %kp {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.25 : f64} : (tensor<1x4x1x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x1x16xf32>
  return
}

// CHECK-LABEL: func.func @mlp
func.func @mlp(%gate: tensor<1x8x172xf32>, %up: tensor<1x8x172xf32>) -> tensor<1x8x172xf32> {
  // CHECK: tfm.silu %{{.*}} : tensor<1x8x172xf32>
  %0 = tfm.silu %gate : tensor<1x8x172xf32>
  // CHECK: tfm.swiglu %{{.*}}, %{{.*}} : tensor<1x8x172xf32>
  %1 = tfm.swiglu %gate, %up : tensor<1x8x172xf32>
  return %1 : tensor<1x8x172xf32>
}
