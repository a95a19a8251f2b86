// RUN: wafer-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{grid 2000x7 does not fit target 'wse2' (fabric 994x750 cores, rows x columns)}}
module attributes {mesh.grid = #mesh.grid<2000x7>,
    mesh.target = #mesh.target<name = "wse2", fabric_width = 750,
      fabric_height = 994, clock_hz = 1100000000, sram_bytes = 49152,
      routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5,
      link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
}

// -----

// expected-error @+1 {{grid 0x7 must have at least one core per axis}}
module attributes {mesh.grid = #mesh.grid<0x7>} {
}

// -----

// expected-error @+1 {{'mesh.grid' must be a #mesh.grid}}
module attributes {mesh.grid = 3} {
}

// -----

// expected-error @+1 {{'mesh.target' must be a #mesh.target}}
module attributes {mesh.target = "wse2"} {
}

// -----

// expected-error @+1 {{unknown mesh attribute '"mesh.other"'}}
module attributes {mesh.other = 1} {
}

// -----

// expected-error @+1 {{target field 'sram_bytes' must be positive, got 0}}
module attributes {mesh.target = #mesh.target<name = "t", fabric_width = 750,
      fabric_height = 994, clock_hz = 1100000000, sram_bytes = 0,
      routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5,
      link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
}

// -----

// expected-error @+1 {{target field 'relay_cycles' must not be negative, got -1}}
module attributes {mesh.target = #mesh.target<name = "t", fabric_width = 750,
      fabric_height = 994, clock_hz = 1100000000, sram_bytes = 10,
      routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = -1,
      link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
}

// -----

