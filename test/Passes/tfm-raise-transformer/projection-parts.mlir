// RUN: wafer-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s

// Phi-3's fused qkv_proj, split into q, k and v along the last axis: each
// part is the linear of that range of the weight's output dimension (rows
// of an nn.Linear weight used transposed), and the fused linear dies.
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: %[[W:.*]] = tfm.weight "qkv_proj.weight"
// CHECK-DAG: %[[WQ:.*]] = tfm.slice %[[W]] starts [0, 0] ends [8, 8] steps [1, 1] : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK-DAG: %[[WK:.*]] = tfm.slice %[[W]] starts [8, 0] ends [12, 8] steps [1, 1] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-DAG: %[[WV:.*]] = tfm.slice %[[W]] starts [12, 0] ends [16, 8] steps [1, 1] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-DAG: tfm.linear %arg0, %[[WQ]] {transpose_weight} : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
// CHECK-DAG: tfm.linear %arg0, %[[WK]] {transpose_weight} : (tensor<1x3x8xf32>, tensor<4x8xf32>) -> tensor<1x3x4xf32>
// CHECK-DAG: tfm.linear %arg0, %[[WV]] {transpose_weight} : (tensor<1x3x8xf32>, tensor<4x8xf32>) -> tensor<1x3x4xf32>
// CHECK-NOT: tensor<1x3x16xf32>
func.func @qkv(%x: tensor<1x3x8xf32>) -> (tensor<1x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) {
  %w = tfm.weight "qkv_proj.weight" from "m.onnx" : tensor<16x8xf32>
  %t = tfm.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tfm.matmul %x, %t : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x3x16xf32>
  %q = tfm.slice %y starts [0, 0, 0] ends [1, 3, 8] steps [1, 1, 1] : tensor<1x3x16xf32> -> tensor<1x3x8xf32>
  %k = tfm.slice %y starts [0, 0, 8] ends [1, 3, 12] steps [1, 1, 1] : tensor<1x3x16xf32> -> tensor<1x3x4xf32>
  %v = tfm.slice %y starts [0, 0, 12] ends [1, 3, 16] steps [1, 1, 1] : tensor<1x3x16xf32> -> tensor<1x3x4xf32>
  return %q, %k, %v : tensor<1x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>
}

// -----

// gate_up_proj chunked in two, its weight stored [K, N] (torch's folded
// transpose): the parts are ranges of the weight's columns; a bias (here on
// the fused output) is cut the same way.
// CHECK-LABEL: func.func @gate_up
// CHECK-DAG: %[[W:.*]] = tfm.weight "gate_up.weight"
// CHECK-DAG: %[[B:.*]] = tfm.weight "gate_up.bias"
// CHECK-DAG: %[[WG:.*]] = tfm.slice %[[W]] starts [0, 0] ends [8, 6] steps [1, 1] : tensor<8x12xf32> -> tensor<8x6xf32>
// CHECK-DAG: %[[BU:.*]] = tfm.slice %[[B]] starts [6] ends [12] steps [1] : tensor<12xf32> -> tensor<6xf32>
// CHECK-DAG: %[[G:.*]] = tfm.linear %arg0, %[[WG]] : (tensor<1x3x8xf32>, tensor<8x6xf32>) -> tensor<1x3x6xf32>
// CHECK-DAG: tfm.add %[[G]], %{{.*}} : (tensor<1x3x6xf32>, tensor<6xf32>) -> tensor<1x3x6xf32>
// CHECK-DAG: tfm.add %{{.*}}, %[[BU]] : (tensor<1x3x6xf32>, tensor<6xf32>) -> tensor<1x3x6xf32>
// CHECK-NOT: tensor<1x3x12xf32>
func.func @gate_up(%x: tensor<1x3x8xf32>) -> (tensor<1x3x6xf32>, tensor<1x3x6xf32>) {
  %w = tfm.weight "gate_up.weight" from "m.onnx" : tensor<8x12xf32>
  %b = tfm.weight "gate_up.bias" from "m.onnx" : tensor<12xf32>
  %m = tfm.matmul %x, %w : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x3x12xf32>
  %y = tfm.add %b, %m : (tensor<12xf32>, tensor<1x3x12xf32>) -> tensor<1x3x12xf32>
  %g = tfm.slice %y starts [0, 0, 0] ends [1, 3, 6] steps [1, 1, 1] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  %u = tfm.slice %y starts [0, 0, 6] ends [1, 3, 12] steps [1, 1, 1] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  return %g, %u : tensor<1x3x6xf32>, tensor<1x3x6xf32>
}

// -----

// A range of a linear plus a broadcast scalar: no bias to cut, so the
// slices stay.
// CHECK-LABEL: func.func @scalar_added
// CHECK: %[[Y:.*]] = tfm.linear %arg0, %{{.*}} : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x3x12xf32>
// CHECK: %[[A:.*]] = tfm.add %[[Y]], %{{.*}}
// CHECK: tfm.slice %[[A]] starts [0, 0, 0] ends [1, 3, 6] steps [1, 1, 1]
func.func @scalar_added(%x: tensor<1x3x8xf32>) -> (tensor<1x3x6xf32>, tensor<1x3x6xf32>) {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x12xf32>
  %c = tfm.constant dense<1.0> : tensor<1xf32>
  %y = tfm.matmul %x, %w : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x3x12xf32>
  %a = tfm.add %y, %c : (tensor<1x3x12xf32>, tensor<1xf32>) -> tensor<1x3x12xf32>
  %g = tfm.slice %a starts [0, 0, 0] ends [1, 3, 6] steps [1, 1, 1] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  %u = tfm.slice %a starts [0, 0, 6] ends [1, 3, 12] steps [1, 1, 1] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  return %g, %u : tensor<1x3x6xf32>, tensor<1x3x6xf32>
}

// -----

// Not parts: a strided slice, and a linear also used whole (cutting it
// would compute the projection twice). Both stay as they are.
// CHECK-LABEL: func.func @not_parts
// CHECK: %[[Y:.*]] = tfm.linear %arg0, %{{.*}} : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x3x12xf32>
// CHECK: tfm.slice %[[Y]] starts [0, 0, 0] ends [1, 3, 12] steps [1, 1, 2]
// CHECK: tfm.slice %[[Y]] starts [0, 0, 0] ends [1, 3, 6] steps [1, 1, 1]
// CHECK-NOT: tfm.linear
func.func @not_parts(%x: tensor<1x3x8xf32>) -> (tensor<1x3x6xf32>, tensor<1x3x6xf32>, tensor<1x3x12xf32>) {
  %w = tfm.weight "w" from "m.onnx" : tensor<8x12xf32>
  %y = tfm.matmul %x, %w : (tensor<1x3x8xf32>, tensor<8x12xf32>) -> tensor<1x3x12xf32>
  %e = tfm.slice %y starts [0, 0, 0] ends [1, 3, 12] steps [1, 1, 2] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  %g = tfm.slice %y starts [0, 0, 0] ends [1, 3, 6] steps [1, 1, 1] : tensor<1x3x12xf32> -> tensor<1x3x6xf32>
  return %e, %g, %y : tensor<1x3x6xf32>, tensor<1x3x6xf32>, tensor<1x3x12xf32>
}
