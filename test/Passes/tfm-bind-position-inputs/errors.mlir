// RUN: not wafer-opt %s -split-input-file --tfm-bind-position-inputs 2>&1 | FileCheck %s

// CHECK: error: tfm-bind-position-inputs: graph input 'attention_mask' has element type 'f32'; expected i64 or i1
func.func @main(%mask: tensor<1x3xf32> {tfm.name = "attention_mask"}) -> tensor<1x3xf32> {
  return %mask : tensor<1x3xf32>
}

// -----

// CHECK: error: tfm-bind-position-inputs: graph input 'position_ids' has shape [2, 3]; expected [N] or [1, N] (one sequence, batch 1)
func.func @main(%pos: tensor<2x3xi64> {tfm.name = "position_ids"}) -> tensor<2x3xi64> {
  return %pos : tensor<2x3xi64>
}

// -----

// CHECK: error: tfm-bind-position-inputs: graph input 'position_ids' needs a static shape
func.func @main(%pos: tensor<1x?xi64> {tfm.name = "position_ids"}) -> tensor<1x?xi64> {
  return %pos : tensor<1x?xi64>
}

// -----

// CHECK: error: tfm-bind-position-inputs: 'attention_mask' covers 2 tokens, fewer than the 3 of 'position_ids'
func.func @main(%pos: tensor<1x3xi64> {tfm.name = "position_ids"},
                %mask: tensor<1x2xi64> {tfm.name = "attention_mask"}) -> tensor<1x3xi64> {
  return %pos : tensor<1x3xi64>
}

// -----

// CHECK: error: tfm-bind-position-inputs: the past KV caches hold 5 and 6 positions; 'position_ids' follows one past
func.func @main(%pos: tensor<1x1xi64> {tfm.name = "position_ids"},
                %k: tensor<1x2x5x4xf32> {tfm.name = "past.0.key"},
                %v: tensor<1x2x6x4xf32> {tfm.name = "past.0.value"}) -> tensor<1x1xi64> {
  return %pos : tensor<1x1xi64>
}

// -----

// CHECK: error: tfm-bind-position-inputs: graph input 'position_ids' has element type 'i32'; expected i64
func.func @main(%pos: tensor<1x3xi32> {tfm.name = "position_ids"}) -> tensor<1x3xi32> {
  return %pos : tensor<1x3xi32>
}
