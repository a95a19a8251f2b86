// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// The transformer instructions and host bindings of the core dialect
// (CoreOps.td): every core.rows kernel, the max and swiglu element-wise
// kinds, gathered and index-mapped inputs, reshaped, permuted and gathered
// outputs. Attributes print sorted, defaults (groups = 1, scalar = 0) elided.

// CHECK: core.program attributes {grid = #mesh.grid<2x2>, interleave
core.program attributes {grid = #mesh.grid<2x2>, interleave, ops = [["norm", "rms_norm", "ring"], ["attn", "attention", "ktree"]], target = #mesh.target<base = "wse2">} {
  core.buffer @x[8] : f32 at 0
  core.buffer @w[4] : f32 at 32
  core.buffer @sumsq[2] : f32 at 48
  core.buffer @y[8] : f32 at 56
  core.buffer @q[16] : f32 at 88
  core.buffer @cos[4] : f32 at 152
  core.buffer @sin[4] : f32 at 168
  core.buffer @keys[12] : f32 at 184
  core.buffer @values[12] : f32 at 232
  core.buffer @s[6] : f32 at 280
  core.buffer @max[2] : f32 at 304
  core.buffer @sum[2] : f32 at 312
  core.buffer @o[8] : f32 at 320
  core.buffer @ml[8] : f32 at 352
  core.buffer @kv[16] : f32 at 384
  core.buffer @wide[12] : f32 at 448
  core.buffer @e[8] : f32 at 496
  core.buffer @cache[48] : f32 at 528
  // An embedding gathered by the token ids on the host.
  // CHECK: core.input @e {gather_ids = "input_ids", name = "model.embed_tokens.weight", source_shape = array<i64: 1, 8>, type = tensor<1x8xf32, #mesh.layout<[*, *]>>, weight_file = "decode.onnx"}
  core.input @e {name = "model.embed_tokens.weight", gather_ids = "input_ids", weight_file = "decode.onnx", source_shape = array<i64: 1, 8>, type = tensor<1x8xf32, #mesh.layout<[*, *]>>}
  // A past KV cache placed into slots (-1: an empty slot).
  // CHECK: core.input @cache {index_dim = 0 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>, name = "past.0.key", source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
  core.input @cache {name = "past.0.key", index_dim = 0 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
  // CHECK: core.output @y {name = "logits", result_shape = array<i64: 1, 2, 8>, type = tensor<2x8xf32, #mesh.layout<[*, y:2]>>}
  core.output @y {name = "logits", result_shape = array<i64: 1, 2, 8>, type = tensor<2x8xf32, #mesh.layout<[*, y:2]>>}
  // [L, KVH, D] returned as [1, KVH, L, D].
  // CHECK: core.output @o {name = "present", permutation = array<i64: 1, 0, 2>, result_shape = array<i64: 1, 2, 2, 4>, type = tensor<2x2x4xf32, #mesh.layout<[y:2, *, *]>>}
  core.output @o {name = "present", permutation = array<i64: 1, 0, 2>, result_shape = array<i64: 1, 2, 2, 4>, type = tensor<2x2x4xf32, #mesh.layout<[y:2, *, *]>>}
  // The positions gathered back out of the slots.
  // CHECK: core.output @cache {index_dim = 0 : i64, index_map = array<i64: 0, 1, 3, 4, 5>, name = "present.0.key", result_shape = array<i64: 1, 1, 5, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
  core.output @cache {name = "present.0.key", index_dim = 0 : i64, index_map = array<i64: 0, 1, 3, 4, 5>, result_shape = array<i64: 1, 1, 5, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // CHECK: core.rows <reduce_sumsq> [@sumsq, @x] {m = 2 : i64, n = 4 : i64}
    core.rows <reduce_sumsq> [@sumsq, @x] {m = 2 : i64, n = 4 : i64}
    // CHECK: core.rows <rms_scale> [@y, @x, @sumsq, @w] {k = 8 : i64, m = 2 : i64, n = 4 : i64, scalar = 1.000000e-05 : f64}
    core.rows <rms_scale> [@y, @x, @sumsq, @w] {m = 2 : i64, k = 8 : i64, n = 4 : i64, scalar = 1.0e-05 : f64}
    // CHECK: core.rows <rope> [@q, @q, @cos, @sin] {k = 4 : i64, m = 1 : i64, n = 4 : i64}
    core.rows <rope> [@q, @q, @cos, @sin] {m = 1 : i64, k = 4 : i64, n = 4 : i64}
    // CHECK: core.rows <attn_scores> [@s, @q, @keys] {groups = 2 : i64, k = 3 : i64, m = 1 : i64, n = 4 : i64, scalar = 5.000000e-01 : f64, valid = "(5 - ly * 3) * ((5 - ly * 3) > 0)"}
    core.rows <attn_scores> [@s, @q, @keys] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 4 : i64, scalar = 5.000000e-01 : f64, valid = "(5 - ly * 3) * ((5 - ly * 3) > 0)"}
    // CHECK: core.rows <reduce_max> [@max, @s] {m = 2 : i64, n = 3 : i64}
    core.rows <reduce_max> [@max, @s] {m = 2 : i64, n = 3 : i64}
    // CHECK: core.rows <softmax_exp> [@s, @max] {m = 2 : i64, n = 3 : i64}
    core.rows <softmax_exp> [@s, @max] {m = 2 : i64, n = 3 : i64}
    // CHECK: core.rows <reduce_sum> [@sum, @s] {m = 2 : i64, n = 3 : i64}
    core.rows <reduce_sum> [@sum, @s] {m = 2 : i64, n = 3 : i64}
    // CHECK: core.rows <attn_values> [@o, @s, @values] {groups = 2 : i64, k = 3 : i64, m = 1 : i64, n = 4 : i64}
    core.rows <attn_values> [@o, @s, @values] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 4 : i64}
    // CHECK: core.rows <div_rows> [@o, @sum] {m = 2 : i64, n = 4 : i64}
    core.rows <div_rows> [@o, @sum] {m = 2 : i64, n = 4 : i64}
    // CHECK: core.rows <regrid> [@wide, @x] {groups = 2 : i64, k = 4 : i64, m = 2 : i64, n = 2 : i64, position = "lx", valid = "(lx + i + 1) % W"}
    core.rows <regrid> [@wide, @x] {m = 2 : i64, groups = 2 : i64, k = 4 : i64, n = 2 : i64, valid = "(lx + i + 1) % W", position = "lx"}
    // CHECK: core.rows <flash_step> [@o, @ml, @q, @kv] {groups = 2 : i64, k = 1 : i64, m = 2 : i64, n = 2 : i64, position = "ly * 2", scalar = 0.69999999999999996 : f64, valid = "(ly + i) % H * 2"}
    core.rows <flash_step> [@o, @ml, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 2 : i64, scalar = 0.7 : f64, valid = "(ly + i) % H * 2", position = "ly * 2"}
    // CHECK: core.elementwise <max> @max, @max, @sum
    core.elementwise <max> @max, @max, @sum
    // CHECK: core.elementwise <swiglu> @y, @x, @y
    core.elementwise <swiglu> @y, @x, @y
  }
}