// expected-error @+1 {{layout splits two dimensions along x}}
func.func private @f(tensor<4x4xf32, #mesh.layout<[x:2, x:2]>>)

// -----

// expected-error @+1 {{layout block count must be positive}}
func.func private @f(tensor<4x4xf32, #mesh.layout<[y:0, x:2]>>)

// -----

// expected-error @+1 {{expected '*', 'x:N' or 'y:N'}}
func.func private @f(tensor<4x4xf32, #mesh.layout<[z:2, x:2]>>)

// -----

// expected-error @+1 {{K-tree needs K >= 1, got 0}}
func.func private @f() attributes {k = #mesh.allreduce<ktree, k = 0>}

// -----

// expected-error @+1 {{K-tree needs K >= 1, got 0}}
func.func private @f() attributes {k = #mesh.allreduce<ktree>}

// -----

// expected-error @+1 {{ring allreduce takes no K}}
func.func private @f() attributes {k = #mesh.allreduce<ring, k = 2>}

// -----

// expected-error @+2 {{to be one of: ktree, pipeline, ring}}
// expected-error @+1 {{failed to parse Mesh_AllreduceAttr parameter 'algorithm'}}
func.func private @f() attributes {k = #mesh.allreduce<tree>}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rank(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{result layout has 1 entries for a rank-2 tensor}}
    %a = mesh.distribute %x : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @blocks(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{result splits into 4 blocks, not a multiple of the grid's width 3}}
    %a = mesh.distribute %x : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:4]>>
    return
  }
}

// -----

func.func @nogrid(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{needs an enclosing 'mesh.grid' attribute}}
  %a = mesh.distribute %x : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
  return
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @nolayout(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{result must have a #mesh.layout encoding}}
    %a = mesh.distribute %x : tensor<4x4xf32> -> tensor<4x4xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @hostsource(%x: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{source must be a host tensor without a layout}}
    %a = mesh.distribute %x : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @perm(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{permutation is not a permutation}}
    %a = mesh.distribute %x {permutation = array<i64: 0, 0>} : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @permsize(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{permutation needs 2 entries}}
    %a = mesh.distribute %x {permutation = array<i64: 0>} : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @broadcast(%x: tensor<3xf32>) {
    // expected-error @+1 {{source dimension 0 of size 3 does not broadcast to 4}}
    %a = mesh.distribute %x : tensor<3xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rankdown(%x: tensor<2x4x4xf32>) {
    // expected-error @+1 {{cannot broadcast a rank-3 source to rank 2}}
    %a = mesh.distribute %x : tensor<2x4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect(%x: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{result must have the source's number of elements}}
    %a = mesh.collect %x : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x2xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_layout(%x: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{result must be a host tensor without a layout}}
    %a = mesh.collect %x : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @gemm_layout(%a: tensor<4x6xf32, #mesh.layout<[y:2, x:3]>>, %b: tensor<6x3xf32, #mesh.layout<[y:6, x:3]>>) {
    // expected-error @+1 {{lhs layout must be #mesh.layout<[y:2, x:6]>, got #mesh.layout<[y:2, x:3]>}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x6xf32, #mesh.layout<[y:2, x:3]>>, tensor<6x3xf32, #mesh.layout<[y:6, x:3]>> -> tensor<4x3xf32, #mesh.layout<[y:2, x:3]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_shape(%a: tensor<4x6xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<5x3xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{shapes do not form [M, K...] x [K..., N...] -> [M, N...]}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x6xf32, #mesh.layout<[y:2, x:2]>>, tensor<5x3xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x3xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_rank(%a: tensor<4xf32, #mesh.layout<[y:2]>>, %b: tensor<4x3xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{expects [M, K...] x [K..., N...] -> [M, N...]}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4xf32, #mesh.layout<[y:2]>>, tensor<4x3xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x3xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_interleave(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2], interleave>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{operands and results must agree on interleave}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2], interleave>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @summa_colors(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{needs 4 routing colors (east, west, south, north), got 2}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<summa>, colors = array<i32: 0, 2>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<1x2>} {
  func.func @summa_not_square(%a: tensor<4x4xf32, #mesh.layout<[y:1, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{summa needs a square grid, got 1x2}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<summa>} : tensor<4x4xf32, #mesh.layout<[y:1, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:1, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_colors(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{needs 2 routing colors (x ring, y ring), got 1}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 0>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>,
    mesh.target = #mesh.target<name = "tiny", fabric_width = 4,
      fabric_height = 4, clock_hz = 1100000000, sram_bytes = 49152,
      routes_per_core = 4, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5,
      link_words_per_cycle = 1, macs_f32 = 1, macs_f16 = 4, macs_f16_f32 = 2>} {
  func.func @gemm_budget(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{routing color 7 exceeds the target's budget of 4 colors}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 0, 7>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @negative_color(%x: tensor<1x4xf32, #mesh.layout<[*, y:2]>>, %w: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{routing colors must not be negative}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: -1>} : tensor<1x4xf32, #mesh.layout<[*, y:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x4xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_rows(%x: tensor<2x4xf32, #mesh.layout<[*, y:2]>>, %w: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{expects [1, K...] x [K..., N...] -> [1, N...]}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<2x4xf32, #mesh.layout<[*, y:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<2x4xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_shape(%x: tensor<1x6xf32, #mesh.layout<[*, y:2]>>, %w: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{shapes do not form [1, K...] x [K..., N...] -> [1, N...]}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<1x6xf32, #mesh.layout<[*, y:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x4xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_layout(%x: tensor<1x4xf32, #mesh.layout<[*, y:2]>>, %w: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{lhs must split K along one grid axis and the result N along the other}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<1x4xf32, #mesh.layout<[*, y:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x4xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

// An x-split vector takes the transposed orientation: the weight must be
// placed [x:W, y:H].
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_transposed_layout(%x: tensor<1x4xf32, #mesh.layout<[*, x:2]>>, %w: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{rhs layout must be the lhs's K layout followed by the result's N layout}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<1x4xf32, #mesh.layout<[*, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x4xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @map(%a: tensor<4x4xf32>) {
    // expected-error @+1 {{result must have a #mesh.layout encoding}}
    %c = mesh.map <mul> %a, %a : tensor<4x4xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_mixed_elements(%a: tensor<4x4xf16, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x4xf16, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}
