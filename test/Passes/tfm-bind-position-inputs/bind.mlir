// RUN: wafer-opt %s -split-input-file --tfm-bind-position-inputs | FileCheck %s

// A prefill: positions 0..2, a mask of ones; both arguments go and the
// module records them.
// CHECK: module attributes {tfm.bound_inputs = {attention_mask = "ones", position_ids = "positions"}}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDS:.*]]: tensor<1x3xi64> {tfm.name = "input_ids"}) -> (tensor<1x3xi64>, tensor<1x3xi64>)
// CHECK-DAG: %[[POS:.*]] = tfm.constant dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
// CHECK-DAG: %[[MASK:.*]] = tfm.constant dense<1> : tensor<1x3xi64>
// CHECK: return %[[MASK]], %[[POS]]
func.func @main(%ids: tensor<1x3xi64> {tfm.name = "input_ids"},
                %mask: tensor<1x3xi64> {tfm.name = "attention_mask"},
                %pos: tensor<1x3xi64> {tfm.name = "position_ids"}) -> (tensor<1x3xi64>, tensor<1x3xi64>) {
  return %mask, %pos : tensor<1x3xi64>, tensor<1x3xi64>
}

// -----

// A decode step after 5 tokens: the mask covers 6, so the position is 5.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.*}}: tensor<1x1xi64> {tfm.name = "input_ids"}, %{{.*}}: tensor<1x2x5x4xf32> {tfm.name = "past.0.key"})
// CHECK-DAG: tfm.constant dense<5> : tensor<1x1xi64>
// CHECK-DAG: tfm.constant dense<true> : tensor<1x6xi1>
func.func @main(%ids: tensor<1x1xi64> {tfm.name = "input_ids"},
                %pos: tensor<1x1xi64> {tfm.name = "position_ids"},
                %past: tensor<1x2x5x4xf32> {tfm.name = "past.0.key"},
                %mask: tensor<1x6xi1> {tfm.name = "attention_mask"}) -> tensor<1x1xi64> {
  return %pos : tensor<1x1xi64>
}

// -----

// Without a mask the past comes from the KV caches' positions; rank 1
// positions are fine.
// CHECK-LABEL: func.func @main(
// CHECK: tfm.constant dense<7> : tensor<1xi64>
func.func @main(%pos: tensor<1xi64> {tfm.name = "position_ids"},
                %past: tensor<1x2x7x4xf32> {tfm.name = "past.0.key"}) -> tensor<1xi64> {
  return %pos : tensor<1xi64>
}

// -----

// A graph without either input is left alone (no attribute).
// CHECK-NOT: tfm.bound_inputs
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<1x3xi64> {tfm.name = "input_ids"})
func.func @main(%ids: tensor<1x3xi64> {tfm.name = "input_ids"}) -> tensor<1x3xi64> {
  return %ids : tensor<1x3xi64>
}
