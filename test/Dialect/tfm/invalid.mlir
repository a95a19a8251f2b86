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

// -----

func.func @weight_element_type() {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4xi64>'}}
  %w = tfm.weight "w" from "m.onnx" : tensor<4xi64>
  return
}

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

// -----

func.func @constant_element_type() {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf16>'}}
  %c = tfm.constant dense<1.0> : tensor<4xf16>
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %c = "tfm.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

// -----

func.func @unary_result_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tfm.neg"(%a) : (tensor<4xf32>) -> tensor<4xi64>
  return
}

// -----

func.func @unary_element_type(%a: tensor<4xf16>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %y = tfm.exp %a : tensor<4xf16>
  return
}

// -----

func.func @unary_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %y = tfm.sqrt %a : tensor<?xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xi64>) {
  // expected-error @+1 {{'tfm.cast' op changes the shape}}
  %y = tfm.cast %a : tensor<4xi64> -> tensor<2x2xf32>
  return
}

// -----

func.func @cast_element_type(%a: tensor<4xi64>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 32-bit float or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %y = tfm.cast %a : tensor<4xi64> -> tensor<4xi32>
  return
}

// -----

func.func @binary_result_element(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfm.sub' op result element type must be 'f32'}}
  %y = tfm.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi64>
  return
}

// -----

