// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{capacity=20}))' | FileCheck %s
// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=4096}))' | FileCheck %s --check-prefix=RESIDENT

// A cache of attention lanes ([1, lanes, slots, 2]) is placed from the
// host's view [1, KVH, D / 2, slots, 2] of the past: resizing the cache
// resizes the view's slots too, on the way in and on the way back.
// CHECK: mesh.distribute {{.*}}index_dim = 3 : i64, index_map = array<i64: {{.*}}>, permutation = array<i64: 0, 1, 3, 2, 4>, view = array<i64: 1, 1, 2, [[SLOTS:[0-9]+]], 2>} : tensor<1x1x9x2x2xf32> -> tensor<1x2x[[SLOTS]]x2xf32
// CHECK: mesh.collect {{.*}}index_dim = 3 : i64, index_map = array<i64: {{.*}}>, permutation = array<i64: 0, 1, 3, 2, 4>, view = array<i64: 1, 1, 2, [[SLOTS]], 2>} : tensor<1x2x[[SLOTS]]x2xf32

// A prefill over lanes on the same grid leaves its keys in this layout
// (mesh.kv_handoff): the decode program reads them where they lie.
// RESIDENT: mesh.distribute {{.*}}sram_offset = 4096 : i64{{.*}}view = array<i64: 1, 1, 2, {{[0-9]+}}, 2>}

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%past: tensor<1x1x9x4xf32> {tfm.name = "past.key"}, %token: tensor<1x2x2xf32> {tfm.name = "token"}) -> tensor<1x1x10x4xf32> {
    %s = tfm.reshape %past : tensor<1x1x9x4xf32> -> tensor<1x1x9x2x2xf32>
    %c = mesh.distribute %s {index_dim = 3 : i64, index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>, permutation = array<i64: 0, 1, 3, 2, 4>, view = array<i64: 1, 1, 2, 16, 2>} : tensor<1x1x9x2x2xf32> -> tensor<1x2x16x2xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %n = mesh.distribute %token : tensor<1x2x2xf32> -> tensor<1x2x2xf32, #mesh.layout<[*, x:2, *]>>
    %k = mesh.kv_append %c, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x2xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x2xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x2xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %r = mesh.collect %k {index_dim = 3 : i64, index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>, permutation = array<i64: 0, 1, 3, 2, 4>, view = array<i64: 1, 1, 2, 16, 2>} : tensor<1x2x16x2xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x1x10x4xf32>
    return %r : tensor<1x1x10x4xf32>
  }
}
