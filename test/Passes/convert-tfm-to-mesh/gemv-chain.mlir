// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=2x3" | FileCheck %s

// Decode projections chain without a relayout: the first GEMV reduces along
// columns and leaves its result split along x; the next takes it as is,
// with its weight placed [x:W, y:H], and reduces along rows.
// CHECK: %[[W1:.*]] = mesh.distribute %{{.*}} -> tensor<8x6xf32, #mesh.layout<[y:2, x:3]>>
// CHECK: %[[G1:.*]] = mesh.gemv %{{.*}}, %[[W1]] {{.*}} -> tensor<1x6xf32, #mesh.layout<[*, x:3]>>
// CHECK: %[[W2:.*]] = mesh.distribute %{{.*}} -> tensor<6x4xf32, #mesh.layout<[x:3, y:2]>>
// CHECK: %[[G2:.*]] = mesh.gemv %[[G1]], %[[W2]] {{.*}} -> tensor<1x4xf32, #mesh.layout<[*, y:2]>>
// Its 5 outputs on 3 columns are balanced blocks (2, 2, 1).
// CHECK: %[[W3:.*]] = mesh.distribute %{{.*}} -> tensor<4x5xf32, #mesh.layout<[y:2, x:3 balanced]>>
// CHECK: mesh.gemv %[[G2]], %[[W3]] {{.*}} -> tensor<1x5xf32, #mesh.layout<[*, x:3 balanced]>>
func.func @main(%x: tensor<1x8xf32>, %w1: tensor<8x6xf32>, %w2: tensor<6x4xf32>, %w3: tensor<4x5xf32>) -> tensor<1x5xf32> {
  %h1 = tfm.matmul %x, %w1 : (tensor<1x8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  %h2 = tfm.matmul %h1, %w2 : (tensor<1x6xf32>, tensor<6x4xf32>) -> tensor<1x4xf32>
  %y = tfm.matmul %h2, %w3 : (tensor<1x4xf32>, tensor<4x5xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}
