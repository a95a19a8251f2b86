// Sizing the caches for a generation: 4 rows, 9 past tokens held 2, 2, 2, 3.
// RUN: wafer-opt %s --mesh-plan-kv-cache="policy=shift capacity=40" | FileCheck %s --check-prefix=SHIFT
// RUN: wafer-opt %s --mesh-plan-kv-cache="policy=concat capacity=20" | FileCheck %s --check-prefix=CONCAT
// RUN: wafer-opt %s --mesh-plan-kv-cache="policy=shift capacity=3" | FileCheck %s --check-prefix=SMALL
// RUN: not wafer-opt %s --mesh-plan-kv-cache="policy=shift capacity=20000" 2>&1 | FileCheck %s --check-prefix=SRAM
// RUN: not wafer-opt %s --mesh-plan-kv-cache="policy=concat capacity=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE

// Shift spreads 40 tokens over all rows: 10 slots each. The past keeps its
// rows; token 9 ends in row 2 after row 3 passes its oldest one up.
// SHIFT: mesh.distribute %{{.*}}index_map = array<i64: 0, 1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, 6, 7, 8, -1, -1, -1, -1, -1, -1, -1>} {{.*}}-> tensor<1x2x40x4xf32
// SHIFT: mesh.kv_append {{.*}}policy = #mesh.kv_policy<shift>{{.*}}-> tensor<1x2x40x4xf32
// SHIFT: mesh.collect {{.*}}index_map = array<i64: 0, 1, 10, 11, 20, 21, 22, 30, 31, 32>}

// Concat keeps appending to the bottom row, which must hold its 3 past
// tokens and the 11 still to come: 14 slots per row.
// CONCAT: -> tensor<1x2x56x4xf32
// CONCAT: mesh.kv_append {{.*}}policy = #mesh.kv_policy<concat>{{.*}}-> tensor<1x2x56x4xf32
// CONCAT: mesh.collect {{.*}}index_map = array<i64: 0, 1, 14, 15, 28, 29, 42, 43, 44, 45>}

// More tokens than a core's SRAM holds (target wse2: 49,152 bytes; a
// core holds 4 values of 4 bytes per slot): one line before any index map
// is built, at any size.
// SRAM: error: {{.*}}mesh-plan-kv-cache: a KV cache of 5000 token slots per row of cores needs 80000 bytes per core, more than target 'wse2' has (49152)
// HUGE: error: {{.*}}mesh-plan-kv-cache: a KV cache of {{[0-9]+}} token slots per row of cores needs more than 2^63 bytes per core, more than target 'wse2' has (49152)

// A capacity below the step's own keeps the step's room: 3 slots a row,
// as the step at position 9 writes slot 9 / 4 = 2 of rows 2 and 3 (the
// bottom row held 3 tokens and passed its oldest up).
// SMALL: mesh.kv_append {{.*}}-> tensor<1x2x12x4xf32
// SMALL: mesh.collect {{.*}}index_map = array<i64: 0, 1, 3, 4, 6, 7, 8, 9, 10, 11>}

module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%past: tensor<1x2x9x4xf32>, %token: tensor<1x2x4xf32>) -> tensor<1x2x10x4xf32> {
    %c = mesh.distribute %past {index_dim = 2 : i64, index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>} : tensor<1x2x9x4xf32> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %n = mesh.distribute %token : tensor<1x2x4xf32> -> tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>>
    %k = mesh.kv_append %c, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %r = mesh.collect %k {index_dim = 2 : i64, index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x10x4xf32>
    return %r : tensor<1x2x10x4xf32>
  }
}
