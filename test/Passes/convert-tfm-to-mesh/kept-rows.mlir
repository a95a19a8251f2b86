// RUN: wafer-opt %s -split-input-file --convert-tfm-to-mesh="grid=2x2" -verify-diagnostics | FileCheck %s

// Hugging Face's logits_to_keep=1: the last position of the hidden states,
// then the output projection. The grid computes every position and the host
// reads back the kept row (the collect's index map, in the planned [4, 6]).
// CHECK-LABEL: func.func @main
// CHECK: %[[H:.*]] = mesh.gemm
// CHECK: %[[Y:.*]] = mesh.gemm %[[H]], %{{.*}} : {{.*}} -> tensor<4x6xf32, #mesh.layout<[y:2, x:2]>>
// CHECK: mesh.collect %[[Y]] {index_dim = 0 : i64, index_map = array<i64: 3>} : tensor<4x6xf32, #mesh.layout<[y:2, x:2]>> -> tensor<1x1x6xf32>
// CHECK-NOT: tfm.slice
func.func @main(%x: tensor<1x4x8xf32>) -> tensor<1x1x6xf32> {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x8xf32>
  %u = tfm.weight "lm_head" from "m.onnx" : tensor<8x6xf32>
  %h = tfm.linear %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %s = tfm.slice %h starts [0, 3, 0] ends [1, 4, 8] steps [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x1x8xf32>
  %y = tfm.linear %s, %u : (tensor<1x1x8xf32>, tensor<8x6xf32>) -> tensor<1x1x6xf32>
  return %y : tensor<1x1x6xf32>
}

// -----

// A decode step's graph keeps the same slice of its one position: a slice
// that keeps everything is dropped.
// CHECK-LABEL: func.func @main
// CHECK: mesh.gemv
// CHECK: mesh.gemv
// CHECK-NOT: index_map
// CHECK-NOT: tfm.slice
func.func @main(%x: tensor<1x1x8xf32>) -> tensor<1x1x6xf32> {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x8xf32>
  %u = tfm.weight "lm_head" from "m.onnx" : tensor<8x6xf32>
  %h = tfm.linear %x, %w : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
  %s = tfm.slice %h starts [0, 0, 0] ends [1, 1, 8] steps [1, 1, 1] : tensor<1x1x8xf32> -> tensor<1x1x8xf32>
  %y = tfm.linear %s, %u : (tensor<1x1x8xf32>, tensor<8x6xf32>) -> tensor<1x1x6xf32>
  return %y : tensor<1x1x6xf32>
}

// -----

// Kept positions read by anything but projections, norms and the return
// are still sliced on the grid, which no plan does.
func.func @main(%x: tensor<1x4x8xf32>) -> tensor<1x1x8xf32> {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x8xf32>
  %h = tfm.linear %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  // expected-error @+1 {{convert-tfm-to-mesh: no mesh plan for 'tfm.slice'}}
  %s = tfm.slice %h starts [0, 3, 0] ends [1, 4, 8] steps [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x1x8xf32>
  %y = tfm.add %s, %s : (tensor<1x1x8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
  return %y : tensor<1x1x8xf32>
}
