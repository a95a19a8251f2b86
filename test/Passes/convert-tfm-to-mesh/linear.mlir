// RUN: wafer-opt %s -split-input-file --convert-tfm-to-mesh="grid=2x2" -verify-diagnostics | FileCheck %s

// tfm.linear (what tfm-raise-transformer makes of x @ W^T): the host's
// view of the weight does the transpose.
// CHECK: %[[W:.*]] = mesh.distribute %{{.*}} {permutation = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32, #mesh.layout<[y:2, x:2]>>
// CHECK: mesh.gemm %{{.*}}, %[[W]]
// CHECK: mesh.gemv
func.func @main(%x: tensor<4x8xf32>, %v: tensor<1x8xf32>) -> (tensor<4x6xf32>, tensor<1x6xf32>) {
  %w = tfm.weight "w" from "m.onnx" : tensor<6x8xf32>
  %y = tfm.linear %x, %w {transpose_weight} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %z = tfm.linear %v, %w {transpose_weight} : (tensor<1x8xf32>, tensor<6x8xf32>) -> tensor<1x6xf32>
  return %y, %z : tensor<4x6xf32>, tensor<1x6xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>, %a: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %w = tfm.add %a, %a : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  // expected-error @+1 {{convert-tfm-to-mesh: transposing a computed tensor is not supported yet}}
  %y = tfm.linear %x, %w {transpose_weight} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
