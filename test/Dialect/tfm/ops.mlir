// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x6xf32> {
  // CHECK: tfm.weight "w" from "model.onnx" : tensor<6x8xf32>
  %w = tfm.weight "w" from "model.onnx" : tensor<6x8xf32>
  // CHECK: tfm.transpose %{{.*}} [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %t = tfm.transpose %w [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  // CHECK: tfm.constant dense<2.000000e+00> : tensor<f32>
  %c = tfm.constant dense<2.0> : tensor<f32>
  // CHECK: tfm.add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a = tfm.add %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: tfm.mul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = tfm.mul %a, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: tfm.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y = tfm.matmul %m, %t : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<4xi64>, tensor<2xi1>, tensor<8x8xf32>, tensor<8xi64>, tensor<4xf32>, tensor<0xi64>) {
  // CHECK: tfm.constant dense<[1, 8, 4, 16]> : tensor<4xi64>
  %s = tfm.constant dense<[1, 8, 4, 16]> : tensor<4xi64>
  // CHECK: tfm.constant dense<[true, false]> : tensor<2xi1>
  %b = tfm.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: tfm.constant_of_shape {value = -3.400000e+38 : f32} : tensor<8x8xf32>
  %m = tfm.constant_of_shape {value = -3.4e38 : f32} : tensor<8x8xf32>
  // CHECK: tfm.range {delta = 1.000000e+00 : f64, limit = 8.000000e+00 : f64, start = 0.000000e+00 : f64} : tensor<8xi64>
  %p = tfm.range {start = 0.0, limit = 8.0, delta = 1.0} : tensor<8xi64>
  // A length of -inf is an empty range.
  // CHECK: tfm.range {{.*}} : tensor<0xf32>
  %ninf = tfm.range {start = 1.0e308, limit = -1.0e308, delta = 1.0e-300} : tensor<0xf32>
  // CHECK: tfm.range {delta = -5.000000e-01 : f64, limit = 0.000000e+00 : f64, start = 2.000000e+00 : f64} : tensor<4xf32>
  %q = tfm.range {start = 2.0, limit = 0.0, delta = -0.5} : tensor<4xf32>
  // CHECK: tfm.range {delta = 1.000000e+00 : f64, limit = 0.000000e+00 : f64, start = 3.000000e+00 : f64} : tensor<0xi64>
  %e = tfm.range {start = 3.0, limit = 0.0, delta = 1.0} : tensor<0xi64>
  return %s, %b, %m, %p, %q, %e : tensor<4xi64>, tensor<2xi1>, tensor<8x8xf32>, tensor<8xi64>, tensor<4xf32>, tensor<0xi64>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) {
  // CHECK: tfm.neg %{{.*}} : tensor<4x8xf32>
  %0 = tfm.neg %x : tensor<4x8xf32>
  // CHECK: tfm.sqrt %{{.*}} : tensor<4x8xf32>
  %1 = tfm.sqrt %x : tensor<4x8xf32>
  // CHECK: tfm.reciprocal %{{.*}} : tensor<4x8xf32>
  %2 = tfm.reciprocal %x : tensor<4x8xf32>
  // CHECK: tfm.sigmoid %{{.*}} : tensor<4x8xf32>
  %3 = tfm.sigmoid %x : tensor<4x8xf32>
  // CHECK: tfm.exp %{{.*}} : tensor<4x8xf32>
  %4 = tfm.exp %x : tensor<4x8xf32>
  // CHECK: tfm.cos %{{.*}} : tensor<4x8xf32>
  %5 = tfm.cos %x : tensor<4x8xf32>
  // CHECK: tfm.sin %{{.*}} : tensor<4x8xf32>
  %6 = tfm.sin %x : tensor<4x8xf32>
  // CHECK: tfm.tanh %{{.*}} : tensor<4x8xf32>
  %7 = tfm.tanh %x : tensor<4x8xf32>
  // CHECK: tfm.erf %{{.*}} : tensor<4x8xf32>
  %8 = tfm.erf %x : tensor<4x8xf32>
  // CHECK: tfm.abs %{{.*}} : tensor<4xi64>
  %9 = tfm.abs %i : tensor<4xi64>
  // CHECK: tfm.relu %{{.*}} : tensor<4x8xf32>
  %10 = tfm.relu %x : tensor<4x8xf32>
  // CHECK: tfm.relu %{{.*}} : tensor<4xi64>
  %ri = tfm.relu %i : tensor<4xi64>
  // CHECK: tfm.not %{{.*}} : tensor<4xi1>
  %11 = tfm.not %b : tensor<4xi1>
  // CHECK: tfm.silu %{{.*}} : tensor<4x8xf32>
  %12 = tfm.silu %x : tensor<4x8xf32>
  // CHECK: tfm.cast %{{.*}} : tensor<4xi64> -> tensor<4xf32>
  %13 = tfm.cast %i : tensor<4xi64> -> tensor<4xf32>
  // CHECK: tfm.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xi1>
  %14 = tfm.cast %x : tensor<4x8xf32> -> tensor<4x8xi1>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x8xf32>, %v: tensor<8xf32>, %s: tensor<f32>,
                  %i: tensor<2x1xi64>, %j: tensor<3xi64>,
                  %p: tensor<4x8xi1>, %q: tensor<1x8xi1>) {
  // CHECK: tfm.sub %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = tfm.sub %a, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: tfm.div %{{.*}}, %{{.*}} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %1 = tfm.div %i, %j : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: tfm.pow %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = tfm.pow %a, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // An integer exponent, as ONNX allows.
  // CHECK: tfm.pow %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  %two = tfm.constant dense<2> : tensor<i64>
  %pi = tfm.pow %a, %two : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  // CHECK: tfm.max %{{.*}}, %{{.*}} : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = tfm.max %s, %a : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: tfm.min %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = tfm.min %v, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: tfm.mod %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %5 = tfm.mod %j, %i : (tensor<3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  // CHECK: tfm.equal %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %6 = tfm.equal %a, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: tfm.less %{{.*}}, %{{.*}} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi1>
  %7 = tfm.less %i, %j : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi1>
  // CHECK: tfm.less_or_equal %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
  %8 = tfm.less_or_equal %a, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
  // CHECK: tfm.greater %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %9 = tfm.greater %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: tfm.greater_or_equal %{{.*}}, %{{.*}} : (tensor<f32>, tensor<8xf32>) -> tensor<8xi1>
  %10 = tfm.greater_or_equal %s, %v : (tensor<f32>, tensor<8xf32>) -> tensor<8xi1>
  // CHECK: tfm.and %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  %11 = tfm.and %p, %q : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  // CHECK: tfm.or %{{.*}}, %{{.*}} : (tensor<1x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %12 = tfm.or %q, %p : (tensor<1x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK: tfm.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x8xi1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = tfm.where %q, %s, %a : (tensor<1x8xi1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<1x8x64xf32>, %i: tensor<2x3xi64>, %s: tensor<1x4x8x8xf32>) {
  // CHECK: tfm.reduce_mean %{{.*}} {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  %0 = tfm.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  // CHECK: tfm.reduce_sum %{{.*}} {axes = array<i64: 0, 2>, keepdims = false} : tensor<1x8x64xf32> -> tensor<8xf32>
  %1 = tfm.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<1x8x64xf32> -> tensor<8xf32>
  // CHECK: tfm.reduce_max %{{.*}} {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xi64> -> tensor<i64>
  %2 = tfm.reduce_max %i {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xi64> -> tensor<i64>
  // CHECK: tfm.softmax %{{.*}} {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %3 = tfm.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
  // CHECK: tfm.trilu %{{.*}} {k = 1 : i64, upper = true} : tensor<1x4x8x8xf32>
  %4 = tfm.trilu %s {upper = true, k = 1 : i64} : tensor<1x4x8x8xf32>
  // CHECK: tfm.trilu %{{.*}} {k = 0 : i64, upper = false} : tensor<2x3xi64>
  %5 = tfm.trilu %i {upper = false, k = 0 : i64} : tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<1x8x64xf32>, %k: tensor<1x2x1x8x16xf32>,
                         %a: tensor<1x2x8x16xf32>, %b: tensor<1x2x1x16xf32>,
                         %t: tensor<256x64xf32>, %ids: tensor<1x8xi64>,
                         %h: tensor<1x4x16xf32>, %r: tensor<8xi64>) {
  // CHECK: tfm.reshape %{{.*}} : tensor<1x8x64xf32> -> tensor<1x8x4x16xf32>
  %0 = tfm.reshape %x : tensor<1x8x64xf32> -> tensor<1x8x4x16xf32>
  // CHECK: tfm.expand %{{.*}} : tensor<1x2x1x8x16xf32> -> tensor<1x2x2x8x16xf32>
  %1 = tfm.expand %k : tensor<1x2x1x8x16xf32> -> tensor<1x2x2x8x16xf32>
  // CHECK: tfm.expand %{{.*}} : tensor<8xi64> -> tensor<2x8xi64>
  %2 = tfm.expand %r : tensor<8xi64> -> tensor<2x8xi64>
  // CHECK: tfm.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x2x8x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x9x16xf32>
  %3 = tfm.concat %a, %b {axis = 2 : i64} : (tensor<1x2x8x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x9x16xf32>
  // CHECK: tfm.concat %{{.*}} {axis = 0 : i64} : (tensor<8xi64>) -> tensor<8xi64>
  %4 = tfm.concat %r {axis = 0 : i64} : (tensor<8xi64>) -> tensor<8xi64>
  // CHECK: tfm.slice %{{.*}} starts [0, 0, 8] ends [1, 4, 16] steps [1, 1, 1] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %5 = tfm.slice %h starts [0, 0, 8] ends [1, 4, 16] steps [1, 1, 1] : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  // CHECK: tfm.slice %{{.*}} starts [7] ends [-1] steps [-2] : tensor<8xi64> -> tensor<4xi64>
  %6 = tfm.slice %r starts [7] ends [-1] steps [-2] : tensor<8xi64> -> tensor<4xi64>
  // CHECK: tfm.gather %{{.*}}[%{{.*}}] {axis = 0 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  %7 = tfm.gather %t[%ids] {axis = 0 : i64} : (tensor<256x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  // CHECK: tfm.gather %{{.*}}[%{{.*}}] {axis = 1 : i64} : (tensor<1x8x64xf32>, tensor<8xi64>) -> tensor<1x8x64xf32>
  %8 = tfm.gather %x[%r] {axis = 1 : i64} : (tensor<1x8x64xf32>, tensor<8xi64>) -> tensor<1x8x64xf32>
  // CHECK: tfm.shape %{{.*}} : tensor<1x8x64xf32> -> tensor<3xi64>
  %9 = tfm.shape %x : tensor<1x8x64xf32> -> tensor<3xi64>
  return
}
