// RUN: not wafer-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=8}))' 2>&1 | FileCheck %s
// RUN: not wafer-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=-1}))' 2>&1 | FileCheck %s --check-prefix=CAPACITY

// RUN: not wafer-opt %S/handoff.mlir --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=9223372036854775807}))' 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not wafer-opt %S/handoff.mlir --pass-pipeline='builtin.module(func.func(mesh-relayout-phases{capacity=9223372036854775807 policy=concat}))' 2>&1 | FileCheck %s --check-prefix=HUGE

// CAPACITY: error: mesh-relayout-phases: capacity must be at least 0, got -1
// A capacity past the SRAM is refused before it sizes the cache's type
// (whose size wrapped to a dynamic dimension).
// HUGE: error: {{.*}}mesh-relayout-phases: a KV cache of {{[0-9]+}} token slots per row of cores needs more than 2^63 bytes per core, more than target 'wse2' has (49152)
// HUGE-NOT: error

// A function without keys or values to hand off.
// CHECK: error: mesh-relayout-phases: the function returns no present.* keys or values to hand off
module attributes {mesh.grid = #mesh.grid<2x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {tfm.output_names = ["logits"]} {
    %d = mesh.distribute %x : tensor<4x4xf32> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    %o = mesh.collect %d : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32>
    return %o : tensor<4x4xf32>
  }
}

// -----

// Positions along x: not the layout the hand-off moves.
// CHECK: error: mesh-relayout-phases: 'present.0.key' is not [S, KVH, D] with positions along y and heads along x (one block per core), as the hand-off needs: 'tensor<4x2x4xf32, #mesh.layout<[x:2, y:2, *]>>'
module attributes {mesh.grid = #mesh.grid<2x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<4x2x4xf32>) -> tensor<4x2x4xf32> attributes {tfm.output_names = ["present.0.key"]} {
    %d = mesh.distribute %x : tensor<4x2x4xf32> -> tensor<4x2x4xf32, #mesh.layout<[x:2, y:2, *]>>
    %o = mesh.collect %d : tensor<4x2x4xf32, #mesh.layout<[x:2, y:2, *]>> -> tensor<4x2x4xf32>
    return %o : tensor<4x2x4xf32>
  }
}

// -----

// A present the host computes never was on the grid.
// CHECK: error: mesh-relayout-phases: output 'present.0.key' is not read from the grid
module attributes {mesh.grid = #mesh.grid<2x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<4x2x4xf32>) -> tensor<4x2x4xf32> attributes {tfm.output_names = ["present.0.key"]} {
    return %x : tensor<4x2x4xf32>
  }
}

// -----

// A view that merges heads is not one of attention lanes.
// CHECK: error: mesh-relayout-phases: 'present.0.key' is read back through a view that is not one of attention lanes ([S, KVH, D / 2, 2]), which the hand-off cannot follow
module attributes {mesh.grid = #mesh.grid<2x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<4x2x4xf32>) -> tensor<4x8xf32> attributes {tfm.output_names = ["present.0.key"]} {
    %d = mesh.distribute %x : tensor<4x2x4xf32> -> tensor<4x2x4xf32, #mesh.layout<[y:2, x:2, *]>>
    %o = mesh.collect %d {view = array<i64: 4, 8>} : tensor<4x2x4xf32, #mesh.layout<[y:2, x:2, *]>> -> tensor<4x8xf32>
    return %o : tensor<4x8xf32>
  }
}
