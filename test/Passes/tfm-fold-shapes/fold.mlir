// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-fold-shapes))' | FileCheck %s

// A causal mask built the exporters' way folds to one constant; the shape
// arithmetic feeding nothing is erased.
// CHECK-LABEL: func.func @mask
// CHECK-NEXT: %[[M:.*]] = tfm.constant dense<{{\[\[}}0.000000e+00, -3.400000e+38], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %[[Y:.*]] = tfm.add %arg0, %[[M]]
// CHECK-NEXT: return %[[Y]]
func.func @mask(%s: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %shape = tfm.shape %s : tensor<1x2x2xf32> -> tensor<3xi64>
  %i = tfm.constant dense<1> : tensor<i64>
  %n = tfm.gather %shape[%i] {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %full = tfm.constant_of_shape {value = -3.4e38 : f32} : tensor<2x2xf32>
  %upper = tfm.trilu %full {upper = true, k = 1 : i64} : tensor<2x2xf32>
  %r = tfm.range {start = 0.0, limit = 2.0, delta = 1.0} : tensor<2xi64>
  %e = tfm.equal %r, %r : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %same = tfm.reshape %s : tensor<1x2x2xf32> -> tensor<1x2x2xf32>
  %y = tfm.add %same, %upper : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  return %y : tensor<1x2x2xf32>
}

// Results above max-elements stay computed.
// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-fold-shapes{max-elements=3}))' | FileCheck %s --check-prefix=LIMIT
// LIMIT-LABEL: func.func @mask
// LIMIT: tfm.trilu
