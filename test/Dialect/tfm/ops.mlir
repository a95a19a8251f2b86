// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x6xf32> {
  // CHECK: tfm.weight "w" from "model.onnx" : tensor<6x8xf32>
  %w = tfm.weight "w" from "model.onnx" : tensor<6x8xf32>
  // CHECK: tfm.transpose %{{.*}} [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %t = tfm.transpose %w [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  // CHECK: tfm.constant dense<2.000000e+00> : tensor<f32>
  %c = tfm.constant dense<2.0> : tensor<f32>
  // CHECK: tfm.add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a = tfm.add %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: tfm.mul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = tfm.mul %a, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: tfm.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y = tfm.matmul %m, %t : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
