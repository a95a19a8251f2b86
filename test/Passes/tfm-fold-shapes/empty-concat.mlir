// RUN: wafer-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tfm-fold-shapes))' | FileCheck %s

// A past KV cache of length 0 (a graph with a cache run as a prefill): the
// concat drops it and, left with one operand, is that operand.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[PAST:.*]]: tensor<1x2x0x4xf32>, %[[NEW:.*]]: tensor<1x2x3x4xf32>)
// CHECK-NOT: tfm.concat
// CHECK: return %[[NEW]]
func.func @main(%past: tensor<1x2x0x4xf32>, %new: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %c = tfm.concat %past, %new {axis = 2 : i64} : (tensor<1x2x0x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return %c : tensor<1x2x3x4xf32>
}

// -----

// Two non-empty operands stay; only the empty one goes.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[^:]*]]: tensor<2xf32>, %[[E:[^:]*]]: tensor<0xf32>, %[[B:[^:]*]]: tensor<3xf32>)
// CHECK: tfm.concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
func.func @main(%a: tensor<2xf32>, %e: tensor<0xf32>, %b: tensor<3xf32>) -> tensor<5xf32> {
  %c = tfm.concat %a, %e, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<0xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %c : tensor<5xf32>
}

// -----

// Every operand empty: one is kept, and it is the result.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<0xf32>, %{{[^:]*}}: tensor<0xf32>)
// CHECK: return %[[X]]
func.func @main(%x: tensor<0xf32>, %y: tensor<0xf32>) -> tensor<0xf32> {
  %c = tfm.concat %x, %y {axis = 0 : i64} : (tensor<0xf32>, tensor<0xf32>) -> tensor<0xf32>
  return %c : tensor<0xf32>
}