func.func @compare_result_element(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfm.less' op result element type must be 'i1'}}
  %y = tfm.less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @logical_result_element(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+1 {{'tfm.or' op result element type must be 'i1'}}
  %y = tfm.or %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi64>
  return
}

// -----

func.func @broadcast_rank(%a: tensor<2x3xi64>, %b: tensor<4x1x1xi64>) {
  // expected-error @+1 {{'tfm.mod' op result shape must be [4, 2, 3]}}
  %y = tfm.mod %a, %b : (tensor<2x3xi64>, tensor<4x1x1xi64>) -> tensor<2x3xi64>
  return
}

// -----

func.func @where_values(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'tfm.where' op value shapes do not broadcast}}
  %y = tfm.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_condition_shape(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfm.where' op condition shape does not broadcast with the values}}
  %y = tfm.where %c, %a, %b : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_condition_type(%c: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %y = tfm.where %c, %a, %b : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_element_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'tfm.where' op values have different element types}}
  %y = tfm.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @where_result_shape(%c: tensor<2x1xi1>, %a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tfm.where' op result shape must be [2, 4]}}
  %y = tfm.where %c, %a, %b : (tensor<2x1xi1>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_result_element(%c: tensor<4xi1>, %a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'tfm.where' op result element type must be 'i64'}}
  %y = tfm.where %c, %a, %b : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Contractions, reductions, normalisation
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_element_type(%a: tensor<4x8xi64>, %b: tensor<8x6xi64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4x8xi64>'}}
  %y = tfm.matmul %a, %b : (tensor<4x8xi64>, tensor<8x6xi64>) -> tensor<4x6xi64>
  return
}

// -----

func.func @matmul_vector(%a: tensor<8xf32>, %b: tensor<8x6xf32>) {
  // expected-error @+1 {{'tfm.matmul' op result shape must be [6]}}
  %y = tfm.matmul %a, %b : (tensor<8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<8x6xf32>) {
  // expected-error @+1 {{do not agree for a matrix product}}
  %y = tfm.matmul %a, %b : (tensor<f32>, tensor<8x6xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reduce_mean' op axes must be sorted, unique and in [0, 3)}}
  %y = tfm.reduce_mean %x {axes = array<i64: 3>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  return
}

// -----

func.func @reduce_axis_negative(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reduce_sum' op axes must be sorted, unique and in [0, 3)}}
  %y = tfm.reduce_sum %x {axes = array<i64: -1>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  return
}

// -----

func.func @reduce_axis_duplicate(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reduce_max' op axes must be sorted, unique and in [0, 3)}}
  %y = tfm.reduce_max %x {axes = array<i64: 1, 1>, keepdims = false} : tensor<1x8x64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @reduce_axis_unsorted(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{axes must be sorted, unique and in [0, 3)}}
  %y = tfm.reduce_sum %x {axes = array<i64: 2, 1>, keepdims = false} : tensor<1x8x64xf32> -> tensor<1xf32>
  return
}

// -----

func.func @reduce_keepdims_shape(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reduce_mean' op result shape must be [1, 8, 1]}}
  %y = tfm.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @reduce_no_keepdims_shape(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reduce_mean' op result shape must be [1, 8]}}
  %y = tfm.reduce_mean %x {axes = array<i64: 2>, keepdims = false} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  return
}

// -----

func.func @reduce_result_element(%x: tensor<2x3xi64>) {
  // expected-error @+1 {{'tfm.reduce_sum' op result element type must be 'i64'}}
  %y = tfm.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi64> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_missing_keepdims(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires attribute 'keepdims'}}
  %y = tfm.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'tfm.softmax' op axis 4 is out of range for rank 4}}
  %y = tfm.softmax %x {axis = 4 : i64} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @softmax_negative_axis(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'tfm.softmax' op axis -1 is out of range for rank 4}}
  %y = tfm.softmax %x {axis = -1 : i64} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @softmax_element_type(%x: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4xi64>'}}
  %y = tfm.softmax %x {axis = 0 : i64} : tensor<4xi64>
  return
}

// -----

func.func @trilu_type(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tfm.trilu"(%x) {upper = true, k = 0 : i64} : (tensor<8x8xf32>) -> tensor<8x8xi64>
  return
}

// -----

func.func @trilu_missing_k(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{requires attribute 'k'}}
  %y = tfm.trilu %x {upper = true} : tensor<8x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

func.func @permutation_range(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation is not a permutation of 0..1}}
  %t = tfm.transpose %a [0, 2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @permutation_negative(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation is not a permutation of 0..1}}
  %t = tfm.transpose %a [-1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @transpose_element(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfm.transpose' op result element type must be 'f32'}}
  %t = tfm.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xi64>
  return
}

// -----

func.func @reshape_count(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reshape' op changes the number of elements from 512 to 256}}
  %y = tfm.reshape %x : tensor<1x8x64xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @reshape_element(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.reshape' op result element type must be 'f32'}}
  %y = tfm.reshape %x : tensor<1x8x64xf32> -> tensor<8x64xi64>
  return
}

// -----

func.func @expand_shape(%x: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'tfm.expand' op input 'tensor<1x2x3xf32>' does not broadcast to the result}}
  %y = tfm.expand %x : tensor<1x2x3xf32> -> tensor<4x4x3xf32>
  return
}

// -----

func.func @expand_rank(%x: tensor<1x2x3xf32>) {
  // expected-error @+1 {{does not broadcast to the result}}
  %y = tfm.expand %x : tensor<1x2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_shrink(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{does not broadcast to the result}}
  %y = tfm.expand %x : tensor<4x3xf32> -> tensor<1x3xf32>
  return
}

// -----

func.func @expand_element(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'tfm.expand' op result element type must be 'f32'}}
  %y = tfm.expand %x : tensor<1x3xf32> -> tensor<4x3xi1>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'tfm.concat' op needs at least one input}}
  %y = tfm.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'tfm.concat' op axis 2 is out of range for rank 2}}
  %y = tfm.concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_negative_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'tfm.concat' op axis -1 is out of range for rank 2}}
  %y = tfm.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'tfm.concat' op inputs differ outside the concatenation axis}}
  %y = tfm.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{'tfm.concat' op inputs differ outside the concatenation axis}}
  %y = tfm.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi64>) {
  // expected-error @+1 {{'tfm.concat' op inputs have different element types}}
  %y = tfm.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  // expected-error @+1 {{'tfm.concat' op result shape must be [2, 8]}}
  %y = tfm.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_result_element(%a: tensor<2x3xi64>, %b: tensor<2x5xi64>) {
  // expected-error @+1 {{'tfm.concat' op result element type must be 'i64'}}
  %y = tfm.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>) -> tensor<2x8xf32>
  return
}

