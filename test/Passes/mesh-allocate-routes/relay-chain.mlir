// RUN: echo '{"base": "wse2", "routes_per_core": 8}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x16 target=%t.json" --mesh-allocate-routes | FileCheck %s

// Each tree takes 6 colors (2 + 2 for the levels of its halves of 8, one
// for the join, one for the broadcast). The first GEMV's tree (on y) fits
// alone, the second's (on x) does not, nor does relaying only the second
// (6 + 4): every tree is relayed, 4 colors on each axis.
// CHECK: mesh.gemv {{.*}}colors = array<i32: 0, 2>, relayed}
// CHECK: mesh.gemv {{.*}}colors = array<i32: 4, 6>, relayed}
func.func @main(%x: tensor<1x32xf32>, %w: tensor<32x32xf32>, %v: tensor<32x32xf32>) -> tensor<1x32xf32> {
  %h = tfm.matmul %x, %w : (tensor<1x32xf32>, tensor<32x32xf32>) -> tensor<1x32xf32>
  %y = tfm.matmul %h, %v : (tensor<1x32xf32>, tensor<32x32xf32>) -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}
