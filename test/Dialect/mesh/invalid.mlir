// RUN: wafer-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{grid 2000x7 does not fit target 'wse2' (fabric 994x750 cores, rows x columns)}}
module attributes {mesh.grid = #mesh.grid<2000x7>,
    mesh.target = #mesh.target<base = "wse2">} {
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

// expected-error @+1 {{target field 'sram_bytes' must be an integer in [64, 4294967296] (bytes), got 0}}
module attributes {mesh.target = #mesh.target<base = "wse2", name = "t", sram_bytes = 0>} {
}

// -----

// expected-error @+1 {{target field 'relay_cycles' must be an integer in [0, 1000000] (cycles), got -1}}
module attributes {mesh.target = #mesh.target<base = "wse2", name = "t", relay_cycles = -1>} {
}

// -----

// expected-error @+1 {{target field 'clock_hz' must be a number in [1000, 1e+12] (Hz), got 1e+15}}
module attributes {mesh.target = #mesh.target<base = "wse2", clock_hz = 1.0e15>} {
}

// -----

// expected-error @+1 {{unknown target field 'colour'}}
module attributes {mesh.target = #mesh.target<base = "wse2", colour = 3>} {
}

// -----

// Two bases would mix their fields under the first one's name.
// expected-error @+1 {{target field 'base' is given twice}}
module attributes {mesh.target = #mesh.target<base = "wse2", base = "wse3">} {
}

// -----

// expected-error @+1 {{target field 'sram_bytes' is given twice}}
module attributes {mesh.target = #mesh.target<base = "wse2", sram_bytes = 100, sram_bytes = 20000>} {
}

// -----

// Names are printed within one-line errors and reports.
// expected-error @+1 {{target field 'name' has a control character}}
module attributes {mesh.target = #mesh.target<base = "wse2", name = "a\0Ab">} {
}

// -----

// expected-error @+1 {{unknown target preset 'wse9' (known: wse2, wse2-calibrated, wse3)}}
module attributes {mesh.target = #mesh.target<base = "wse9">} {
}

// -----

// expected-error @+1 {{target field 'ramp_cycles' is missing}}
module attributes {mesh.target = #mesh.target<name = "t", fabric_width = 4, fabric_height = 4, clock_hz = 1.0e9, sram_bytes = 4096, routes_per_core = 4, hop_cycles = 1>} {
}

// -----

// The most a JSON target allows: the clock wraps nothing.
// expected-error @+1 {{target field 'relay_cycles' must be an integer in [0, 1000000] (cycles), got 9223372036854775807}}
module attributes {mesh.target = #mesh.target<base = "wse2", relay_cycles = 9223372036854775807>} {
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

// expected-error @+1 {{K-tree needs K >= 1 (or none: chosen later), got -1}}
func.func private @f() attributes {k = #mesh.allreduce<ktree, k = -1>}

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

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_colors(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{needs 2 routing colors (x ring, y ring), got 1}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 0>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>,
    mesh.target = #mesh.target<base = "wse2", name = "tiny", fabric_width = 4, fabric_height = 4, routes_per_core = 4>} {
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

// -----

//===----------------------------------------------------------------------===//
// mesh.distribute and mesh.collect {index_dim, index_map, permutation}
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_dim_alone(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_dim and index_map go together}}
    %a = mesh.distribute %x {index_dim = 2 : i64} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_map_alone(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_dim and index_map go together}}
    %a = mesh.distribute %x {index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

// The source must have the result's rank (no broadcast of leading dims).
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_rank(%x: tensor<2x4x8xf32>) {
    // expected-error @+1 {{index_dim must be a dimension of a source of the result's rank}}
    %a = mesh.distribute %x {index_dim = 1 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_dim_range(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_dim must be a dimension of a source of the result's rank}}
    %a = mesh.distribute %x {index_dim = 4 : i64, index_map = array<i64: 0>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_dim_negative(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_dim must be a dimension of a source of the result's rank}}
    %a = mesh.distribute %x {index_dim = -1 : i64, index_map = array<i64: 0>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_map_size(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_map needs one entry per result coordinate}}
    %a = mesh.distribute %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, 2, 3>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_map_past(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_map entry 4 is outside the source's 4}}
    %a = mesh.distribute %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 4, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

// -1 places a zero; anything below is an error.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_map_negative(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{index_map entry -2 is outside the source's 4}}
    %a = mesh.distribute %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, -2, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

// The entries index the permuted view of the source.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_map_permuted(%x: tensor<8x3xf32>) {
    // expected-error @+1 {{index_map entry 3 is outside the source's 3}}
    %a = mesh.distribute %x {permutation = array<i64: 1, 0>, index_dim = 0 : i64, index_map = array<i64: 0, 1, 2, 3>} : tensor<8x3xf32> -> tensor<4x8xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

// The other dimensions still broadcast.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @index_other_dims(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{source dimension 3 of size 8 does not broadcast to 16}}
    %a = mesh.distribute %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x16xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_index_alone(%x: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{index_dim and index_map go together}}
    %a = mesh.collect %x {index_dim = 2 : i64} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x6x8xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_index_dim(%x: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{index_dim is not a dimension of the source}}
    %a = mesh.collect %x {index_dim = 4 : i64, index_map = array<i64: 0, 1, 3, 4, 5>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x6x8xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_index_entry(%x: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{index_map entry 6 is outside the source's 6}}
    %a = mesh.collect %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, 3, 4, 6>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x5x8xf32>
    return
  }
}

// -----

// A collect reads no empty slot: -1 is an error here.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_index_negative(%x: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{index_map entry -1 is outside the source's 6}}
    %a = mesh.collect %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 3, 4>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x5x8xf32>
    return
  }
}

// -----

// The gathered dimension has the map's size: 5 positions of 6 slots.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_index_elements(%x: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{result must have the source's number of elements}}
    %a = mesh.collect %x {index_dim = 2 : i64, index_map = array<i64: 0, 1, 3, 4, 5>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x6x8xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_perm_size(%x: tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{permutation needs one entry per source dimension}}
    %a = mesh.collect %x {permutation = array<i64: 1, 0>} : tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x8x16xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_perm_repeat(%x: tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{permutation is not a permutation}}
    %a = mesh.collect %x {permutation = array<i64: 1, 1, 2>} : tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x8x16xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_perm_range(%x: tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{permutation is not a permutation}}
    %a = mesh.collect %x {permutation = array<i64: 1, 0, 3>} : tensor<8x2x16xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x8x16xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_heads(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{result must have the source's number of elements}}
    %a = mesh.collect %x : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x1x15xf32>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Head-split mesh.gemm and mesh.gemv
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_heads_rank(%a: tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{expects [M, K...] x [K..., N...] -> [M, N...]}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_heads_n(%a: tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{shapes do not form [M, K...] x [K..., N...] -> [M, N...]}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<8x2x4xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_heads_k(%a: tensor<8x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, %b: tensor<2x4x16xf32, #mesh.layout<[y:2, *, x:2]>>) {
    // expected-error @+1 {{shapes do not form [M, K...] x [K..., N...] -> [M, N...]}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<8x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<2x4x16xf32, #mesh.layout<[y:2, *, x:2]>> -> tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

// The heads (first N dimension) are split along x, the head dimension whole.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemm_heads_layout(%a: tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<16x2x8xf32, #mesh.layout<[y:2, *, x:2]>>) {
    // expected-error @+1 {{rhs layout must be #mesh.layout<[y:2, x:2, *]>, got #mesh.layout<[y:2, *, x:2]>}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<8x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, *, x:2]>> -> tensor<8x2x8xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @gemm_heads_k_layout(%a: tensor<8x6x4xf32, #mesh.layout<[y:2, x:3, *]>>, %b: tensor<6x4x9xf32, #mesh.layout<[y:6, *, x:3]>>) {
    // expected-error @+1 {{lhs layout must be #mesh.layout<[y:2, x:6, *]>, got #mesh.layout<[y:2, x:3, *]>}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<8x6x4xf32, #mesh.layout<[y:2, x:3, *]>>, tensor<6x4x9xf32, #mesh.layout<[y:6, *, x:3]>> -> tensor<8x9xf32, #mesh.layout<[y:2, x:3]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_heads_rank(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{expects [1, K...] x [K..., N...] -> [1, N...]}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x16xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_heads_shape(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %w: tensor<2x4x16xf32, #mesh.layout<[x:2, *, y:2]>>) {
    // expected-error @+1 {{shapes do not form [1, K...] x [K..., N...] -> [1, N...]}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ring>} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<2x4x16xf32, #mesh.layout<[x:2, *, y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

// The heads split into 4 blocks on a width-2 grid: not one block per core.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_heads_blocks(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16x4x8xf32, #mesh.layout<[y:2, x:4, *]>>) {
    // expected-error @+1 {{lhs must split K along one grid axis and the result N along the other (each replicated on the other)}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x4x8xf32, #mesh.layout<[y:2, x:4, *]>> -> tensor<1x4x8xf32, #mesh.layout<[*, x:4, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_heads_unsplit(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16x2x8xf32, #mesh.layout<[y:2, *, *]>>) {
    // expected-error @+1 {{lhs must split K along one grid axis and the result N along the other (each replicated on the other)}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, *, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, *, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_heads_layout(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16x2x8xf32, #mesh.layout<[y:2, *, x:2]>>) {
    // expected-error @+1 {{rhs layout must be the lhs's K layout followed by the result's N layout}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, *, x:2]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// mesh.relayout
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_element(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x12xf16, #mesh.layout<[y:2, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_blocks(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{result splits into 4 blocks, not a multiple of the grid's width 3}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:4]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_interleave(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>) {
    // expected-error @+1 {{operands and results must agree on interleave}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_shape(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{source and result must have one shape}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x24xf32, #mesh.layout<[y:2, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @relayout_axes(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{source and result must split the same dimensions along the same axes}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:2]>> -> tensor<8x12xf32, #mesh.layout<[x:2, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_two(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{only one split dimension may change its blocks}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x12xf32, #mesh.layout<[y:4, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_slots(%x: tensor<8x12xf32, #mesh.layout<[y:4, x:3]>>) {
    // expected-error @+1 {{dimension 0 must keep one block per core}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:4, x:3]>> -> tensor<8x12xf32, #mesh.layout<[y:4, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_same(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{source and result layouts are the same}}
    %r = mesh.relayout %x : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_color(%x: tensor<8x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{routing colors must not be negative}}
    %r = mesh.relayout %x {colors = array<i32: -2>} : tensor<8x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:6]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// mesh.rms_norm
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_element(%x: tensor<1x16xf16, #mesh.layout<[*, y:2]>>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf16, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf16, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_result(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{result must have the input's type}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_weight_size(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<8xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{weight must be [E] for an input [..., E]}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<8xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_weight_rank(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<1x16xf32, #mesh.layout<[*, y:2]>>) {
    // expected-error @+1 {{weight must be [E] for an input [..., E]}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<1x16xf32, #mesh.layout<[*, y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_input_layout(%x: tensor<1x16xf32>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{input must have a #mesh.layout encoding}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_weight_layout(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16xf32, #mesh.layout<[y:3]>>) {
    // expected-error @+1 {{weight splits into 3 blocks, not a multiple of the grid's height 2}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:3]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_whole(%x: tensor<2x16xf32, #mesh.layout<[y:2, *]>>, %w: tensor<16xf32, #mesh.layout<[*]>>) {
    // expected-error @+1 {{the normalised axis must be split along x or y}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<2x16xf32, #mesh.layout<[y:2, *]>>, tensor<16xf32, #mesh.layout<[*]>> -> tensor<2x16xf32, #mesh.layout<[y:2, *]>>
    return
  }
}

// -----

// Four blocks on a height-2 grid: slots, not one block per core.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_slots(%x: tensor<1x16xf32, #mesh.layout<[*, y:4]>>, %w: tensor<16xf32, #mesh.layout<[y:4]>>) {
    // expected-error @+1 {{the normalised axis must be split along x or y}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:4]>>, tensor<16xf32, #mesh.layout<[y:4]>> -> tensor<1x16xf32, #mesh.layout<[*, y:4]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_weight_axis(%x: tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{weight must be split like the normalised axis}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_weight_blocks(%x: tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>, %w: tensor<16xf32, #mesh.layout<[x:4]>>) {
    // expected-error @+1 {{weight must be split like the normalised axis}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<16xf32, #mesh.layout<[x:4]>> -> tensor<2x16xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>,
    mesh.target = #mesh.target<base = "wse2", name = "tiny", fabric_width = 4, fabric_height = 4, routes_per_core = 4>} {
  func.func @rms_colors(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{routing color 4 exceeds the target's budget of 4 colors}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 0, 4>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// mesh.rope
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_element(%x: tensor<1x2x8xf16, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x8xf16, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x8xf16, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_result(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{result must have the input's type}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x16xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_odd(%x: tensor<1x2x6xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x3xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{head_dim must be even and divide the last dimension}}
    %r = mesh.rope %x, %c, %c {head_dim = 3 : i64} : tensor<1x2x6xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x3xf32, #mesh.layout<[*, *]>>, tensor<1x3xf32, #mesh.layout<[*, *]>> -> tensor<1x2x6xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_divide(%x: tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{head_dim must be even and divide the last dimension}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_zero(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{head_dim must be even and divide the last dimension}}
    %r = mesh.rope %x, %c, %c {head_dim = 0 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_pairs_table(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{interleaved cos and sin must have the input's type}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64, interleaved} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_dim(%x: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x16xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{cos and sin must be [rows, head_dim]}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x16xf32, #mesh.layout<[*, *]>>, tensor<1x16xf32, #mesh.layout<[*, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_rows(%x: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, %c: tensor<2x8xf32, #mesh.layout<[y:2, *]>>) {
    // expected-error @+1 {{cos and sin must be [rows, head_dim]}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<2x8xf32, #mesh.layout<[y:2, *]>>, tensor<2x8xf32, #mesh.layout<[y:2, *]>> -> tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_sin_rank(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>, %s: tensor<1x1x8xf32, #mesh.layout<[*, *, *]>>) {
    // expected-error @+1 {{cos and sin must be [rows, head_dim]}}
    %r = mesh.rope %x, %c, %s {head_dim = 8 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x1x8xf32, #mesh.layout<[*, *, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_nolayout(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32>) {
    // expected-error @+1 {{cos/sin must have a #mesh.layout encoding}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_split(%x: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, x:2]>>) {
    // expected-error @+1 {{cos and sin must be laid out like the rows of the input, the head dimension whole}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, x:2]>>, tensor<1x8xf32, #mesh.layout<[*, x:2]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_rows_layout(%x: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, %c: tensor<4x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{cos and sin must be laid out like the rows of the input, the head dimension whole}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x8xf32, #mesh.layout<[*, *]>>, tensor<4x8xf32, #mesh.layout<[*, *]>> -> tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_table_rows_blocks(%x: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, %c: tensor<4x8xf32, #mesh.layout<[y:4, *]>>) {
    // expected-error @+1 {{cos and sin must be laid out like the rows of the input, the head dimension whole}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x8xf32, #mesh.layout<[y:4, *]>>, tensor<4x8xf32, #mesh.layout<[y:4, *]>> -> tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_input_blocks(%x: tensor<1x3x8xf32, #mesh.layout<[*, x:3, *]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{input splits into 3 blocks, not a multiple of the grid's width 2}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x3x8xf32, #mesh.layout<[*, x:3, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x3x8xf32, #mesh.layout<[*, x:3, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rope_split_dim(%x: tensor<1x16xf32, #mesh.layout<[*, x:2]>>, %c: tensor<1x8xf32, #mesh.layout<[*, *]>>) {
    // expected-error @+1 {{the last dimension must be whole on every core}}
    %r = mesh.rope %x, %c, %c {head_dim = 8 : i64} : tensor<1x16xf32, #mesh.layout<[*, x:2]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x16xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// mesh.kv_append
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_element(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf16, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf16, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_result(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{result must have the cache's type}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_cache_rank(%c: tensor<2x5x8xf32, #mesh.layout<[x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{cache must be [1, KVH, L, D]}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<2x5x8xf32, #mesh.layout<[x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<2x5x8xf32, #mesh.layout<[x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_cache_batch(%c: tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{cache must be [1, KVH, L, D]}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_new_rank(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x16xf32, #mesh.layout<[*, x:2]>>) {
    // expected-error @+1 {{new_entry must be [1, KVH, X]}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x16xf32, #mesh.layout<[*, x:2]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_cache_layout(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, *, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{cache layout must be #mesh.layout<[*, x:2, y:2, *]>, got #mesh.layout<[*, x:2, *, *]>}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, *, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, *, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_new_layout(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, y:2]>>) {
    // expected-error @+1 {{new_entry layout must be #mesh.layout<[*, x:2, *]>, got #mesh.layout<[*, x:2, y:2]>}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, y:2]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_new_dim(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{new_entry must be [1, KVH, D] for a cache [1, KVH, L, D]}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_new_heads(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x4x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{new_entry must be [1, KVH, D] for a cache [1, KVH, L, D]}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x4x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_policy_missing(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{requires attribute 'policy'}}
    %k = mesh.kv_append %c, %n {position = 4 : i64} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_slots(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{the cache's 5 slots do not split into 2 rows}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

// 3 slots per row: concat puts token 5 in the bottom row, which already
// holds ceil(5 / 2) = 3 past tokens.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_concat_full(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{a cache of 3 slots per row cannot take token 5 (needs 4)}}
    %k = mesh.kv_append %c, %n {position = 5 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

// shift keeps the rows balanced: token 6 needs ceil(7 / 2) = 4 slots.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_shift_full(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{a cache of 3 slots per row cannot take token 6 (needs 4)}}
    %k = mesh.kv_append %c, %n {position = 6 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_position_negative(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{a cache of 3 slots per row cannot take token -1}}
    %k = mesh.kv_append %c, %n {position = -1 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_color(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{routing colors must not be negative}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<shift>, colors = array<i32: -1>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_policy_unknown(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+2 {{to be one of: concat, shift}}
    // expected-error @+1 {{failed to parse Mesh_KvPolicyAttr parameter 'value'}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<ring>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

func.func @kv_nogrid(%c: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
  // expected-error @+1 {{needs an enclosing 'mesh.grid' attribute}}
  %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mesh.attention, decode form
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_element(%q: tensor<1x2x16xf16, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf16, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf16, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_result(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{result must have the query's type}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x32xf32, #mesh.layout<[*, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_kv_types(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %v: tensor<1x2x4x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{key and value must have one type}}
    %o = mesh.attention %q, %k, %v {scale = 0.25 : f64, length = 4 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x4x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_no_allreduce(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{decode attention needs an allreduce}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_query_rank(%q: tensor<2x16xf32, #mesh.layout<[x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{query must be [1, KVH, X]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<2x16xf32, #mesh.layout<[x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<2x16xf32, #mesh.layout<[x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_query_layout(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, y:2]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{query layout must be #mesh.layout<[*, x:2, *]>, got #mesh.layout<[*, x:2, y:2]>}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, y:2]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_key_batch(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{key must be [1, KVH, L, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<2x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_key_layout(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, y:2, x:2, *]>>) {
    // expected-error @+1 {{key layout must be #mesh.layout<[*, x:2, y:2, *]>, got #mesh.layout<[*, y:2, x:2, *]>}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, y:2, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, y:2, x:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_query_heads(%q: tensor<1x4x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{query must be [1, KVH, G * D] for caches [1, KVH, L, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x4x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x4x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_query_dim(%q: tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{query must be [1, KVH, G * D] for caches [1, KVH, L, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x12xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_length_zero(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{length 0 is outside the cache of 5 positions}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 0 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_length_past(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{length 6 is outside the cache of 5 positions}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 6 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @att_color(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{routing colors must not be negative}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>, colors = array<i32: -1>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// mesh.attention, prefill form
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_allreduce(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{prefill attention takes no allreduce}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64, allreduce = #mesh.allreduce<ring>} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

func.func @prefill_nogrid(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
  // expected-error @+1 {{needs an enclosing 'mesh.grid' attribute}}
  %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
  return
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_rows(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<2x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{prefill attention needs q [L, KVH, G * D] and k, v [L, KVH, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<2x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<2x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_heads(%q: tensor<4x4x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{prefill attention needs q [L, KVH, G * D] and k, v [L, KVH, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x4x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x4x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_dim(%q: tensor<4x2x12xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{prefill attention needs q [L, KVH, G * D] and k, v [L, KVH, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x2x12xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x12xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

// A rank-2 key takes the prefill form, which needs rank-3 operands.
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_rank(%q: tensor<4x16xf32, #mesh.layout<[y:2, x:2]>>, %k: tensor<4x8xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{prefill attention needs q [L, KVH, G * D] and k, v [L, KVH, D]}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x16xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x8xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x8xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x16xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_query_layout(%q: tensor<4x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{query layout must be #mesh.layout<[y:2, x:2, *]>, got #mesh.layout<[*, x:2, *]>}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_key_layout(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:4, x:2, *]>>) {
    // expected-error @+1 {{key layout must be #mesh.layout<[y:2, x:2, *]>, got #mesh.layout<[y:4, x:2, *]>}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:4, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_length(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{length must be the number of queries}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 3 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>,
    mesh.target = #mesh.target<base = "wse2", name = "tiny", fabric_width = 4, fabric_height = 4, routes_per_core = 4>} {
  func.func @prefill_color(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{routing color 9 exceeds the target's budget of 4 colors}}
    %o = mesh.attention %q, %k, %k {scale = 0.25 : f64, length = 4 : i64, colors = array<i32: 9>} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @map_swiglu(%a: tensor<1x8xf32, #mesh.layout<[*, x:3]>>) {
    // expected-error @+1 {{result splits into 3 blocks, not a multiple of the grid's width 2}}
    %c = mesh.map <swiglu> %a, %a : tensor<1x8xf32, #mesh.layout<[*, x:3]>>
    return
  }
}

// -----

// The review's cases: in-place caches, decode lengths, relayouts the
// lowering cannot do.

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @kv_shared(%c: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    // expected-error @+1 {{updates its cache in place: the cache must have no other users}}
    %k = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %v = mesh.kv_append %c, %n {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @decode_length(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %kc: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %vc: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    %k = mesh.kv_append %kc, %n {position = 4 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %v = mesh.kv_append %vc, %n {position = 4 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    // expected-error @+1 {{length 2 must count the past and the new token of both caches}}
    %o = mesh.attention %q, %k, %v {scale = 0.5 : f64, length = 2 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @decode_caches(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{decode attention reads the caches of mesh.kv_append}}
    %o = mesh.attention %q, %k, %k {scale = 0.5 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_rows(%x: tensor<12x12xf32, #mesh.layout<[y:2, x:3]>>) {
    // expected-error @+1 {{the dimensions after the re-blocked one must be whole}}
    %r = mesh.relayout %x : tensor<12x12xf32, #mesh.layout<[y:2, x:3]>> -> tensor<12x12xf32, #mesh.layout<[y:6, x:3]>>
    return
  }
}

// -----

// expected-error @+1 {{target field 'dead_cores': [0, 750] is off the 994x750 (HxW) fabric}}
module attributes {mesh.target = #mesh.target<base = "wse2", dead_cores = [[0, 750]]>} {
}

// -----

// expected-error @+1 {{target field 'dead_cores': [3, 3] is listed twice}}
module attributes {mesh.target = #mesh.target<base = "wse2", dead_cores = [[3, 3], [3, 3]]>} {
}

// -----

// expected-error @+1 {{a dead link goes "east" or "south" from its core}}
module attributes {mesh.target = #mesh.target<base = "wse2", dead_links = [[3, 3, "up"]]>} {
}

// -----

//===----------------------------------------------------------------------===//
// mesh.kv_handoff
//===----------------------------------------------------------------------===//

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_element(%k: tensor<5x2x8xf16, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{operands and result must have one element type}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf16, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_source_rank(%k: tensor<10x8xf32, #mesh.layout<[y:2, x:2]>>) {
    // expected-error @+1 {{source must be [S, KVH, D]}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<10x8xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_source_layout(%k: tensor<5x2x8xf32, #mesh.layout<[y:4, x:2, *]>>) {
    // expected-error @+1 {{source layout must be #mesh.layout<[y:2, x:2, *]>, got #mesh.layout<[y:4, x:2, *]>}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_result_layout(%k: tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{result layout must be #mesh.layout<[*, x:2, y:2, *]>, got #mesh.layout<[*, *, y:2, *]>}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, *, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_heads(%k: tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{result must be [1, KVH, L, D] for a source [S, KVH, D]}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x4x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_rows(%k: tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{the cache's 5 slots do not split into 2 rows}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x5x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @handoff_room(%k: tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{a cache of 2 slots per row cannot hold 5 positions (needs 3)}}
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>} : tensor<5x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x4x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @distribute_offset(%x: tensor<4x4xf32>) {
    // expected-error @+1 {{sram_offset 6 is not a non-negative multiple of 4 bytes}}
    %d = mesh.distribute %x {sram_offset = 6 : i64} : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @view_count(%x: tensor<1x2x4x8xf32>) {
    // expected-error @+1 {{view must have the result's number of elements}}
    %a = mesh.distribute %x {view = array<i64: 2, 4, 4>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @view_broadcast(%x: tensor<2x4x8xf32>) {
    // A source broadcasts to the view, not to the result's shape.
    // expected-error @+1 {{source dimension 1 of size 4 does not broadcast to 8}}
    %a = mesh.distribute %x {view = array<i64: 2, 8, 4>} : tensor<2x4x8xf32> -> tensor<2x4x8xf32, #mesh.layout<[*, x:2, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @collect_view(%x: tensor<2x4x8xf32, #mesh.layout<[*, x:2, y:2]>>) {
    // expected-error @+1 {{view must have the source's number of elements}}
    %a = mesh.collect %x {view = array<i64: 2, 4, 4>} : tensor<2x4x8xf32, #mesh.layout<[*, x:2, y:2]>> -> tensor<64xf32>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @lanes_need_pairs(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %kc: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %vc: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, %n: tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>) {
    %k = mesh.kv_append %kc, %n {position = 4 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %v = mesh.kv_append %vc, %n {position = 4 : i64, policy = #mesh.kv_policy<shift>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    // expected-error @+1 {{lanes need caches [1, KVH * lanes_per_head, L, 2]}}
    %o = mesh.attention %q, %k, %v {scale = 0.5 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>, lanes_per_head = 1 : i64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_lanes_without_allreduce(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x2xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{prefill attention over lanes needs an allreduce}}
    %o = mesh.attention %q, %k, %k {scale = 0.5 : f64, length = 4 : i64, lanes_per_head = 2 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x2xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x2xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @prefill_lanes_not_pairs(%q: tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, %k: tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>) {
    // expected-error @+1 {{lanes need k, v [L, KVH * lanes_per_head, 2]}}
    %o = mesh.attention %q, %k, %k {scale = 0.5 : f64, length = 4 : i64, allreduce = #mesh.allreduce<ring>, lanes_per_head = 2 : i64} : tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>>, tensor<4x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_epsilon_inf(%x: tensor<1x16xf32, #mesh.layout<[*, y:2]>>, %w: tensor<16xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{epsilon must be finite and not negative}}
    %n = mesh.rms_norm %x, %w {epsilon = 0x7FF0000000000000 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @attention_scale_nan(%q: tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, %k: tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>) {
    // expected-error @+1 {{scale must be finite}}
    %o = mesh.attention %q, %k, %k {scale = 0x7FF8000000000000 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ring>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Balanced blocks
//===----------------------------------------------------------------------===//

// expected-error @+1 {{an unsplit dimension has no blocks to balance}}
func.func private @balanced_unsplit(tensor<4x4xf32, #mesh.layout<[* balanced, x:2]>>)

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @gemv_balance(%x: tensor<1x5xf32, #mesh.layout<[*, y:2 balanced]>>, %w: tensor<5x4xf32, #mesh.layout<[y:2, x:2 balanced]>>) {
    // expected-error @+1 {{rhs layout must be the lhs's K layout followed by the result's N layout}}
    %g = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 1>} : tensor<1x5xf32, #mesh.layout<[*, y:2 balanced]>>, tensor<5x4xf32, #mesh.layout<[y:2, x:2 balanced]>> -> tensor<1x4xf32, #mesh.layout<[*, x:2 balanced]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @gemm_balance(%a: tensor<4x7xf32, #mesh.layout<[y:2, x:6 balanced]>>, %b: tensor<7x5xf32, #mesh.layout<[y:6, x:3 balanced]>>) {
    // expected-error @+1 {{lhs and rhs K must agree on which blocks are balanced}}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x7xf32, #mesh.layout<[y:2, x:6 balanced]>>, tensor<7x5xf32, #mesh.layout<[y:6, x:3 balanced]>> -> tensor<4x5xf32, #mesh.layout<[y:2, x:3 balanced]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x3>} {
  func.func @relayout_balance(%x: tensor<8x13xf32, #mesh.layout<[y:2, x:3 balanced]>>) {
    // expected-error @+1 {{source and result must agree on which blocks are balanced}}
    %r = mesh.relayout %x : tensor<8x13xf32, #mesh.layout<[y:2, x:3 balanced]>> -> tensor<8x13xf32, #mesh.layout<[y:2, x:6]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @rms_norm_balance(%x: tensor<1x7xf32, #mesh.layout<[*, y:2 balanced]>>, %w: tensor<7xf32, #mesh.layout<[y:2]>>) {
    // expected-error @+1 {{weight must be split like the normalised axis}}
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<1x7xf32, #mesh.layout<[*, y:2 balanced]>>, tensor<7xf32, #mesh.layout<[y:2]>> -> tensor<1x7xf32, #mesh.layout<[*, y:2 balanced]>>
    return
  }
}

// -----

// expected-error @+1 {{dimension 1 in 3 parts needs balanced blocks that many parts divide}}
func.func private @parts_blocks(tensor<4x4xf32, #mesh.layout<[*, x:4 balanced in 3]>>)

// -----

module attributes {mesh.grid = #mesh.grid<1x4>} {
  func.func @parts_size(%x: tensor<1x6xf32>) {
    // expected-error @+1 {{result's dimension 1 of 6 does not split into 4 equal parts}}
    %d = mesh.distribute %x : tensor<1x6xf32> -> tensor<1x6xf32, #mesh.layout<[*, x:4 balanced in 4]>>
    return
  }
}

// -----

module attributes {mesh.grid = #mesh.grid<2x4>} {
  func.func @lanes_split_unlike(%q: tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced, *]>>, %k: tensor<4x6x2xf32, #mesh.layout<[y:2, x:4, *]>>) {
    // expected-error @+1 {{query and key must split their lanes alike}}
    %o = mesh.attention %q, %k, %k {scale = 0.5 : f64, length = 4 : i64, allreduce = #mesh.allreduce<ktree, k = 2>, lanes_per_head = 3 : i64} : tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced, *]>>, tensor<4x6x2xf32, #mesh.layout<[y:2, x:4, *]>>, tensor<4x6x2xf32, #mesh.layout<[y:2, x:4, *]>> -> tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced, *]>>
    return
  }
}

// -----

// 6 lanes of 3 KV heads in 2 parts of 3 lanes: a part would split a head.
module attributes {mesh.grid = #mesh.grid<2x4>} {
  func.func @lane_parts_split_heads(%q: tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>>, %k: tensor<4x6x2xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>>) {
    // expected-error @+1 {{balanced lanes in 2 parts must hold whole KV heads of 2 lanes each}}
    %o = mesh.attention %q, %k, %k {scale = 0.5 : f64, length = 4 : i64, allreduce = #mesh.allreduce<ktree, k = 2>, lanes_per_head = 2 : i64} : tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>>, tensor<4x6x2xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>>, tensor<4x6x2xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>> -> tensor<4x6x4xf32, #mesh.layout<[y:2, x:4 balanced in 2, *]>>
    return
  }
}
