// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=12}))' | FileCheck %s

// Keys over lanes: 2 KV heads of dimension 4 are 4 lanes [S, 4, 2], read
// back as [1, KVH, S, D] through the view [S, KVH, D / 2, 2], rotate-half
// pairs (u before i). The decode cache [1, 4, 12, 2] is read the same way,
// [1, KVH, D / 2, slots, 2], its positions out of the slots.
// CHECK: mesh.kv_handoff {{.*}} : tensor<5x4x2xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<1x4x12x2xf32, #mesh.layout<[*, x:2, y:4, *]>>
// CHECK: mesh.collect {{.*}}{index_dim = 3 : i64, index_map = array<i64: 0, 3, 6, 9, 10>, permutation = array<i64: 0, 1, 3, 4, 2>, view = array<i64: 1, 2, 2, 12, 2>} : tensor<1x4x12x2xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x5x4xf32>

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<5x4x2xf32>) -> tensor<1x2x5x4xf32> attributes {tfm.output_names = ["present.0.key"]} {
    %k = mesh.distribute %x : tensor<5x4x2xf32> -> tensor<5x4x2xf32, #mesh.layout<[y:4, x:2, *]>>
    %o = mesh.collect %k {permutation = array<i64: 1, 0, 3, 2>, view = array<i64: 5, 2, 2, 2>} : tensor<5x4x2xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<1x2x5x4xf32>
    return %o : tensor<1x2x5x4xf32>
  }
}
