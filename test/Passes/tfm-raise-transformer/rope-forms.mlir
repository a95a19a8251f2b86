// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-fold-shapes,tfm-raise-transformer))' | FileCheck %s
// RUN: %debian_python %S/compare_raised.py %s %t wafer-opt wafer-run

// Rotary embeddings in the forms exporters write, with real tables (theta
// 10000, D = 8, positions 0..3): each is recognised by probing the linear
// map of its subgraph, whatever the ops.

// Rotate-half by Split (imported as slices) and cat([a*c - b*s, b*c + a*s]).
// CHECK-LABEL: func.func @half_cat
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} : (tensor<1x2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: interleaved
// CHECK-NOT: tfm.concat
func.func @half_cat(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = tfm.constant dense<[[1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00], [5.40302277e-01, 9.95004177e-01, 9.99949992e-01, 9.99999523e-01], [-4.16146845e-01, 9.80066597e-01, 9.99800026e-01, 9.99997973e-01], [-9.89992499e-01, 9.55336511e-01, 9.99550045e-01, 9.99995530e-01]]> : tensor<4x4xf32>
  %s = tfm.constant dense<[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00], [8.41470957e-01, 9.98334140e-02, 9.99983307e-03, 9.99999815e-04], [9.09297407e-01, 1.98669329e-01, 1.99986659e-02, 1.99999870e-03], [1.41120002e-01, 2.95520216e-01, 2.99955010e-02, 2.99999560e-03]]> : tensor<4x4xf32>
  %a = tfm.slice %x starts [0, 0, 0, 0] ends [1, 2, 4, 4] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %b = tfm.slice %x starts [0, 0, 0, 4] ends [1, 2, 4, 8] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %lo = tfm.sub %ac, %bs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %hi = tfm.add %bc, %as : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = tfm.concat %lo, %hi {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// The same with a sign error: not a rotation, left alone.
// CHECK-LABEL: func.func @half_cat_wrong_sign
// CHECK-NOT: tfm.rope
// CHECK: tfm.concat
func.func @half_cat_wrong_sign(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = tfm.constant dense<[[1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00], [5.40302277e-01, 9.95004177e-01, 9.99949992e-01, 9.99999523e-01], [-4.16146845e-01, 9.80066597e-01, 9.99800026e-01, 9.99997973e-01], [-9.89992499e-01, 9.55336511e-01, 9.99550045e-01, 9.99995530e-01]]> : tensor<4x4xf32>
  %s = tfm.constant dense<[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00], [8.41470957e-01, 9.98334140e-02, 9.99983307e-03, 9.99999815e-04], [9.09297407e-01, 1.98669329e-01, 1.99986659e-02, 1.99999870e-03], [1.41120002e-01, 2.95520216e-01, 2.99955010e-02, 2.99999560e-03]]> : tensor<4x4xf32>
  %a = tfm.slice %x starts [0, 0, 0, 0] ends [1, 2, 4, 4] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %b = tfm.slice %x starts [0, 0, 0, 4] ends [1, 2, 4, 8] steps [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %lo = tfm.add %ac, %bs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %hi = tfm.add %bc, %as : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = tfm.concat %lo, %hi {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// Adjacent pairs (Meta): reshape to [.., D/2, 2], slices, Unsqueeze + Concat.
// CHECK-LABEL: func.func @pairs_slices
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} {interleaved} : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>)
// CHECK-NOT: tfm.concat
func.func @pairs_slices(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %c = tfm.constant dense<[[[1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00]], [[5.40302277e-01, 9.95004177e-01, 9.99949992e-01, 9.99999523e-01]], [[-4.16146845e-01, 9.80066597e-01, 9.99800026e-01, 9.99997973e-01]], [[-9.89992499e-01, 9.55336511e-01, 9.99550045e-01, 9.99995530e-01]]]> : tensor<4x1x4xf32>
  %s = tfm.constant dense<[[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00]], [[8.41470957e-01, 9.98334140e-02, 9.99983307e-03, 9.99999815e-04]], [[9.09297407e-01, 1.98669329e-01, 1.99986659e-02, 1.99999870e-03]], [[1.41120002e-01, 2.95520216e-01, 2.99955010e-02, 2.99999560e-03]]]> : tensor<4x1x4xf32>
  %p = tfm.reshape %x : tensor<1x4x2x8xf32> -> tensor<1x4x2x4x2xf32>
  %a1 = tfm.slice %p starts [0, 0, 0, 0, 0] ends [1, 4, 2, 4, 1] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %b1 = tfm.slice %p starts [0, 0, 0, 0, 1] ends [1, 4, 2, 4, 2] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %a = tfm.reshape %a1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %b = tfm.reshape %b1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %re = tfm.sub %ac, %bs : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %im = tfm.add %as, %bc : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %re1 = tfm.reshape %re : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %im1 = tfm.reshape %im : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %st = tfm.concat %re1, %im1 {axis = 4 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %y = tfm.reshape %st : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}

// Adjacent pairs picked by Gather, cos/sin gathered by position from a table.
// CHECK-LABEL: func.func @pairs_gather_table
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} {interleaved} : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>)
// CHECK-NOT: tfm.concat
func.func @pairs_gather_table(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %tc = tfm.constant dense<[[1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00], [5.40302277e-01, 9.95004177e-01, 9.99949992e-01, 9.99999523e-01], [-4.16146845e-01, 9.80066597e-01, 9.99800026e-01, 9.99997973e-01], [-9.89992499e-01, 9.55336511e-01, 9.99550045e-01, 9.99995530e-01], [-6.53643608e-01, 9.21060979e-01, 9.99200106e-01, 9.99992013e-01], [2.83662200e-01, 8.77582550e-01, 9.98750269e-01, 9.99987483e-01], [9.60170269e-01, 8.25335622e-01, 9.98200536e-01, 9.99981999e-01], [7.53902256e-01, 7.64842212e-01, 9.97551024e-01, 9.99975502e-01], [-1.45500034e-01, 6.96706712e-01, 9.96801734e-01, 9.99967992e-01], [-9.11130250e-01, 6.21609986e-01, 9.95952725e-01, 9.99959528e-01], [-8.39071512e-01, 5.40302277e-01, 9.95004177e-01, 9.99949992e-01], [4.42569796e-03, 4.53596115e-01, 9.93956089e-01, 9.99939501e-01], [8.43853951e-01, 3.62357765e-01, 9.92808640e-01, 9.99927998e-01], [9.07446802e-01, 2.67498821e-01, 9.91561890e-01, 9.99915481e-01], [1.36737213e-01, 1.69967145e-01, 9.90216017e-01, 9.99902010e-01], [-7.59687901e-01, 7.07371980e-02, 9.88771081e-01, 9.99887526e-01]]> : tensor<16x4xf32>
  %ts = tfm.constant dense<[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00], [8.41470957e-01, 9.98334140e-02, 9.99983307e-03, 9.99999815e-04], [9.09297407e-01, 1.98669329e-01, 1.99986659e-02, 1.99999870e-03], [1.41120002e-01, 2.95520216e-01, 2.99955010e-02, 2.99999560e-03], [-7.56802499e-01, 3.89418334e-01, 3.99893336e-02, 3.99998948e-03], [-9.58924294e-01, 4.79425550e-01, 4.99791689e-02, 4.99997940e-03], [-2.79415488e-01, 5.64642489e-01, 5.99640049e-02, 5.99996420e-03], [6.56986594e-01, 6.44217670e-01, 6.99428469e-02, 6.99994294e-03], [9.89358246e-01, 7.17356086e-01, 7.99146965e-02, 7.99991470e-03], [4.12118495e-01, 7.83326924e-01, 8.98785517e-02, 8.99987854e-03], [-5.44021130e-01, 8.41470957e-01, 9.98334140e-02, 9.99983307e-03], [-9.99990225e-01, 8.91207337e-01, 1.09778300e-01, 1.09997783e-02], [-5.36572933e-01, 9.32039082e-01, 1.19712204e-01, 1.19997123e-02], [4.20167029e-01, 9.63558197e-01, 1.29634142e-01, 1.29996343e-02], [9.90607381e-01, 9.85449731e-01, 1.39543116e-01, 1.39995422e-02], [6.50287867e-01, 9.97494996e-01, 1.49438128e-01, 1.49994371e-02]]> : tensor<16x4xf32>
  %pos = tfm.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %gc = tfm.gather %tc[%pos] {axis = 0 : i64} : (tensor<16x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %gs = tfm.gather %ts[%pos] {axis = 0 : i64} : (tensor<16x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %c = tfm.reshape %gc : tensor<4x4xf32> -> tensor<4x1x4xf32>
  %s = tfm.reshape %gs : tensor<4x4xf32> -> tensor<4x1x4xf32>
  %p = tfm.reshape %x : tensor<1x4x2x8xf32> -> tensor<1x4x2x4x2xf32>
  %i0 = tfm.constant dense<0> : tensor<i64>
  %i1 = tfm.constant dense<1> : tensor<i64>
  %a = tfm.gather %p[%i0] {axis = 4 : i64} : (tensor<1x4x2x4x2xf32>, tensor<i64>) -> tensor<1x4x2x4xf32>
  %b = tfm.gather %p[%i1] {axis = 4 : i64} : (tensor<1x4x2x4x2xf32>, tensor<i64>) -> tensor<1x4x2x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %re = tfm.sub %ac, %bs : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %im = tfm.add %as, %bc : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %re1 = tfm.reshape %re : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %im1 = tfm.reshape %im : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %st = tfm.concat %re1, %im1 {axis = 4 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %y = tfm.reshape %st : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}

// Adjacent pairs with cos/sin computed from the positions.
// CHECK-LABEL: func.func @pairs_computed
// CHECK: tfm.rope %arg0, %{{.*}}, %{{.*}} {interleaved} : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>)
// CHECK-NOT: tfm.concat
func.func @pairs_computed(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %pos = tfm.constant dense<[[[0.0]], [[1.0]], [[2.0]], [[3.0]]]> : tensor<4x1x1xf32>
  %inv = tfm.constant dense<[1.00000000e+00, 1.00000001e-01, 9.99999978e-03, 1.00000005e-03]> : tensor<4xf32>
  %ang = tfm.mul %pos, %inv : (tensor<4x1x1xf32>, tensor<4xf32>) -> tensor<4x1x4xf32>
  %c = tfm.cos %ang : tensor<4x1x4xf32>
  %s = tfm.sin %ang : tensor<4x1x4xf32>
  %p = tfm.reshape %x : tensor<1x4x2x8xf32> -> tensor<1x4x2x4x2xf32>
  %a1 = tfm.slice %p starts [0, 0, 0, 0, 0] ends [1, 4, 2, 4, 1] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %b1 = tfm.slice %p starts [0, 0, 0, 0, 1] ends [1, 4, 2, 4, 2] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %a = tfm.reshape %a1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %b = tfm.reshape %b1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %re = tfm.sub %ac, %bs : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %im = tfm.add %as, %bc : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %re1 = tfm.reshape %re : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %im1 = tfm.reshape %im : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %st = tfm.concat %re1, %im1 {axis = 4 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %y = tfm.reshape %st : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}

// A rotation scaled by 2 is not a rope.
// CHECK-LABEL: func.func @pairs_scaled
// CHECK-NOT: tfm.rope
func.func @pairs_scaled(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %c = tfm.constant dense<[[[2.00000000e+00, 2.00000000e+00, 2.00000000e+00, 2.00000000e+00]], [[1.08060455e+00, 1.99000835e+00, 1.99989998e+00, 1.99999905e+00]], [[-8.32293689e-01, 1.96013319e+00, 1.99960005e+00, 1.99999595e+00]], [[-1.97998500e+00, 1.91067302e+00, 1.99910009e+00, 1.99999106e+00]]]> : tensor<4x1x4xf32>
  %s = tfm.constant dense<[[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00]], [[1.68294191e+00, 1.99666828e-01, 1.99996661e-02, 1.99999963e-03]], [[1.81859481e+00, 3.97338659e-01, 3.99973318e-02, 3.99999740e-03]], [[2.82240003e-01, 5.91040432e-01, 5.99910021e-02, 5.99999120e-03]]]> : tensor<4x1x4xf32>
  %p = tfm.reshape %x : tensor<1x4x2x8xf32> -> tensor<1x4x2x4x2xf32>
  %a1 = tfm.slice %p starts [0, 0, 0, 0, 0] ends [1, 4, 2, 4, 1] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %b1 = tfm.slice %p starts [0, 0, 0, 0, 1] ends [1, 4, 2, 4, 2] steps [1, 1, 1, 1, 1] : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x4x1xf32>
  %a = tfm.reshape %a1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %b = tfm.reshape %b1 : tensor<1x4x2x4x1xf32> -> tensor<1x4x2x4xf32>
  %ac = tfm.mul %a, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bs = tfm.mul %b, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %as = tfm.mul %a, %s : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %bc = tfm.mul %b, %c : (tensor<1x4x2x4xf32>, tensor<4x1x4xf32>) -> tensor<1x4x2x4xf32>
  %re = tfm.sub %ac, %bs : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %im = tfm.add %as, %bc : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %re1 = tfm.reshape %re : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %im1 = tfm.reshape %im : tensor<1x4x2x4xf32> -> tensor<1x4x2x4x1xf32>
  %st = tfm.concat %re1, %im1 {axis = 4 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %y = tfm.reshape %st : tensor<1x4x2x4x2xf32> -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}
