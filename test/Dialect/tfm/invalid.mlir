// RUN: wafer-opt %s -split-input-file -verify-diagnostics

func.func @contraction(%a: tensor<4x8xf32>, %b: tensor<7x6xf32>) {
  // expected-error @+1 {{operand shapes 'tensor<4x8xf32>' and 'tensor<7x6xf32>' do not agree for a matrix product}}
  %y = tfm.matmul %a, %b : (tensor<4x8xf32>, tensor<7x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x6xf32>) {
  // expected-error @+1 {{do not agree for a matrix product}}
  %y = tfm.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x6xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) {
  // expected-error @+1 {{result shape must be [4, 6]}}
  %y = tfm.matmul %a, %b : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @matmul_dynamic(%a: tensor<?x8xf32>, %b: tensor<8x6xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %y = tfm.matmul %a, %b : (tensor<?x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @broadcast(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{do not broadcast}}
  %y = tfm.add %a, %b : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result shape must be [4, 8]}}
  %y = tfm.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @permutation_size(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation has 3 entries for a rank-2 input}}
  %t = tfm.transpose %a [0, 1, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @permutation_repeat(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation is not a permutation of 0..1}}
  %t = tfm.transpose %a [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @transpose_result(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape must be [8, 4]}}
  %t = tfm.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @weight_name() {
  // expected-error @+1 {{needs a non-empty weight name}}
  %w = tfm.weight "" from "m.onnx" : tensor<4xf32>
  return
}

// -----

func.func @weight_shape() {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float values}}
  %w = tfm.weight "w" from "m.onnx" : tensor<?xf32>
  return
}
