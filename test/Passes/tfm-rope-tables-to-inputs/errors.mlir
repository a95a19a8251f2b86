// RUN: not wafer-opt %s -split-input-file --tfm-rope-tables-to-inputs 2>&1 | FileCheck %s

// CHECK: error: {{.*}}tfm-rope-tables-to-inputs: the cosine table of 'q_rope' has more than one row (the graph handles more than one token)
func.func @main(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %c = tfm.constant dense<0.5> : tensor<2x4xf32>
  %r = tfm.rope %x, %c, %c : (tensor<1x2x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x4xf32> loc("q_rope")
  return %r : tensor<1x2x2x4xf32>
}

// -----

// CHECK: error: {{.*}}tfm-rope-tables-to-inputs: the sine table of 'k_rope' is computed at run time, not a constant of the compiled position
func.func @main(%x: tensor<1x2x1x4xf32>, %s: tensor<1x4xf32>) -> tensor<1x2x1x4xf32> {
  %c = tfm.constant dense<0.5> : tensor<1x4xf32>
  %r = tfm.rope %x, %c, %s : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32> loc("k_rope")
  return %r : tensor<1x2x1x4xf32>
}

// -----

// CHECK: error: {{.*}}tfm-rope-tables-to-inputs: the cosine table of 'second' differs from the first rope's
func.func @main(%x: tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32> {
  %c = tfm.constant dense<0.5> : tensor<1x4xf32>
  %c2 = tfm.constant dense<0.25> : tensor<1x4xf32>
  %r = tfm.rope %x, %c, %c : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32> loc("first")
  %r2 = tfm.rope %r, %c2, %c : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32> loc("second")
  return %r2 : tensor<1x2x1x4xf32>
}

// -----

// CHECK: error: {{.*}}tfm-rope-tables-to-inputs: needs a function @main
func.func @other() {
  return
}
