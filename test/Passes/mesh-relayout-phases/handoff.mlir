// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=12}))' | FileCheck %s
// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=12 policy=concat}))' | FileCheck %s --check-prefix=CONCAT
// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=12}),mesh-place-interleave{always=true},mesh-allocate-routes,convert-mesh-to-core)' | FileCheck %s --check-prefix=LOWER

// A prefill of S = 5 positions on 4 rows. Under shift with room for 12
// tokens every row has 3 slots and holds 1, 1, 1, 2 of the past (the extra
// at the bottom): positions 0..4 go to slots 0, 3, 6, 9, 10.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tfm.output_names = ["logits", "present.0.key", "handoff.past.0.key"]
// CHECK: %[[K:.*]] = mesh.map <add>
// CHECK: %[[C:.*]] = mesh.kv_handoff %[[K]] {policy = #mesh.kv_policy<shift>} : tensor<5x2x4xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<1x2x12x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
// CHECK: %[[H:.*]] = mesh.collect %[[C]] {index_dim = 2 : i64, index_map = array<i64: 0, 3, 6, 9, 10>} : tensor<1x2x12x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x5x4xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[H]]

// Concat sizes the rows for the bottom one, which takes every new token:
// 2 of the past there and 7 to come make 9 slots a row.
// CONCAT: mesh.kv_handoff {{.*}}policy = #mesh.kv_policy<concat>{{.*}} -> tensor<1x2x36x4xf32
// CONCAT: index_map = array<i64: 0, 9, 18, 27, 28>

// Every core keeps the positions of its row out of its own tile, then out
// of each tile the column's ring brings (3 shifts); the tiles hold 2
// positions of one head each. Row ly keeps [ly * 1 + (ly > 3) * (ly - 3),
// +1 + (ly >= 3)).
// LOWER: ops = {{\[\[}}"map0", "map", "add"], ["kv_handoff1", "kv_handoff", "ring"]]
// LOWER: core.zero @[[CACHE:t[0-9]+]]
// LOWER: core.when "((ly) * 2 + 0) < 5 && ((ly) * 2 + 0) >= (ly * 1 + (ly > 3) * (ly - 3)) && ((ly) * 2 + 0) < (ly * 1 + (ly > 3) * (ly - 3)) + (1 + (ly >= 3))" {
// LOWER-NEXT: core.copy @[[CACHE]]["0 + ((ly) * 2 + 0) - (ly * 1 + (ly > 3) * (ly - 3))"], @[[TILE:t[0-9]+]]["0"] {size = 4 : i64}
// LOWER: core.copy @kv_handoff1_pass["0"], @[[TILE]]["0"] {size = 8 : i64}
// LOWER: core.repeat "3" {
// LOWER: core.send @kv_handoff1_pass on @ring_y
// LOWER: core.recv @kv_handoff1_pass_next on @ring_y
// LOWER: core.when "(((ly + i + 1) % H) * 2 + 1) < 5
// LOWER-NEXT: core.copy @[[CACHE]]["0 + (((ly + i + 1) % H) * 2 + 1) - (ly * 1 + (ly > 3) * (ly - 3))"], @kv_handoff1_pass["1"] {size = 4 : i64}
// LOWER: core.output @[[CACHE]] {index_dim = 2 : i64, index_map = array<i64: 0, 3, 6, 9, 10>, name = "handoff.past.0.key"

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<5x2x4xf32>, %l: tensor<5x8xf32>) -> (tensor<5x8xf32>, tensor<1x2x5x4xf32>) attributes {tfm.output_names = ["logits", "present.0.key"]} {
    %k = mesh.distribute %x : tensor<5x2x4xf32> -> tensor<5x2x4xf32, #mesh.layout<[y:4, x:2, *]>>
    %r = mesh.map <add> %k, %k : tensor<5x2x4xf32, #mesh.layout<[y:4, x:2, *]>>
    %d = mesh.distribute %l : tensor<5x8xf32> -> tensor<5x8xf32, #mesh.layout<[y:4, x:2]>>
    %o = mesh.collect %d : tensor<5x8xf32, #mesh.layout<[y:4, x:2]>> -> tensor<5x8xf32>
    %p = mesh.collect %r {permutation = array<i64: 1, 0, 2>} : tensor<5x2x4xf32, #mesh.layout<[y:4, x:2, *]>> -> tensor<1x2x5x4xf32>
    return %o, %p : tensor<5x8xf32>, tensor<1x2x5x4xf32>
  }
}
