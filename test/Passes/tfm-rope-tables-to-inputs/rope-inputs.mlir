// RUN: wafer-opt %s -split-input-file --tfm-rope-tables-to-inputs | FileCheck %s

// Both ropes share one pair of constant tables: they become @main's last two
// arguments and the constants go.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x1x4xf32> {tfm.name = "x"}, %[[COS:.*]]: tensor<1x4xf32> {tfm.name = "rope.cos"}, %[[SIN:.*]]: tensor<1x4xf32> {tfm.name = "rope.sin"})
// CHECK-NOT: tfm.constant
// CHECK: tfm.rope %[[X]], %[[COS]], %[[SIN]]
// CHECK: tfm.rope %{{.*}}, %[[COS]], %[[SIN]]
func.func @main(%x: tensor<1x2x1x4xf32> {tfm.name = "x"}) -> tensor<1x2x1x4xf32> {
  %c = tfm.constant dense<[[0.5, 0.25, 0.5, 0.25]]> : tensor<1x4xf32>
  %s = tfm.constant dense<[[0.75, 0.5, 0.75, 0.5]]> : tensor<1x4xf32>
  %c2 = tfm.constant dense<[[0.5, 0.25, 0.5, 0.25]]> : tensor<1x4xf32>
  %r = tfm.rope %x, %c, %s : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32>
  %r2 = tfm.rope %r, %c2, %s : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32>
  return %r2 : tensor<1x2x1x4xf32>
}

// -----

// A graph without ropes is left alone.
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
