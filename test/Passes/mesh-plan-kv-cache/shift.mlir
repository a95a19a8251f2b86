// RUN: wafer-opt %s --mesh-plan-kv-cache | FileCheck %s
// RUN: wafer-opt %s --mesh-plan-kv-cache --mesh-allocate-routes --convert-mesh-to-core | FileCheck %s --check-prefix=LOWER

// 4 rows; the 9 past tokens are held 2, 2, 2, 3 (extras at the bottom).
// Concat appends token 9 to the bottom row (2, 2, 2, 4: 4 slots a row);
// the shift leaves 2, 2, 3, 3 (3 slots a row): the bottom row passes its
// oldest token (8) up.
// CHECK: mesh.kv_append {{.*}}policy = #mesh.kv_policy<shift>
// CHECK: mesh.collect {{.*}}index_map = array<i64: 0, 1, 3, 4, 6, 7, 8, 9, 10, 11>

// The rows that hold one token more (t % 4 of them at the bottom: at t = 9
// the bottom row) send their oldest token north and close the gap; the row
// above each takes it into slot t / 4 (2); the bottom row stores the new
// token there. The position t is the run's (the program's default: 9), so
// the same program serves later steps.
// LOWER: kv_capacity_tokens = {{[0-9]+}} : i64, ops = {{\[\["kv_append0", "kv_append", "shift"\]\]}}, position = 9 : i64
// LOWER: core.channel @hop_in_y
// LOWER: core.when "ly >= 4 - t % 4" {
// LOWER: core.send @kv0_up on @hop_in_y
// LOWER: core.repeat "1 * (t / 4)" {
// LOWER: core.when "ly >= 4 - t % 4 - 1 && ly < 3" {
// LOWER-NEXT: core.recv @kv0_from_below on @hop_in_y
// LOWER: core.when "ly == 3" {
// LOWER: core.copy @t0["i * 3 + t / 4"], @t1["i * 1 + 0"]

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%past: tensor<1x2x9x4xf32>, %token: tensor<1x2x4xf32>) -> tensor<1x2x10x4xf32> {
    %c = mesh.distribute %past {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>} : tensor<1x2x9x4xf32> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %n = mesh.distribute %token : tensor<1x2x4xf32> -> tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>>
    %k = mesh.kv_append %c, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %r = mesh.collect %k {index_dim = 2 : i64, index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x10x4xf32>
    return %r : tensor<1x2x10x4xf32>
  }
}
