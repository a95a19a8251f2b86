// RUN: wafer-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{grid 1000x2 does not fit target 'wse2'}}
core.program attributes {grid = #mesh.grid<1000x2>, ops = [], target = #mesh.target<base = "wse2">} {
}

// -----

// expected-error @+1 {{position -1 is negative}}
core.program attributes {grid = #mesh.grid<1x1>, ops = [], position = -1, target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:0:1, y = 0:0:1> {
  }
}

// -----

// expected-error @+1 {{bound input 'position_ids' must be bound to "positions" or "ones"}}
core.program attributes {bound_inputs = {position_ids = "zeros"}, grid = #mesh.grid<1x1>, ops = [], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:0:1, y = 0:0:1> {
  }
}

// -----

// expected-error @+1 {{'ops' entries must be [name, kind, algorithm]}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m"]], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{roles cover 2 of the grid's 4 cores}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.role @top at #core.cores<x = 0:1:1, y = 0:0:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
  // expected-error @+1 {{overlaps role @all}}
  core.role @odd at #core.cores<x = 1:1:1, y = 1:1:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{selects cores outside the 2x2 grid}}
  core.role @all at #core.cores<x = 0:2:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{core set needs 0 <= lo <= hi and step >= 1 on each axis}}
func.func private @f() attributes {s = #core.cores<x = 2:1:1, y = 0:1:1>}

// -----

// expected-error @+1 {{buffers need 60000 bytes per core; target 'wse2' has 49152}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[15000] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{needs at least one element}}
  core.buffer @a[0] : f32 at 0
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{offset must be a non-negative multiple of 4}}
  core.buffer @a[4] : f32 at 2
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{supports f32 and f16 elements only}}
  core.buffer @a[4] : bf16 at 0
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.channel @c {
    // expected-error @+1 {{color 24 is outside the target's 24 routing colors}}
    core.route color 24 at #core.cores<x = 0:0:1, y = 0:0:1> from ramp to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.channel @c {
    // expected-error @+1 {{sends a message back where it came from}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from east to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.channel @c {
    // expected-error @+1 {{needs at least one output port}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from east to []
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.channel @c {
    // expected-error @+1 {{selects cores outside the grid}}
    core.route color 1 at #core.cores<x = 0:5:1, y = 0:0:1> from ramp to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.channel @c {
    // expected-error @+1 {{unknown router port 'up'}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from ramp to [up]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{needs 1 elements per core but buffer @a has 4}}
  core.input @a {name = "x", source_shape = array<i64: 2, 2>, type = tensor<2x2xf32, #mesh.layout<[y:2, x:2]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{type must be a ranked tensor with a matching #mesh.layout}}
  core.output @a {name = "y", type = tensor<2x2xf32>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{takes its data from a weight file or a value, not both}}
  core.input @a {name = "x", source_shape = array<i64: 2, 2>, weight_file = "m.onnx", value = dense<1.0> : tensor<2x2xf32>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{value shape differs from source_shape}}
  core.input @a {name = "x", source_shape = array<i64: 4>, value = dense<1.0> : tensor<2x2xf32>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{names unknown buffer @b}}
    core.zero @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{names unknown channel @nowhere}}
    core.send @a on @nowhere
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{tiles 2x2 * 2x3 do not fit the buffers}}
    core.gemm_tile @a, @a, @a {m = 2 : i64, k = 2 : i64, n = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs positive m, k, n}}
    core.gemm_tile @a, @a, @a {m = 0 : i64, k = 2 : i64, n = 2 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{tiles do not fit the buffers}}
    core.gemv_tile @a, @a, @a {k = 2 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs positive k, n}}
    core.gemv_tile @a, @a, @a {k = 0 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.elementwise <add> @a, @a, @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.swap @a, @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{slot size 3 does not divide the buffer's 4 elements}}
    core.rotate_slots @a {slot = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "allgather"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[6] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{slot size 4 does not divide a buffer's 6 elements}}
    core.copy @a["0"], @b["0"] {size = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "allgather"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{unknown variable 'k'}}
    core.copy @a["k"], @a["0"] {size = 2 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.channel @c {
  }
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{must relay between two different channels}}
    core.relay @a from @c to @c
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.channel @c {
  }
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs two distinct buffers of the same size}}
    core.combine_relay <add> @a, @b on @c
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.channel @c {
  }
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs two distinct buffers of the same size}}
    core.combine_relay <max> @a, @a on @c
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.channel @c {
  }
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{combines with add, mul or max, not swiglu}}
    core.combine_relay <swiglu> @a, @b on @c
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{unknown channel}}
    core.combine_relay <add> @a, @b on @nowhere
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{expression 'lx +'}}
    core.repeat "lx +" {
    }
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{expression 'q == 1'}}
    core.when "q == 1" {
    }
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{op index 3 is outside the program's 1 ops}}
    core.mark 3
  }
}

