// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s

// A projection's bias (QWen2) stored as a weight lies behind the rotation's
// input: it is a fixed value of the linear cone, like a constant, so the
// rotation still has one outside value and raises (the bias add stays).
// CHECK-LABEL: func.func @biased
// CHECK: %[[ADD:.*]] = tfm.add %{{.*}}, %arg0
// CHECK: %[[HEADS:.*]] = tfm.transpose
// CHECK: tfm.rope %[[HEADS]], %{{.*}}, %{{.*}} : (tensor<1x2x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK-NOT: tfm.concat
func.func @biased(%x: tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32> {
  %bias = tfm.weight "q_proj.bias" from "m.onnx" : tensor<8xf32>
  %cos = tfm.constant dense<0.6> : tensor<1x1x1x4xf32>
  %sin = tfm.constant dense<0.8> : tensor<1x1x1x4xf32>
  %q = tfm.add %bias, %x : (tensor<8xf32>, tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
  %s = tfm.reshape %q : tensor<1x1x8xf32> -> tensor<1x1x2x4xf32>
  %h = tfm.transpose %s [0, 2, 1, 3] : tensor<1x1x2x4xf32> -> tensor<1x2x1x4xf32>
  %lo = tfm.slice %h starts [0, 0, 0, 0] ends [1, 2, 1, 2] steps [1, 1, 1, 1] : tensor<1x2x1x4xf32> -> tensor<1x2x1x2xf32>
  %hi = tfm.slice %h starts [0, 0, 0, 2] ends [1, 2, 1, 4] steps [1, 1, 1, 1] : tensor<1x2x1x4xf32> -> tensor<1x2x1x2xf32>
  %n = tfm.neg %hi : tensor<1x2x1x2xf32>
  %r = tfm.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x4xf32>
  %a = tfm.mul %h, %cos : (tensor<1x2x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x1x4xf32>
  %b = tfm.mul %r, %sin : (tensor<1x2x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x1x4xf32>
  %y = tfm.add %a, %b : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  return %y : tensor<1x2x1x4xf32>
}
