// RUN: wafer-opt %s -split-input-file -verify-diagnostics

// Verifiers of the raised transformer ops (TfmTransformerOps.td).

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

func.func @linear_weight_rank(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tfm.linear' op weight must be a matrix}}
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @linear_weight_rank3(%x: tensor<1x8x64xf32>, %w: tensor<1x64x172xf32>) {
  // expected-error @+1 {{'tfm.linear' op weight must be a matrix}}
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<1x64x172xf32>) -> tensor<1x8x172xf32>
  return
}

// -----

func.func @linear_weight_shape(%x: tensor<1x8x64xf32>, %w: tensor<32x172xf32>) {
  // expected-error @+1 {{'tfm.linear' op input's last dimension must be 32}}
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<32x172xf32>) -> tensor<1x8x172xf32>
  return
}

// -----

// The weight is [K, N] = [64, 172]; marking it transposed makes K = 172.
func.func @linear_transpose_weight(%x: tensor<1x8x64xf32>, %w: tensor<64x172xf32>) {
  // expected-error @+1 {{'tfm.linear' op input's last dimension must be 172}}
  %y = tfm.linear %x, %w {transpose_weight} : (tensor<1x8x64xf32>, tensor<64x172xf32>) -> tensor<1x8x172xf32>
  return
}

// -----

// An [N, K] weight used without transpose_weight.
func.func @linear_missing_transpose(%x: tensor<1x8x64xf32>, %w: tensor<172x64xf32>) {
  // expected-error @+1 {{'tfm.linear' op input's last dimension must be 172}}
  %y = tfm.linear %x, %w : (tensor<1x8x64xf32>, tensor<172x64xf32>) -> tensor<1x8x172xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<64x172xf32>) {
  // expected-error @+1 {{'tfm.linear' op input's last dimension must be 64}}
  %y = tfm.linear %x, %w : (tensor<f32>, tensor<64x172xf32>) -> tensor<172xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<1x8x64xf32>, %w: tensor<172x64xf32>) {
  // expected-error @+1 {{'tfm.linear' op result shape must be [1, 8, 172]}}
  %y = tfm.linear %x, %w {transpose_weight} : (tensor<1x8x64xf32>, tensor<172x64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @linear_element_type(%x: tensor<1x8x64xi64>, %w: tensor<64x172xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<1x8x64xi64>'}}
  %y = tfm.linear %x, %w : (tensor<1x8x64xi64>, tensor<64x172xf32>) -> tensor<1x8x172xf32>
  return
}

//===----------------------------------------------------------------------===//
// embed
//===----------------------------------------------------------------------===//

// -----

func.func @embed_table_rank(%t: tensor<256xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.embed' op table must be [vocab, dim]}}
  %h = tfm.embed %t[%ids] : (tensor<256xf32>, tensor<1x8xi64>) -> tensor<1x8xf32>
  return
}

// -----

func.func @embed_table_rank3(%t: tensor<2x256x64xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.embed' op table must be [vocab, dim]}}
  %h = tfm.embed %t[%ids] : (tensor<2x256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x256x64xf32>
  return
}

// -----

func.func @embed_result(%t: tensor<256x64xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.embed' op result shape must be [1, 8, 64]}}
  %h = tfm.embed %t[%ids] : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<8x64xf32>
  return
}

// -----

func.func @embed_ids_type(%t: tensor<256x64xf32>, %ids: tensor<1x8xi32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<1x8xi32>'}}
  %h = tfm.embed %t[%ids] : (tensor<256x64xf32>, tensor<1x8xi32>) -> tensor<1x8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

// -----

func.func @rms_norm_weight(%x: tensor<1x8x64xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op weight must have the input's last dimension}}
  %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<8xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<1x8x64xf32>, %w: tensor<1x64xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op weight must have the input's last dimension}}
  %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<1x64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>, %w: tensor<f32>) {
  // expected-error @+1 {{'tfm.rms_norm' op weight must have the input's last dimension}}
  %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op epsilon must be finite and not negative}}
  %n = tfm.rms_norm %x, %w {epsilon = -1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_epsilon_type(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute}}
  %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f32} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_result(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op result shape must be [1, 8, 64]}}
  %n = tfm.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

// -----

func.func @rope_odd(%q: tensor<1x4x8x15xf32>, %cos: tensor<8x15xf32>, %sin: tensor<8x15xf32>) {
  // expected-error @+1 {{'tfm.rope' op last dimension must be even}}
  %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x15xf32>, tensor<8x15xf32>, tensor<8x15xf32>) -> tensor<1x4x8x15xf32>
  return
}

// -----

func.func @rope_odd_interleaved(%q: tensor<1x4x8x15xf32>, %cos: tensor<8x15xf32>, %sin: tensor<8x15xf32>) {
  // expected-error @+1 {{'tfm.rope' op last dimension must be even}}
  %r = tfm.rope %q, %cos, %sin {interleaved} : (tensor<1x4x8x15xf32>, tensor<8x15xf32>, tensor<8x15xf32>) -> tensor<1x4x8x15xf32>
  return
}