// -----

func.func @outside() {
  // expected-error @+1 {{must be inside a core.program}}
  core.mark 0
  return
}

// -----

//===----------------------------------------------------------------------===//
// core.rows
//===----------------------------------------------------------------------===//

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{names unknown buffer @nope}}
    core.rows <reduce_sum> [@a, @nope] {m = 1 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+2 {{expected ::wafer::core::RowKernel to be one of: reduce_sum, reduce_sumsq, reduce_max, rms_scale, rope, attn_scores, softmax_exp, attn_values, div_rows, regrid, flash_step}}
    // expected-error @+1 {{failed to parse Core_RowKernelAttr parameter 'value'}}
    core.rows <softmax> [@a, @b] {m = 1 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{sizes out of range}}
    core.rows <reduce_sum> [@a, @b] {m = -1 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{sizes out of range}}
    core.rows <attn_values> [@a, @b, @b] {m = 1 : i64, groups = 0 : i64, k = 1 : i64, n = 1 : i64}
  }
}

// -----

// Each size is in range but m * n = 2^41 is not.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{sizes too large}}
    core.rows <softmax_exp> [@a, @b] {m = 2097152 : i64, n = 1048576 : i64}
  }
}

// -----

// rms_scale divides by k, the normalised length.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[8] : f32 at 0
  core.buffer @x[8] : f32 at 32
  core.buffer @s[2] : f32 at 64
  core.buffer @w[4] : f32 at 72
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{count must be positive}}
    core.rows <rms_scale> [@o, @x, @s, @w] {m = 2 : i64, k = 0 : i64, n = 4 : i64, scalar = 1.0e-05 : f64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[6] : f32 at 0
  core.buffer @c[2] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{dimension 3 is odd}}
    core.rows <rope> [@o, @o, @c, @c] {m = 1 : i64, k = 2 : i64, n = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{regrid needs positive rows and widths}}
    core.rows <regrid> [@a, @b] {m = 0 : i64, groups = 2 : i64, k = 2 : i64, n = 2 : i64, valid = "0", position = "lx"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.buffer @c[4] : f32 at 32
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs 2 buffers, has 3}}
    core.rows <reduce_sum> [@a, @b, @c] {m = 1 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[8] : f32 at 0
  core.buffer @x[8] : f32 at 32
  core.buffer @s[2] : f32 at 64
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs 4 buffers, has 3}}
    core.rows <rms_scale> [@o, @x, @s] {m = 2 : i64, k = 4 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffer @b has 4 elements, needs 6}}
    core.rows <reduce_sum> [@a, @b] {m = 2 : i64, n = 3 : i64}
  }
}

// -----

// attn_scores writes m * groups * k scores.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[16] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffer @s has 6 elements, needs 8}}
    core.rows <attn_scores> [@s, @q, @k] {m = 1 : i64, groups = 2 : i64, k = 4 : i64, n = 4 : i64, scalar = 5.000000e-01 : f64, valid = "4"}
  }
}

// -----

