// RUN: wafer-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{grid 1000x2 does not fit target 'wse2'}}
core.program attributes {grid = #mesh.grid<1000x2>, ops = [], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
}

// -----

// expected-error @+1 {{'ops' entries must be [name, kind, algorithm]}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{roles cover 2 of the grid's 4 cores}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.role @top at #core.cores<x = 0:1:1, y = 0:0:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
  // expected-error @+1 {{overlaps role @all}}
  core.role @odd at #core.cores<x = 1:1:1, y = 1:1:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  // expected-error @+1 {{selects cores outside the 2x2 grid}}
  core.role @all at #core.cores<x = 0:2:1, y = 0:1:1> {
  }
}

// -----

// expected-error @+1 {{core set needs 0 <= lo <= hi and step >= 1 on each axis}}
func.func private @f() attributes {s = #core.cores<x = 2:1:1, y = 0:1:1>}

// -----

// expected-error @+1 {{buffers need 60000 bytes per core; target 'wse2' has 49152}}
core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[15000] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  // expected-error @+1 {{needs at least one element}}
  core.buffer @a[0] : f32 at 0
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  // expected-error @+1 {{offset must be a non-negative multiple of 4}}
  core.buffer @a[4] : f32 at 2
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  // expected-error @+1 {{supports f32 and f16 elements only}}
  core.buffer @a[4] : bf16 at 0
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.channel @c {
    // expected-error @+1 {{color 24 is outside the target's 24 routing colors}}
    core.route color 24 at #core.cores<x = 0:0:1, y = 0:0:1> from ramp to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.channel @c {
    // expected-error @+1 {{sends a message back where it came from}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from east to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.channel @c {
    // expected-error @+1 {{needs at least one output port}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from east to []
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.channel @c {
    // expected-error @+1 {{selects cores outside the grid}}
    core.route color 1 at #core.cores<x = 0:5:1, y = 0:0:1> from ramp to [east]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.channel @c {
    // expected-error @+1 {{unknown router port 'up'}}
    core.route color 1 at #core.cores<x = 0:0:1, y = 0:0:1> from ramp to [up]
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{needs 1 elements per core but buffer @a has 4}}
  core.input @a {name = "x", source_shape = array<i64: 2, 2>, type = tensor<2x2xf32, #mesh.layout<[y:2, x:2]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{type must be a ranked tensor with a matching #mesh.layout}}
  core.output @a {name = "y", type = tensor<2x2xf32>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{takes its data from a weight file or a value, not both}}
  core.input @a {name = "x", source_shape = array<i64: 2, 2>, weight_file = "m.onnx", value = dense<1.0> : tensor<2x2xf32>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  // expected-error @+1 {{value shape differs from source_shape}}
  core.input @a {name = "x", source_shape = array<i64: 4>, value = dense<1.0> : tensor<2x2xf32>, type = tensor<2x2xf32, #mesh.layout<[*, *]>>}
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{names unknown buffer @b}}
    core.zero @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{names unknown channel @nowhere}}
    core.send @a on @nowhere
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{tiles 2x2 * 2x3 do not fit the buffers}}
    core.gemm_tile @a, @a, @a {m = 2 : i64, k = 2 : i64, n = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs positive m, k, n}}
    core.gemm_tile @a, @a, @a {m = 0 : i64, k = 2 : i64, n = 2 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{tiles do not fit the buffers}}
    core.gemv_tile @a, @a, @a {k = 2 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{needs positive k, n}}
    core.gemv_tile @a, @a, @a {k = 0 : i64, n = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.elementwise <add> @a, @a, @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[2] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{buffers must have the same size}}
    core.swap @a, @b
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{slot size 3 does not divide the buffer's 4 elements}}
    core.rotate_slots @a {slot = 3 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "allgather"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.buffer @b[6] : f32 at 16
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{slot size 4 does not divide a buffer's 6 elements}}
    core.copy @a["0"], @b["0"] {size = 4 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "allgather"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{unknown variable 'k'}}
    core.copy @a["k"], @a["0"] {size = 2 : i64}
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.buffer @a[4] : f32 at 0
  core.channel @c {
  }
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{must relay between two different channels}}
    core.relay @a from @c to @c
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{expression 'lx +'}}
    core.repeat "lx +" {
    }
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  core.role @all at #core.cores<x = 0:1:1, y = 0:1:1> {
    // expected-error @+1 {{expression 'q == 1'}}
    core.when "q == 1" {
    }
  }
}

// -----

core.program attributes {grid = #mesh.grid<2x2>, ops = [["m", "gemm", "meshgemm"]], target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
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