// -----

func.func @slice_entries(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{'tfm.slice' op needs one start, end and step per dimension}}
  %y = tfm.slice %x starts [0, 8] ends [4, 16] steps [1, 1] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @slice_steps(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{needs one start, end and step per dimension}}
  %y = tfm.slice %x starts [0, 0, 8] ends [1, 4, 16] steps [1] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @slice_step_zero(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{'tfm.slice' op step of dimension 2 is zero}}
  %y = tfm.slice %x starts [0, 0, 8] ends [1, 4, 16] steps [1, 1, 0] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @slice_start_range(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{'tfm.slice' op start and end of dimension 1 must be normalised into [0, 4] for step 1}}
  %y = tfm.slice %x starts [0, -2, 8] ends [1, 4, 16] steps [1, 1, 1] : tensor<1x4x16xf32> -> tensor<1x6x8xf32>
  return
}

// -----

func.func @slice_end_range(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{start and end of dimension 2 must be normalised into [0, 16] for step 1}}
  %y = tfm.slice %x starts [0, 0, 8] ends [1, 4, 17] steps [1, 1, 1] : tensor<1x4x16xf32> -> tensor<1x4x9xf32>
  return
}

// -----

func.func @slice_result(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{'tfm.slice' op result shape must be [1, 4, 3]}}
  %y = tfm.slice %x starts [0, 0, 8] ends [1, 4, 16] steps [1, 1, 3] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @slice_negative_step_result(%x: tensor<8xi64>) {
  // expected-error @+1 {{'tfm.slice' op result shape must be [0]}}
  %y = tfm.slice %x starts [0] ends [7] steps [-1] : tensor<8xi64> -> tensor<8xi64>
  return
}

// -----

func.func @slice_result_element(%x: tensor<8xi64>) {
  // expected-error @+1 {{'tfm.slice' op result element type must be 'i64'}}
  %y = tfm.slice %x starts [0] ends [8] steps [1] : tensor<8xi64> -> tensor<8xf32>
  return
}

// -----