// flash_step keeps a running sum and max per query: 2 * m * k * groups.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @ml[4] : f32 at 256
  core.buffer @q[64] : f32 at 272
  core.buffer @kv[64] : f32 at 528
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffer @ml has 4 elements, needs 8}}
    core.rows <flash_step> [@o, @ml, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, valid = "0", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel takes no `valid`}}
    core.rows <reduce_max> [@a, @b] {m = 1 : i64, n = 4 : i64, valid = "1"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `valid`}}
    core.rows <attn_scores> [@s, @q, @k] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel takes no `position`}}
    core.rows <attn_scores> [@s, @q, @k] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 4 : i64, valid = "3", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @ml[8] : f32 at 256
  core.buffer @q[64] : f32 at 288
  core.buffer @kv[64] : f32 at 544
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `valid`}}
    core.rows <flash_step> [@o, @ml, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, scalar = 2.500000e-01 : f64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @ml[8] : f32 at 256
  core.buffer @q[64] : f32 at 288
  core.buffer @kv[64] : f32 at 544
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `position`}}
    core.rows <flash_step> [@o, @ml, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, valid = "ly * 2"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `position`}}
    core.rows <regrid> [@a, @b] {m = 1 : i64, groups = 2 : i64, k = 2 : i64, n = 2 : i64, valid = "(lx + 1) % W"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel takes no `position`}}
    core.rows <div_rows> [@a, @b] {m = 1 : i64, n = 4 : i64, position = "0"}
  }
}

// -----

// dst holds slots of m * n = 4 elements: 6 is not a whole number of them.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @d[6] : f32 at 0
  core.buffer @s[6] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{regrid buffers must hold whole slots}}
    core.rows <regrid> [@d, @s] {m = 2 : i64, groups = 2 : i64, k = 3 : i64, n = 2 : i64, valid = "(lx + 1) % W", position = "lx"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @d[4] : f32 at 0
  core.buffer @s[6] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 0 and 1 must not alias}}
    core.rows <regrid> [@d, @d] {m = 2 : i64, groups = 2 : i64, k = 2 : i64, n = 2 : i64, valid = "(lx + 1) % W", position = "lx"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[6] : f32 at 0
  core.buffer @p[6] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 0 and 2 must not alias}}
    core.rows <attn_values> [@o, @p, @o] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 2 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[12] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 0 and 2 must not alias}}
    core.rows <attn_scores> [@s, @q, @s] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 2 : i64, valid = "3"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @ml[8] : f32 at 256
  core.buffer @kv[64] : f32 at 288
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 0 and 2 must not alias}}
    core.rows <flash_step> [@o, @ml, @o, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, valid = "0", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{expression '9 - ly *'}}
    core.rows <attn_scores> [@s, @q, @k] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 4 : i64, valid = "9 - ly *"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @ml[8] : f32 at 256
  core.buffer @q[64] : f32 at 288
  core.buffer @kv[64] : f32 at 544
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{unknown variable 'row'}}
    core.rows <flash_step> [@o, @ml, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, valid = "ly * 2", position = "row * 2"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.elementwise <max> @a, @a, @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.elementwise <swiglu> @a, @b, @a
  }
}

// -----

//===----------------------------------------------------------------------===//
// core.input {gather_ids, index_dim, index_map}, core.output {result_shape}
//===----------------------------------------------------------------------===//

