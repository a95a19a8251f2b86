// RUN: echo '{"base": "wse2", "routes_per_core": 8}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=8x8 target=%t.json" --mesh-allocate-routes | FileCheck %s

// The first GEMV's tree (5 colors on y) fits alone, the second's (5 on x)
// does not, nor does relaying only the second (5 + 4): every tree is
// relayed, 4 colors on each axis.
// CHECK: mesh.gemv {{.*}}colors = array<i32: 0, 2>, relayed}
// CHECK: mesh.gemv {{.*}}colors = array<i32: 4, 6>, relayed}
func.func @main(%x: tensor<1x16xf32>, %w: tensor<16x16xf32>, %v: tensor<16x16xf32>) -> tensor<1x16xf32> {
  %h = tfm.matmul %x, %w : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %y = tfm.matmul %h, %v : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
