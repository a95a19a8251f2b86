// RUN: not wafer-opt %s --mesh-plan-kv-cache="capacity=-1" 2>&1 | FileCheck %s --check-prefix=CAPACITY
// RUN: not wafer-opt %s --mesh-plan-kv-cache 2>&1 | FileCheck %s --check-prefix=PLACED

// CAPACITY: error: {{.*}}mesh-plan-kv-cache: capacity must be at least 0, got -1
// PLACED: error: {{.*}}mesh-plan-kv-cache: the cache is not placed from the host along its positions

// A cache placed without its positions' index map cannot be resized.
module attributes {mesh.grid = #mesh.grid<4x2>, mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%past: tensor<1x2x16x4xf32>, %token: tensor<1x2x4xf32>) -> tensor<1x2x16x4xf32> {
    %c = mesh.distribute %past : tensor<1x2x16x4xf32> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %n = mesh.distribute %token : tensor<1x2x4xf32> -> tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>>
    %k = mesh.kv_append %c, %n {position = 9 : i64, policy = #mesh.kv_policy<concat>} : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>, tensor<1x2x4xf32, #mesh.layout<[*, x:2, *]>> -> tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>>
    %r = mesh.collect %k : tensor<1x2x16x4xf32, #mesh.layout<[*, x:2, y:4, *]>> -> tensor<1x2x16x4xf32>
    return %r : tensor<1x2x16x4xf32>
  }
}
