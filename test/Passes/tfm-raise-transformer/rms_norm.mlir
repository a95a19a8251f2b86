// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s
// RUN: %debian_python %wafer_src/test/Passes/tfm-raise-transformer/compare_raised.py %s %t wafer-opt wafer-run

// CHECK-LABEL: func.func @main
// CHECK: tfm.rms_norm %arg0, %{{.*}} {epsilon = 9.99{{[0-9]*}}E-6 : f64}
// CHECK-NOT: tfm.reduce_mean
func.func @main(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %two = tfm.constant dense<2.0> : tensor<f32>
  %eps = tfm.constant dense<1.0e-5> : tensor<f32>
  %one = tfm.constant dense<1.0> : tensor<f32>
  %w = tfm.constant dense<1.5> : tensor<64xf32>
  %p = tfm.pow %x, %two : (tensor<1x8x64xf32>, tensor<f32>) -> tensor<1x8x64xf32>
  %m = tfm.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : tensor<1x8x64xf32> -> tensor<1x8x1xf32>
  %a = tfm.add %m, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %s = tfm.sqrt %a : tensor<1x8x1xf32>
  %r = tfm.div %one, %s : (tensor<f32>, tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  %n = tfm.mul %x, %r : (tensor<1x8x64xf32>, tensor<1x8x1xf32>) -> tensor<1x8x64xf32>
  %y = tfm.mul %w, %n : (tensor<64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// Written with x * x, a reciprocal and the weight on the right.
// CHECK-LABEL: func.func @squares
// CHECK: tfm.rms_norm %arg0
func.func @squares(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %eps = tfm.constant dense<1.0e-6> : tensor<1xf32>
  %p = tfm.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = tfm.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %a = tfm.add %eps, %m : (tensor<1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = tfm.sqrt %a : tensor<4x1xf32>
  %r = tfm.reciprocal %s : tensor<4x1xf32>
  %n = tfm.mul %r, %x : (tensor<4x1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = tfm.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// Written x * (mean(x^2) + eps) ** -0.5.
// CHECK-LABEL: func.func @power
// CHECK: tfm.rms_norm %arg0
// CHECK-NOT: tfm.pow
func.func @power(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %two = tfm.constant dense<2.0> : tensor<f32>
  %half = tfm.constant dense<-0.5> : tensor<f32>
  %eps = tfm.constant dense<1.0e-6> : tensor<f32>
  %p = tfm.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %m = tfm.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %a = tfm.add %m, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = tfm.pow %a, %half : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %n = tfm.mul %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = tfm.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// Near misses stay as they are: no epsilon, another axis.
// CHECK-LABEL: func.func @no_epsilon
// CHECK-NOT: tfm.rms_norm
// CHECK: tfm.reduce_mean
func.func @no_epsilon(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %p = tfm.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = tfm.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %s = tfm.sqrt %m : tensor<4x1xf32>
  %n = tfm.div %x, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = tfm.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// CHECK-LABEL: func.func @other_axis
// CHECK-NOT: tfm.rms_norm
// CHECK: tfm.reduce_mean
func.func @other_axis(%x: tensor<32x32xf32>, %w: tensor<32xf32>) -> tensor<32x32xf32> {
  %eps = tfm.constant dense<1.0e-6> : tensor<f32>
  %p = tfm.mul %x, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = tfm.reduce_mean %p {axes = array<i64: 0>, keepdims = true} : tensor<32x32xf32> -> tensor<1x32xf32>
  %a = tfm.add %m, %eps : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %s = tfm.sqrt %a : tensor<1x32xf32>
  %n = tfm.div %x, %s : (tensor<32x32xf32>, tensor<1x32xf32>) -> tensor<32x32xf32>
  %y = tfm.mul %n, %w : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}