func.func @gather_axis(%t: tensor<256x64xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.gather' op axis 2 is out of range for rank 2}}
  %y = tfm.gather %t[%ids] {axis = 2 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @gather_negative_axis(%t: tensor<256x64xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.gather' op axis -1 is out of range for rank 2}}
  %y = tfm.gather %t[%ids] {axis = -1 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<256x1x8xf32>
  return
}

// -----

func.func @gather_result(%t: tensor<256x64xf32>, %ids: tensor<1x8xi64>) {
  // expected-error @+1 {{'tfm.gather' op result shape must be [256, 1, 8]}}
  %y = tfm.gather %t[%ids] {axis = 1 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @gather_result_element(%t: tensor<256x64xf32>, %ids: tensor<8xi64>) {
  // expected-error @+1 {{'tfm.gather' op result element type must be 'f32'}}
  %y = tfm.gather %t[%ids] {axis = 0 : i64} : (tensor<256x64xf32>, tensor<8xi64>) -> tensor<8x64xi64>
  return
}

// -----

func.func @gather_index_type(%t: tensor<256x64xf32>, %ids: tensor<8xi32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<8xi32>'}}
  %y = tfm.gather %t[%ids] {axis = 0 : i64} : (tensor<256x64xf32>, tensor<8xi32>) -> tensor<8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// Shape computation
//===----------------------------------------------------------------------===//

// -----

func.func @shape_result(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'tfm.shape' op result shape must be [3]}}
  %s = tfm.shape %x : tensor<1x8x64xf32> -> tensor<4xi64>
  return
}

// -----

func.func @shape_element_type(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<3xi32>'}}
  %s = tfm.shape %x : tensor<1x8x64xf32> -> tensor<3xi32>
  return
}

// -----

func.func @constant_of_shape_value() {
  // expected-error @+1 {{'tfm.constant_of_shape' op value type 'i64' differs from the result's elements}}
  %m = tfm.constant_of_shape {value = 1 : i64} : tensor<8x8xf32>
  return
}

// -----

func.func @constant_of_shape_element_type() {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 32-bit float or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %m = tfm.constant_of_shape {value = 1 : i32} : tensor<4xi32>
  return
}

// -----

func.func @range_delta() {
  // expected-error @+1 {{'tfm.range' op delta is zero}}
  %p = tfm.range {start = 0.0, limit = 8.0, delta = 0.0} : tensor<8xi64>
  return
}

// -----

func.func @range_length() {
  // expected-error @+1 {{'tfm.range' op result shape must be [4]}}
  %p = tfm.range {start = 0.0, limit = 8.0, delta = 2.0} : tensor<8xi64>
  return
}

// -----

func.func @range_rounding() {
  // ceil((1 - 0) / 0.3) = 4
  // expected-error @+1 {{'tfm.range' op result shape must be [4]}}
  %p = tfm.range {start = 0.0, limit = 1.0, delta = 0.3} : tensor<3xf32>
  return
}

// -----

func.func @range_empty() {
  // expected-error @+1 {{'tfm.range' op result shape must be [0]}}
  %p = tfm.range {start = 8.0, limit = 0.0, delta = 1.0} : tensor<8xi64>
  return
}

// -----

func.func @range_element_type() {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 32-bit float or 64-bit signless integer values, but got 'tensor<8xi1>'}}
  %p = tfm.range {start = 0.0, limit = 8.0, delta = 1.0} : tensor<8xi1>
  return
}

// -----

func.func @range_attribute_type() {
  // expected-error @+1 {{attribute 'delta' failed to satisfy constraint: 64-bit float attribute}}
  %p = tfm.range {start = 0.0, limit = 8.0, delta = 1 : i64} : tensor<8xi64>
  return
}

// -----

func.func @binary_mixed_elements(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{operands have different element types}}
  %y = tfm.add %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @and_of_floats(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operands must be i1}}
  %y = tfm.and %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @add_of_bools(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+1 {{operands must be numbers, not i1}}
  %y = tfm.add %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @not_of_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor of 1-bit signless integer values}}
  %y = tfm.not %a : tensor<4xf32>
  return
}

// -----

func.func @sqrt_of_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float values}}
  %y = tfm.sqrt %a : tensor<4xi1>
  return
}

// -----

func.func @trilu_vector(%a: tensor<8xf32>) {
  // expected-error @+1 {{input must have rank 2 or more}}
  %y = tfm.trilu %a {upper = true, k = 0 : i64} : tensor<8xf32>
  return
}

// -----

func.func @slice_forward_from_minus_one(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be normalised into [0, 4] for step 1}}
  %y = tfm.slice %a starts [-1] ends [2] steps [1] : tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @slice_backward_from_size(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be normalised into [-1, 3] for step -1}}
  %y = tfm.slice %a starts [4] ends [0] steps [-1] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @range_infinite() {
  // expected-error @+1 {{has no finite length below 2^40}}
  %r = tfm.range {start = 0.0 : f64, limit = 0x7FF0000000000000 : f64, delta = 1.0 : f64} : tensor<0xi64>
  return
}

// -----

func.func @range_nan() {
  // expected-error @+1 {{has no finite length below 2^40}}
  %r = tfm.range {start = 0.0 : f64, limit = 0x7FF8000000000000 : f64, delta = 1.0 : f64} : tensor<0xf32>
  return
}

// -----

func.func @range_fractional_integers() {
  // expected-error @+1 {{start and delta of an integer range must be integers}}
  %r = tfm.range {start = 0.5 : f64, limit = 4.0 : f64, delta = 1.0 : f64} : tensor<4xi64>
  return
}

// -----

func.func @where_dynamic_condition(%c: tensor<?xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor of 1-bit signless integer values}}
  %y = tfm.where %c, %a, %a : (tensor<?xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
