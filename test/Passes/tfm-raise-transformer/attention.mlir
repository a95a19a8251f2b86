// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-raise-transformer))' | FileCheck %s
// RUN: %debian_python %S/compare_raised.py %s %t wafer-opt wafer-run

// GQA through HF's repeat_kv (reshape, expand, reshape), scaled, causal mask.
// CHECK-LABEL: func.func @gqa
// CHECK: tfm.attention %arg0, %arg1, %arg2 {causal, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35355{{[0-9]*}} : f64}
// CHECK-NOT: tfm.softmax

func.func @gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %mask = tfm.constant dense<[[0.0, -3.4e+38, -3.4e+38], [0.0, 0.0, -3.4e+38], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %c = tfm.constant dense<2.828427> : tensor<f32>
  %k5 = tfm.reshape %k : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ke = tfm.expand %k5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %kr = tfm.reshape %ke : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %v5 = tfm.reshape %v : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ve = tfm.expand %v5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %vr = tfm.reshape %ve : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = tfm.transpose %kr [0, 1, 3, 2] : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = tfm.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %d = tfm.div %s, %c : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %m = tfm.add %d, %mask : (tensor<1x4x3x3xf32>, tensor<3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = tfm.softmax %m {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = tfm.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// A mask that is not causal (it hides the diagonal) keeps the graph as is.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: tfm.attention
// CHECK: tfm.softmax

func.func @not_causal(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %mask = tfm.constant dense<[[-3.4e+38, 0.0, 0.0], [0.0, -3.4e+38, 0.0], [0.0, 0.0, -3.4e+38]]> : tensor<3x3xf32>
  %c = tfm.constant dense<2.828427> : tensor<f32>
  %k5 = tfm.reshape %k : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ke = tfm.expand %k5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %kr = tfm.reshape %ke : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %v5 = tfm.reshape %v : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ve = tfm.expand %v5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %vr = tfm.reshape %ve : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = tfm.transpose %kr [0, 1, 3, 2] : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = tfm.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %d = tfm.div %s, %c : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %m = tfm.add %d, %mask : (tensor<1x4x3x3xf32>, tensor<3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = tfm.softmax %m {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = tfm.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// Heads tiled rather than repeated (the unit dimension before the KV heads:
// head h is KV head h % 2, not h / 2) is no GQA: the keys and values are
// four heads of their own.
// CHECK-LABEL: func.func @tiled_heads
// CHECK: tfm.attention %arg0, %{{.*}}, %{{.*}} {causal, num_heads = 4 : i64, num_kv_heads = 4 : i64
func.func @tiled_heads(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %mask = tfm.constant dense<[[0.0, -3.4e+38, -3.4e+38], [0.0, 0.0, -3.4e+38], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %c = tfm.constant dense<2.828427> : tensor<f32>
  %k5 = tfm.reshape %k : tensor<1x2x3x8xf32> -> tensor<1x1x2x3x8xf32>
  %ke = tfm.expand %k5 : tensor<1x1x2x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %kr = tfm.reshape %ke : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %v5 = tfm.reshape %v : tensor<1x2x3x8xf32> -> tensor<1x1x2x3x8xf32>
  %ve = tfm.expand %v5 : tensor<1x1x2x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %vr = tfm.reshape %ve : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = tfm.transpose %kr [0, 1, 3, 2] : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = tfm.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %d = tfm.div %s, %c : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %m = tfm.add %d, %mask : (tensor<1x4x3x3xf32>, tensor<3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = tfm.softmax %m {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = tfm.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}
