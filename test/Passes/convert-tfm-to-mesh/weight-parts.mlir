// RUN: wafer-opt %s -split-input-file --convert-tfm-to-mesh="grid=2x2" -verify-diagnostics | FileCheck %s

// A fused projection's parts (tfm-raise-transformer's linears of a range
// of a weight) are read from the whole stored weight: the distribute's
// index map picks the range along the placed dimension it lands on (after
// the host's transpose of an nn.Linear weight), and no tfm.slice is left.
// CHECK-LABEL: func.func @main
// CHECK: %[[QKV:.*]] = tfm.weight "qkv" from "m.onnx" : tensor<12x8xf32>
// CHECK: mesh.distribute %[[QKV]] {index_dim = 1 : i64, index_map = array<i64: 2, 3, 4, 5>, permutation = array<i64: 1, 0>} : tensor<12x8xf32> -> tensor<8x4xf32, #mesh.layout<[y:2, x:2]>>
// CHECK: mesh.gemm
// CHECK: %[[UP:.*]] = tfm.weight "gate_up" from "m.onnx" : tensor<8x12xf32>
// CHECK: mesh.distribute %[[UP]] {index_dim = 1 : i64, index_map = array<i64: 6, 7, 8, 9, 10, 11>} : tensor<8x12xf32> -> tensor<8x6xf32, #mesh.layout<[y:2, x:2]>>
// CHECK: mesh.gemv
// CHECK-NOT: tfm.slice
func.func @main(%x: tensor<4x8xf32>, %v: tensor<1x8xf32>) -> (tensor<4x4xf32>, tensor<1x6xf32>) {
  %w = tfm.weight "qkv" from "m.onnx" : tensor<12x8xf32>
  %p = tfm.slice %w starts [2, 0] ends [6, 8] steps [1, 1] : tensor<12x8xf32> -> tensor<4x8xf32>
  %y = tfm.linear %x, %p {transpose_weight} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %u = tfm.weight "gate_up" from "m.onnx" : tensor<8x12xf32>
  %q = tfm.slice %u starts [0, 6] ends [8, 12] steps [1, 1] : tensor<8x12xf32> -> tensor<8x6xf32>
  %z = tfm.linear %v, %q : (tensor<1x8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  return %y, %z : tensor<4x4xf32>, tensor<1x6xf32>
}

// -----

// A slice of a computed tensor, or a strided slice of a weight, is no
// weight's part: the grid does not slice.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x8xf32>
  %y = tfm.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // expected-error @+1 {{convert-tfm-to-mesh: no mesh plan for 'tfm.slice'}}
  %s = tfm.slice %y starts [0, 0] ends [4, 4] steps [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %z = tfm.add %s, %s : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x8xf32>
  // expected-error @+1 {{convert-tfm-to-mesh: no mesh plan for 'tfm.slice'}}
  %p = tfm.slice %w starts [0, 0] ends [8, 8] steps [1, 2] : tensor<8x8xf32> -> tensor<8x4xf32>
  %y = tfm.linear %x, %p : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
