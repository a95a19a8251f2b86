// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// The transformer ops of the mesh dialect (MeshOps.td) and the head-split
// forms of mesh.gemm and mesh.gemv, in the shapes the decode and prefill
// plans give them. Each module carries its own grid.

module attributes {mesh.grid = #mesh.grid<2x2>} {
  // CHECK-LABEL: func.func @decode
  func.func @decode(%x: tensor<1x16xf32>, %nw: tensor<16xf32>, %wq: tensor<16x2x16xf32>, %wk: tensor<16x2x8xf32>, %cos: tensor<1x8xf32>, %sin: tensor<1x8xf32>, %past: tensor<1x2x4x8xf32>, %wo: tensor<2x16x16xf32>) -> (tensor<1x1x16xf32>, tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>) {
    %xd = mesh.distribute %x : tensor<1x16xf32> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    %w = mesh.distribute %nw : tensor<16xf32> -> tensor<16xf32, #mesh.layout<[y:2]>>
    // CHECK: mesh.rms_norm %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 0, 1>, epsilon = 1.000000e-05 : f64} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    %n = mesh.rms_norm %xd, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 0, 1>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16xf32, #mesh.layout<[y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    %wqd = mesh.distribute %wq : tensor<16x2x16xf32> -> tensor<16x2x16xf32, #mesh.layout<[y:2, x:2, *]>>
    // Head-split N: [1, K] x [K, KVH, X] -> [1, KVH, X].
    // CHECK: mesh.gemv %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x16xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %q = mesh.gemv %n, %wqd {allreduce = #mesh.allreduce<ring>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x16xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %wkd = mesh.distribute %wk : tensor<16x2x8xf32> -> tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>>
    %k = mesh.gemv %n, %wkd {allreduce = #mesh.allreduce<pipeline>} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>, tensor<16x2x8xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    %c = mesh.distribute %cos : tensor<1x8xf32> -> tensor<1x8xf32, #mesh.layout<[*, *]>>
    %s = mesh.distribute %sin : tensor<1x8xf32> -> tensor<1x8xf32, #mesh.layout<[*, *]>>
    // CHECK: mesh.rope %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 8 : i64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %qr = mesh.rope %q, %c, %s {head_dim = 8 : i64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %kr = mesh.rope %k, %c, %s {head_dim = 8 : i64} : tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>>, tensor<1x8xf32, #mesh.layout<[*, *]>> -> tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>>
    // The 4 past tokens balanced over the 2 rows of 3 slots (-1: empty).
    // CHECK: mesh.distribute %{{.*}} {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %cache = mesh.distribute %past {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    // CHECK: mesh.kv_append %{{.*}}, %{{.*}} {colors = array<i32: 5>, policy = #mesh.kv_policy<shift>, position = 4 : i64} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %kc = mesh.kv_append %cache, %kr {position = 4 : i64, policy = #mesh.kv_policy<shift>, colors = array<i32: 5>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    // CHECK: mesh.kv_append %{{.*}}, %{{.*}} {policy = #mesh.kv_policy<concat>, position = 4 : i64}
    %vcache = mesh.distribute %past {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, 2, 3, -1>} : tensor<1x2x4x8xf32> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    %vc = mesh.kv_append %vcache, %kr {position = 4 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x8xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>
    // CHECK: mesh.attention %{{.*}}, %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 2, 3>, length = 5 : i64, relayed, scale = 0.35355339059327379 : f64} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %o = mesh.attention %qr, %kc, %vc {scale = 0.35355339059327379 : f64, length = 5 : i64, allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 2, 3>, relayed} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>>, tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>
    %wod = mesh.distribute %wo : tensor<2x16x16xf32> -> tensor<2x16x16xf32, #mesh.layout<[x:2, *, y:2]>>
    // Head-split K, transposed orientation: [1, KVH, X] x [KVH, X, N] -> [1, N].
    // CHECK: mesh.gemv %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<2x16x16xf32, #mesh.layout<[x:2, *, y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    %y = mesh.gemv %o, %wod {allreduce = #mesh.allreduce<ktree, k = 2>} : tensor<1x2x16xf32, #mesh.layout<[*, x:2, *]>>, tensor<2x16x16xf32, #mesh.layout<[x:2, *, y:2]>> -> tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    // CHECK: mesh.map <swiglu> %{{.*}}, %{{.*}} : tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    %g = mesh.map <swiglu> %y, %y : tensor<1x16xf32, #mesh.layout<[*, y:2]>>
    // The host reads the result back with the graph's unit dimension.
    // CHECK: mesh.collect %{{.*}} : tensor<1x16xf32, #mesh.layout<[*, y:2]>> -> tensor<1x1x16xf32>
    %out = mesh.collect %g : tensor<1x16xf32, #mesh.layout<[*, y:2]>> -> tensor<1x1x16xf32>
    // The host gathers the 5 tokens out of the 6 slots.
    // CHECK: mesh.collect %{{.*}} {index_dim = 2 : i64, index_map = array<i64: 0, 1, 3, 4, 5>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x5x8xf32>
    %present = mesh.collect %kc {index_dim = 2 : i64, index_map = array<i64: 0, 1, 3, 4, 5>} : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x5x8xf32>
    %slots = mesh.collect %vc : tensor<1x2x6x8xf32, #mesh.layout<[*, x:2, y:2, *]>> -> tensor<1x2x6x8xf32>
    return %out, %present, %slots : tensor<1x1x16xf32>, tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>
  }
}

// Prefill on a non-square grid (lcm blocks for MeshGEMM's lhs).
module attributes {mesh.grid = #mesh.grid<2x3>} {
  // CHECK-LABEL: func.func @prefill
  func.func @prefill(%x: tensor<8x12xf32>, %nw: tensor<12xf32>, %wq: tensor<12x3x8xf32>, %wk: tensor<12x3x4xf32>, %cos: tensor<8x4xf32>, %sin: tensor<8x4xf32>, %wo: tensor<3x8x12xf32>) -> (tensor<1x8x12xf32>, tensor<1x3x8x4xf32>) {
    %xd = mesh.distribute %x : tensor<8x12xf32> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>
    %w = mesh.distribute %nw : tensor<12xf32> -> tensor<12xf32, #mesh.layout<[x:3], interleave>>
    // CHECK: mesh.rms_norm %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ring>, epsilon = 1.000000e-05 : f64} : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>, tensor<12xf32, #mesh.layout<[x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>
    %n = mesh.rms_norm %xd, %w {epsilon = 1.0e-05 : f64, allreduce = #mesh.allreduce<ring>} : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>, tensor<12xf32, #mesh.layout<[x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>
    // CHECK: mesh.relayout %{{.*}} {colors = array<i32: 1>} : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:6], interleave>>
    %nr = mesh.relayout %n {colors = array<i32: 1>} : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:6], interleave>>
    %wqd = mesh.distribute %wq : tensor<12x3x8xf32> -> tensor<12x3x8xf32, #mesh.layout<[y:6, x:3, *], interleave>>
    // Head-split N: [M, K] x [K, KVH, X] -> [M, KVH, X].
    // CHECK: mesh.gemm %{{.*}}, %{{.*}} {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 2, 3>} : tensor<8x12xf32, #mesh.layout<[y:2, x:6], interleave>>, tensor<12x3x8xf32, #mesh.layout<[y:6, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %q = mesh.gemm %nr, %wqd {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 2, 3>} : tensor<8x12xf32, #mesh.layout<[y:2, x:6], interleave>>, tensor<12x3x8xf32, #mesh.layout<[y:6, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %wkd = mesh.distribute %wk : tensor<12x3x4xf32> -> tensor<12x3x4xf32, #mesh.layout<[y:6, x:3, *], interleave>>
    %k = mesh.gemm %nr, %wkd {algorithm = #mesh.gemm_algorithm<cannon>} : tensor<8x12xf32, #mesh.layout<[y:2, x:6], interleave>>, tensor<12x3x4xf32, #mesh.layout<[y:6, x:3, *], interleave>> -> tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %c = mesh.distribute %cos : tensor<8x4xf32> -> tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>>
    %s = mesh.distribute %sin : tensor<8x4xf32> -> tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>>
    // CHECK: mesh.rope %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %qr = mesh.rope %q, %c, %s {head_dim = 4 : i64} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %kr = mesh.rope %k, %c, %s {head_dim = 4 : i64} : tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>>, tensor<8x4xf32, #mesh.layout<[y:2, *], interleave>> -> tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    // Prefill: no allreduce, one color (the y ring).
    // CHECK: mesh.attention %{{.*}}, %{{.*}}, %{{.*}} {colors = array<i32: 4>, length = 8 : i64, scale = 5.000000e-01 : f64} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    %o = mesh.attention %qr, %kr, %k {scale = 0.5 : f64, length = 8 : i64, colors = array<i32: 4>} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>>, tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>>
    // CHECK: mesh.relayout %{{.*}} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:6, *], interleave>>
    %or = mesh.relayout %o : tensor<8x3x8xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<8x3x8xf32, #mesh.layout<[y:2, x:6, *], interleave>>
    %wod = mesh.distribute %wo : tensor<3x8x12xf32> -> tensor<3x8x12xf32, #mesh.layout<[y:6, *, x:3], interleave>>
    // Head-split K: [M, KVH, X] x [KVH, X, N] -> [M, N].
    // CHECK: mesh.gemm %{{.*}}, %{{.*}} {algorithm = #mesh.gemm_algorithm<allgather>} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:6, *], interleave>>, tensor<3x8x12xf32, #mesh.layout<[y:6, *, x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>
    %y = mesh.gemm %or, %wod {algorithm = #mesh.gemm_algorithm<allgather>} : tensor<8x3x8xf32, #mesh.layout<[y:2, x:6, *], interleave>>, tensor<3x8x12xf32, #mesh.layout<[y:6, *, x:3], interleave>> -> tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>>
    // CHECK: mesh.collect %{{.*}} : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>> -> tensor<1x8x12xf32>
    %out = mesh.collect %y : tensor<8x12xf32, #mesh.layout<[y:2, x:3], interleave>> -> tensor<1x8x12xf32>
    // The host permutes [L, KVH, D] to [KVH, L, D] and adds the batch.
    // CHECK: mesh.collect %{{.*}} {permutation = array<i64: 1, 0, 2>} : tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<1x3x8x4xf32>
    %present = mesh.collect %kr {permutation = array<i64: 1, 0, 2>} : tensor<8x3x4xf32, #mesh.layout<[y:2, x:3, *], interleave>> -> tensor<1x3x8x4xf32>
    return %out, %present : tensor<1x8x12xf32>, tensor<1x3x8x4xf32>
  }
}
