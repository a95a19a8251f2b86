// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=4096}))' | FileCheck %s
// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=4096}),mesh-allocate-routes,mesh-check-memory,convert-mesh-to-core)' | FileCheck %s --check-prefix=LOWER
// RUN: not wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=6}))' 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=token=0}))' 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=0,past.value=32}),mesh-allocate-routes,mesh-check-memory)' 2>&1 | FileCheck %s --check-prefix=OVERLAP

// A cache a prefill left in SRAM (mesh-relayout-phases) is read where it
// is; the other inputs are placed around it from the bottom up.
// CHECK: mesh.distribute %arg0 {index_dim = 2 : i64, index_map = {{.*}}, sram_offset = 4096 : i64}
// CHECK-NOT: sram_offset
// LOWER: core.buffer @[[KEY:t[0-9]+]][12] : f32 at 4096
// LOWER-NEXT: core.buffer @{{t[0-9]+}}[12] : f32 at 0
// LOWER-NEXT: core.buffer @{{t[0-9]+}}[4] : f32 at 48
// LOWER: core.input @[[KEY]] {index_dim = 2 : i64, {{.*}}name = "past.key"

// RUN: not wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-plan-kv-cache{resident=past.key=0,past.key=64}))' 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: {{.*}}mesh-plan-kv-cache: resident 'past.key' is given twice
// FORMAT: error: {{.*}}mesh-plan-kv-cache: resident 'past.key=6' is not NAME=BYTE_OFFSET (a multiple of 4)
// NAME: error: {{.*}}mesh-plan-kv-cache: resident 'token' is not a past KV cache of this function
// OVERLAP: error: {{.*}}mesh-check-memory: the host input at sram_offset 32 overlaps another input's fixed place

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%past: tensor<1x2x9x4xf32> {tfm.name = "past.key"}, %pastv: tensor<1x2x9x4xf32> {tfm.name = "past.value"}, %token: tensor<1x2x4xf32> {tfm.name = "token"}) -> (tensor<1x2x10x4xf32>, tensor<1x2x10x4xf32>) {
    %c = mesh.distribute %past {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>} : tensor<1x2x9x4xf32> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %cv = mesh.distribute %pastv {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>} : tensor<1x2x9x4xf32> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %n = mesh.distribute %token : tensor<1x2x4xf32> -> tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>>
    %k = mesh.kv_append %c, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %v = mesh.kv_append %cv, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %r = mesh.collect %k {index_dim = 2 : i64, index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x10x4xf32>
    %rv = mesh.collect %v {index_dim = 2 : i64, index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x10x4xf32>
    return %r, %rv : tensor<1x2x10x4xf32>, tensor<1x2x10x4xf32>
  }
}
