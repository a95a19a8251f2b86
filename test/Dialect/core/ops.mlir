// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// CHECK: core.program attributes {grid = #mesh.grid<1x3>, interleave, ops = {{\[\[}}"mm", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750
core.program attributes {grid = #mesh.grid<1x3>, interleave,
    ops = [["mm", "gemm", "meshgemm"]], target = #mesh.target<base = "wse2">} {
  // CHECK: core.buffer @a[4] : f32 at 0
  core.buffer @a[4] : f32 at 0
  core.buffer @b[4] : f32 at 16
  core.buffer @c[4] : f32 at 32
  core.buffer @n[4] : f32 at 48
  // CHECK: core.channel @east {
  // CHECK-NEXT: core.route color 0 at <x = 0:0:1, y = 0:0:1> from ramp to [east]
  // CHECK-NEXT: core.route color 0 at <x = 1:1:1, y = 0:0:1> from west to [east, ramp]
  core.channel @east {
    core.route color 0 at #core.cores<x = 0:0:1, y = 0:0:1> from ramp to [east]
    core.route color 0 at #core.cores<x = 1:1:1, y = 0:0:1> from west to [east, ramp]
    core.route color 0 at #core.cores<x = 2:2:1, y = 0:0:1> from west to [ramp]
  }
  core.channel @west {
    core.route color 1 at #core.cores<x = 2:2:1, y = 0:0:1> from ramp to [west]
    core.route color 1 at #core.cores<x = 0:1:1, y = 0:0:1> from east to [ramp]
  }
  // CHECK: core.input @a {name = "x", source_shape = array<i64: 2, 2>
  core.input @a {name = "x", source_shape = array<i64: 2, 2>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
  core.input @b {name = "w", source_shape = array<i64: 2, 2>, permutation = array<i64: 1, 0>, weight_file = "m.onnx", type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
  core.input @n {name = "k", source_shape = array<i64: 2>, value = dense<[1.0, 2.0]> : tensor<2xf32>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
  // CHECK: core.output @c {name = "y"
  core.output @c {name = "y", type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
  // CHECK: core.role @all at <x = 0:2:1, y = 0:0:1> {
  core.role @all at #core.cores<x = 0:2:1, y = 0:0:1> {
    // CHECK: core.zero @c
    core.zero @c
    // CHECK: core.gemm_tile @c, @a, @b {k = 2 : i64, m = 2 : i64, n = 2 : i64}
    core.gemm_tile @c, @a, @b {m = 2 : i64, k = 2 : i64, n = 2 : i64}
    // CHECK: core.gemv_tile @c, @a, @b {k = 2 : i64, n = 2 : i64}
    core.gemv_tile @c, @a, @b {k = 2 : i64, n = 2 : i64}
    // CHECK: core.elementwise <add> @c, @c, @a
    core.elementwise <add> @c, @c, @a
    core.elementwise <mul> @c, @c, @a
    // CHECK: core.repeat "lx" {
    core.repeat "lx" {
      // CHECK: core.send @a on @east
      core.send @a on @east
      // CHECK: core.recv @n on @east
      core.recv @n on @east
      // CHECK: core.swap @a, @n
      core.swap @a, @n
    }
    // CHECK: core.when "lx == 2 && W > 1" {
    core.when "lx == 2 && W > 1" {
      // CHECK: core.rotate_slots @a {slot = 2 : i64}
      core.rotate_slots @a {slot = 2 : i64}
      // CHECK: core.copy @a["(lx + 1) % 2"], @n["0"] {size = 2 : i64}
      core.copy @a["(lx + 1) % 2"], @n["0"] {size = 2 : i64}
    }
    // CHECK: core.relay @n from @east to @west
    core.when "x == 1" {
      core.relay @n from @east to @west
    }
    // CHECK: core.mark 0
    core.mark 0
  }
}
