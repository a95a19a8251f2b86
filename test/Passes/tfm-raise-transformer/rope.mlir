// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s
// RUN: %debian_python %S/compare_raised.py %s %t wafer-opt wafer-run

// Rotate-half, written with slices, a negation and a concat.
// CHECK-LABEL: func.func @half
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} : (tensor<1x2x4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK-NOT: interleaved
// CHECK-NOT: tfm.concat
func.func @half(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %cos = tfm.constant dense<0.6> : tensor<4x8xf32>
  %sin = tfm.constant dense<0.8> : tensor<4x8xf32>
  %lo = tfm.slice %x starts [0, 0, 0, 0] ends [1, 2, 4, 4] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %hi = tfm.slice %x starts [0, 0, 0, 4] ends [1, 2, 4, 8] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = tfm.neg %hi : tensor<1x2x4x4xf32>
  %r = tfm.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %a = tfm.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<4x8xf32>) -> tensor<1x2x4x8xf32>
  %b = tfm.mul %r, %sin : (tensor<1x2x4x8xf32>, tensor<4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = tfm.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// Interleaved pairs, written as GPT-J's stack of strided slices.
// CHECK-LABEL: func.func @interleaved
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} {interleaved}
func.func @interleaved(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cos = tfm.constant dense<0.6> : tensor<4x8xf32>
  %sin = tfm.constant dense<0.8> : tensor<4x8xf32>
  %even = tfm.slice %x starts [0, 0] ends [4, 8] steps [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  %odd = tfm.slice %x starts [0, 1] ends [4, 8] steps [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  %n = tfm.neg %odd : tensor<4x4xf32>
  %n3 = tfm.reshape %n : tensor<4x4xf32> -> tensor<4x4x1xf32>
  %e3 = tfm.reshape %even : tensor<4x4xf32> -> tensor<4x4x1xf32>
  %s = tfm.concat %n3, %e3 {axis = 2 : i64} : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> tensor<4x4x2xf32>
  %r = tfm.reshape %s : tensor<4x4x2xf32> -> tensor<4x8xf32>
  %a = tfm.mul %cos, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tfm.mul %sin, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tfm.add %b, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// An odd width cannot be a rotation: left alone.
// CHECK-LABEL: func.func @odd_width
// CHECK-NOT: tfm.rope
// CHECK: tfm.concat
func.func @odd_width(%x: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %cos = tfm.constant dense<0.5> : tensor<4x7xf32>
  %sin = tfm.constant dense<0.25> : tensor<4x7xf32>
  %lo = tfm.slice %x starts [0, 0] ends [4, 3] steps [1, 1] : tensor<4x7xf32> -> tensor<4x3xf32>
  %hi = tfm.slice %x starts [0, 3] ends [4, 7] steps [1, 1] : tensor<4x7xf32> -> tensor<4x4xf32>
  %n = tfm.neg %hi : tensor<4x4xf32>
  %r = tfm.concat %n, %lo {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x7xf32>
  %a = tfm.mul %x, %cos : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  %b = tfm.mul %r, %sin : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  %y = tfm.add %a, %b : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// A rotation without the sign is not a rope.
// CHECK-LABEL: func.func @unsigned
// CHECK-NOT: tfm.rope
func.func @unsigned(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cos = tfm.constant dense<0.6> : tensor<4x8xf32>
  %sin = tfm.constant dense<0.8> : tensor<4x8xf32>
  %lo = tfm.slice %x starts [0, 0] ends [4, 4] steps [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %hi = tfm.slice %x starts [0, 4] ends [4, 8] steps [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %r = tfm.concat %hi, %lo {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %a = tfm.mul %x, %cos : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tfm.mul %r, %sin : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = tfm.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