// gather_ids selects rows of an initializer: the table comes from a weight file.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @e[8] : f32 at 0
  // expected-error @+1 {{gathers rows of a weight: needs weight_file}}
  core.input @e {name = "embed.weight", gather_ids = "input_ids", source_shape = array<i64: 1, 8>, type = tensor<1x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_dim and index_map go together}}
  core.input @c {name = "past", index_dim = 0 : i64, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_dim and index_map go together}}
  core.input @c {name = "past", index_map = array<i64: 0, 1, -1, 2, 3, -1>, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

// One entry per placed coordinate: 6, not 5.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_map does not fit the placed tensor}}
  core.input @c {name = "past", index_dim = 0 : i64, index_map = array<i64: 0, 1, -1, 2, 3>, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_map does not fit the placed tensor}}
  core.input @c {name = "past", index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_map does not fit the placed tensor}}
  core.input @c {name = "past", index_dim = -1 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>, source_shape = array<i64: 4, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

// The source must have the placed tensor's rank.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_map does not fit the placed tensor}}
  core.input @c {name = "past", index_dim = 0 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>, source_shape = array<i64: 32>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @y[32] : f32 at 0
  // expected-error @+1 {{result_shape must hold the tensor's elements}}
  core.output @y {name = "logits", result_shape = array<i64: 1, 1, 30>, type = tensor<1x32xf32, #mesh.layout<[*, *]>>}
}

// -----

// The gathered output has 5 of the 6 rows: 40 elements.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @y[48] : f32 at 0
  // expected-error @+1 {{result_shape must hold the tensor's elements}}
  core.output @y {name = "present", index_dim = 0 : i64, index_map = array<i64: 0, 1, 3, 4, 5>, result_shape = array<i64: 1, 6, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[64] : f32 at 0
  core.buffer @q[64] : f32 at 256
  core.buffer @kv[64] : f32 at 512
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 1 and 2 must not alias}}
    core.rows <flash_step> [@o, @q, @q, @kv] {m = 2 : i64, groups = 2 : i64, k = 1 : i64, n = 16 : i64, valid = "0", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[8] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers 0 and 1 must not alias}}
    core.rows <softmax_exp> [@o, @o] {m = 2 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @y[48] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
  // expected-error @+1 {{index_dim and index_map go together}}
  core.output @y {name = "c", index_dim = 5 : i64, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @y[48] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
  // expected-error @+1 {{permutation is not a permutation}}
  core.output @y {name = "c", permutation = array<i64: 0, 0>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @y[48] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
  // expected-error @+1 {{index_map entry 9 is outside the tensor}}
  core.output @y {name = "c", index_dim = 0 : i64, index_map = array<i64: 0, 9>, result_shape = array<i64: 2, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<1x1>, ops = [], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{offset must be a non-negative multiple of 4}}
  core.buffer @a[4] : f32 at -4
  core.role @all at #core.cores<x = 0:0:1, y = 0:0:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<1x1>, ops = [], target = #mesh.target<base = "wse2">} {
  // expected-error @+1 {{needs at least one element}}
  core.buffer @a[-5] : f32 at 0
  core.role @all at #core.cores<x = 0:0:1, y = 0:0:1> {
  }
}

// -----

// A grid placed on a dead core (no fabric placement: the identity).
// expected-error @+1 {{fabric placement: grid core x=1 y=0 is placed on the dead core at fabric row 0, column 1}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [], target = #mesh.target<base = "wse2", dead_cores = [[0, 1]]>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{fabric placement: the messages along grid row 1 cross the dead link between fabric row 2, column 0 and row 2, column 1}}
core.program attributes {fabric_rows = array<i64: 0, 2>, grid = #mesh.grid<2x2>, ops = [], target = #mesh.target<base = "wse2", dead_links = [[2, 0, "east"]]>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{fabric placement: the fabric placement lists 3 columns for 2 grid columns}}
core.program attributes {fabric_cols = array<i64: 0, 2, 3>, grid = #mesh.grid<2x2>, ops = [], target = #mesh.target<base = "wse2">} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

// Views: the placed tensor is the row-major reshape of `view`; the user's
// source the row-major reshape of `source_view`; both keep the counts.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{view must have the placed tensor's number of elements}}
  core.input @c {name = "past", view = array<i64: 2, 3, 4>, source_shape = array<i64: 6, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{source_view must have the source's number of elements}}
  core.input @c {name = "past", source_view = array<i64: 2, 3, 4>, source_shape = array<i64: 6, 8>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

// The index map reads the permuted source's dimension: source_view
// dimension 1 (4 entries) for view dimension 0.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{index_map entry 4 is outside the source}}
  core.input @c {name = "past", index_dim = 0 : i64, index_map = array<i64: 0, 1, 2, 3, 4, -1>, permutation = array<i64: 1, 0>, view = array<i64: 6, 8>, source_view = array<i64: 8, 4>, source_shape = array<i64: 32>, type = tensor<48xf32, #mesh.layout<[*]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @c[48] : f32 at 0
  // expected-error @+1 {{view must have the tensor's number of elements}}
  core.output @c {name = "present", view = array<i64: 2, 3, 4>, type = tensor<6x8xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `position`}}
    core.rows <lane_scores> [@s, @q, @k] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 2 : i64, valid = "3"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[4] : f32 at 0
  core.buffer @p[6] : f32 at 24
  core.buffer @v[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel takes no `position`}}
    core.rows <lane_values> [@o, @p, @v] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 2 : i64, valid = "lx * 2", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[6] : f32 at 0
  core.buffer @q[8] : f32 at 24
  core.buffer @k[12] : f32 at 56
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{a KV head needs at least one lane}}
    core.rows <lane_scores> [@s, @q, @k] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 0 : i64, valid = "3", position = "lx * 2"}
  }
}

// -----

// Prefill over lanes: the scores take the first lane only; the statistics
// need the first key's and the first query's positions.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[18] : f32 at 0
  core.buffer @q[12] : f32 at 72
  core.buffer @kv[24] : f32 at 120
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel takes no `position`}}
    core.rows <lane_flash_scores> [@s, @q, @kv] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 2 : i64, valid = "lx * 2", position = "0"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @s[18] : f32 at 0
  core.buffer @ml[18] : f32 at 72
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `position`}}
    core.rows <flash_stats> [@s, @ml] {m = 2 : i64, k = 3 : i64, n = 0 : i64, valid = "ly * 3"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[12] : f32 at 0
  core.buffer @s[18] : f32 at 48
  core.buffer @kv[24] : f32 at 120
  core.buffer @ml[9] : f32 at 216
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // The scores hold 2 heads (18 = 3 queries x 2 x 3 keys): so must the
    // statistics.
    // expected-error @+1 {{buffer @ml has 9 elements, needs 18}}
    core.rows <lane_flash_values> [@o, @s, @kv, @ml] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 2 : i64, valid = "lx * 2"}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @o[12] : f32 at 0
  core.buffer @ml[9] : f32 at 48
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{this kernel needs `valid`}}
    core.rows <lane_div_rows> [@o, @ml] {m = 2 : i64, groups = 1 : i64, k = 3 : i64, n = 2 : i64}
  }
}

// -----

// 13 entries in 2 x 2 balanced blocks are tiles of 4, not of the width 3.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @d[6] : f32 at 0
  core.buffer @s[6] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{regrid length 13 does not give balanced blocks of these widths}}
    core.rows <regrid> [@d, @s] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 3 : i64, valid = "(lx + 1) % W", position = "lx", length = 13 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{only a regrid has a length}}
    core.rows <div_rows> [@a, @b] {m = 1 : i64, n = 4 : i64, length = 4 : i64}
  }
}

// -----

// 12 entries of 2 x 2 blocks in 3 parts: 3 does not divide the 4 blocks.
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @d[6] : f32 at 0
  core.buffer @s[6] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{regrid parts 3 do not divide length 12 and both block counts}}
    core.rows <regrid> [@d, @s] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 3 : i64, valid = "(lx + 1) % W", position = "lx", length = 12 : i64, parts = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  core.buffer @d[6] : f32 at 0
  core.buffer @s[6] : f32 at 24
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{regrid parts 2 need balanced blocks and at least one part}}
    core.rows <regrid> [@d, @s] {m = 1 : i64, groups = 2 : i64, k = 3 : i64, n = 3 : i64, valid = "(lx + 1) % W", position = "lx", parts = 2 : i64}
  }
}
