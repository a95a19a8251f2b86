// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s

// Past 2^22 values the rotation is not probed (a probe evaluates the
// subgraph on whole tensors): PyTorch's rotate-half, x * cos +
// cat(-x[.., D/2:], x[.., :D/2]) * sin with constant tables, is recognised
// by its ops. The queries of a 4096-token LLaMA3-8B prompt are 2^24 values;
// here 2^23 (64 heads, 1024 positions, 128 wide).
// CHECK-LABEL: func.func @half_large
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} : (tensor<1x64x1024x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>)
// CHECK-NOT: tfm.concat
func.func @half_large(%x: tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32> {
  %cos = tfm.constant dense<0.6> : tensor<1x1x1024x128xf32>
  %sin = tfm.constant dense<0.8> : tensor<1x1x1024x128xf32>
  %a = tfm.mul %x, %cos : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %lo = tfm.slice %x starts [0, 0, 0, 0] ends [1, 64, 1024, 64] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %hi = tfm.slice %x starts [0, 0, 0, 64] ends [1, 64, 1024, 128] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %n = tfm.neg %hi : tensor<1x64x1024x64xf32>
  %r = tfm.concat %n, %lo {axis = 3 : i64} : (tensor<1x64x1024x64xf32>, tensor<1x64x1024x64xf32>) -> tensor<1x64x1024x128xf32>
  %b = tfm.mul %sin, %r : (tensor<1x1x1024x128xf32>, tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %y = tfm.add %b, %a : (tensor<1x64x1024x128xf32>, tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  return %y : tensor<1x64x1024x128xf32>
}

// The same ops with tables that are no rotation (cos^2 + sin^2 != 1) stay
// as they are.
// CHECK-LABEL: func.func @not_a_rotation
// CHECK-NOT: tfm.rope
// CHECK: tfm.concat
func.func @not_a_rotation(%x: tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32> {
  %cos = tfm.constant dense<0.5> : tensor<1x1x1024x128xf32>
  %sin = tfm.constant dense<0.5> : tensor<1x1x1024x128xf32>
  %a = tfm.mul %x, %cos : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %lo = tfm.slice %x starts [0, 0, 0, 0] ends [1, 64, 1024, 64] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %hi = tfm.slice %x starts [0, 0, 0, 64] ends [1, 64, 1024, 128] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %n = tfm.neg %hi : tensor<1x64x1024x64xf32>
  %r = tfm.concat %n, %lo {axis = 3 : i64} : (tensor<1x64x1024x64xf32>, tensor<1x64x1024x64xf32>) -> tensor<1x64x1024x128xf32>
  %b = tfm.mul %r, %sin : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %y = tfm.add %a, %b : (tensor<1x64x1024x128xf32>, tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  return %y : tensor<1x64x1024x128xf32>
}

// Halves swapped (cat(x[.., :D/2], -x[.., D/2:]), a rotation by -angle)
// are not the exported form: at this size they stay.
// CHECK-LABEL: func.func @swapped_halves
// CHECK-NOT: tfm.rope
// CHECK: tfm.concat
func.func @swapped_halves(%x: tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32> {
  %cos = tfm.constant dense<0.6> : tensor<1x1x1024x128xf32>
  %sin = tfm.constant dense<0.8> : tensor<1x1x1024x128xf32>
  %a = tfm.mul %x, %cos : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %lo = tfm.slice %x starts [0, 0, 0, 0] ends [1, 64, 1024, 64] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %hi = tfm.slice %x starts [0, 0, 0, 64] ends [1, 64, 1024, 128] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %n = tfm.neg %hi : tensor<1x64x1024x64xf32>
  %r = tfm.concat %lo, %n {axis = 3 : i64} : (tensor<1x64x1024x64xf32>, tensor<1x64x1024x64xf32>) -> tensor<1x64x1024x128xf32>
  %b = tfm.mul %r, %sin : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %y = tfm.add %a, %b : (tensor<1x64x1024x128xf32>, tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  return %y : tensor<1x64x1024x128xf32>
}

// The rotated halves taken from another value than the one multiplied by
// cos: no rotation of one value.
// CHECK-LABEL: func.func @two_values
// CHECK-NOT: tfm.rope
// CHECK: tfm.concat
func.func @two_values(%x: tensor<1x64x1024x128xf32>, %z: tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32> {
  %cos = tfm.constant dense<0.6> : tensor<1x1x1024x128xf32>
  %sin = tfm.constant dense<0.8> : tensor<1x1x1024x128xf32>
  %a = tfm.mul %x, %cos : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %lo = tfm.slice %z starts [0, 0, 0, 0] ends [1, 64, 1024, 64] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %hi = tfm.slice %z starts [0, 0, 0, 64] ends [1, 64, 1024, 128] steps [1, 1, 1, 1] : tensor<1x64x1024x128xf32> -> tensor<1x64x1024x64xf32>
  %n = tfm.neg %hi : tensor<1x64x1024x64xf32>
  %r = tfm.concat %n, %lo {axis = 3 : i64} : (tensor<1x64x1024x64xf32>, tensor<1x64x1024x64xf32>) -> tensor<1x64x1024x128xf32>
  %b = tfm.mul %r, %sin : (tensor<1x64x1024x128xf32>, tensor<1x1x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  %y = tfm.add %a, %b : (tensor<1x64x1024x128xf32>, tensor<1x64x1024x128xf32>) -> tensor<1x64x1024x128xf32>
  return %y : tensor<1x64x1024x128xf32>
}