// -----

func.func @rope_scalar(%q: tensor<f32>, %cos: tensor<f32>, %sin: tensor<f32>) {
  // expected-error @+1 {{'tfm.rope' op last dimension must be even}}
  %r = tfm.rope %q, %cos, %sin : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @rope_cos(%q: tensor<1x4x8x16xf32>, %cos: tensor<9x16xf32>, %sin: tensor<8x16xf32>) {
  // expected-error @+1 {{'tfm.rope' op cos and sin must broadcast to the input}}
  %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<9x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @rope_sin(%q: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x8xf32>) {
  // expected-error @+1 {{'tfm.rope' op cos and sin must broadcast to the input}}
  %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

// cos broadcasts with the input but to a larger shape.
func.func @rope_table_larger(%q: tensor<1x4x8x16xf32>, %cos: tensor<2x1x8x16xf32>, %sin: tensor<8x16xf32>) {
  // expected-error @+1 {{'tfm.rope' op cos and sin must broadcast to the input}}
  %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<2x1x8x16xf32>, tensor<8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @rope_result(%q: tensor<1x4x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) {
  // expected-error @+1 {{'tfm.rope' op result shape must be [1, 4, 8, 16]}}
  %r = tfm.rope %q, %cos, %sin : (tensor<1x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<4x8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// -----

func.func @attention_rank(%q: tensor<4x8x16xf32>, %k: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op needs q [B, H, Lq, D] and k, v [B, KVH, Lk, D]}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
  return
}

// -----

func.func @attention_value_shape(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x7x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op needs q [B, H, Lq, D] and k, v [B, KVH, Lk, D]}}
  %o = tfm.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x7x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op q and k differ in batch or head dimension}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<2x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x32xf32>) {
  // expected-error @+1 {{'tfm.attention' op q and k differ in batch or head dimension}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_num_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op num_heads and num_kv_heads must match the operands}}
  %o = tfm.attention %q, %k, %k {num_heads = 8 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_num_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op num_heads and num_kv_heads must match the operands}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_divisible(%q: tensor<1x3x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op num_heads must be a multiple of num_kv_heads}}
  %o = tfm.attention %q, %k, %k {num_heads = 3 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<1x3x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x3x8x16xf32>
  return
}

// -----

func.func @attention_zero_kv_heads(%q: tensor<1x0x8x16xf32>, %k: tensor<1x0x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op num_heads must be a multiple of num_kv_heads}}
  %o = tfm.attention %q, %k, %k {num_heads = 0 : i64, num_kv_heads = 0 : i64, scale = 0.25 : f64} : (tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32>) -> tensor<1x0x8x16xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x9x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op result shape must be [1, 4, 8, 16]}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x4x9x16xf32>
  return
}

// -----

func.func @attention_missing_scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{requires attribute 'scale'}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// swiglu, silu
//===----------------------------------------------------------------------===//

// -----

func.func @swiglu_shapes(%gate: tensor<1x8x172xf32>, %up: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.swiglu' op requires the same type for all operands and results}}
  %h = "tfm.swiglu"(%gate, %up) : (tensor<1x8x172xf32>, tensor<1x8x64xf32>) -> tensor<1x8x172xf32>
  return
}

// -----

func.func @swiglu_result(%gate: tensor<1x8x172xf32>, %up: tensor<1x8x172xf32>) {
  // expected-error @+1 {{'tfm.swiglu' op requires the same type for all operands and results}}
  %h = "tfm.swiglu"(%gate, %up) : (tensor<1x8x172xf32>, tensor<1x8x172xf32>) -> tensor<8x172xf32>
  return
}

// -----

func.func @swiglu_element_type(%gate: tensor<4xi64>, %up: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4xi64>'}}
  %h = tfm.swiglu %gate, %up : tensor<4xi64>
  return
}

// -----

func.func @silu_result(%x: tensor<1x8x172xf32>) {
  // expected-error @+1 {{'tfm.silu' op requires the same type for all operands and results}}
  %h = "tfm.silu"(%x) : (tensor<1x8x172xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_epsilon_nan(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op epsilon must be finite and not negative}}
  %n = tfm.rms_norm %x, %w {epsilon = 0x7FF8000000000000 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @rms_norm_epsilon_inf(%x: tensor<1x8x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tfm.rms_norm' op epsilon must be finite and not negative}}
  %n = tfm.rms_norm %x, %w {epsilon = 0x7FF0000000000000 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @attention_scale_nan(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op scale must be finite}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0x7FF8000000000000 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_scale_inf(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'tfm.attention' op scale must be finite}}
  %o = tfm.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0xFFF0000000000000 : f64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}
