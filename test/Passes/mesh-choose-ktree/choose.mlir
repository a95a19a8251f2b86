// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0" | FileCheck %s --check-prefix=OPEN
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0" --mesh-place-interleave --mesh-choose-ktree | FileCheck %s
// RUN: echo '{"base": "wse2", "routes_per_core": 5}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0 target=%t.json" --mesh-place-interleave --mesh-choose-ktree | FileCheck %s --check-prefix=FEW
// RUN: echo '{"base": "wse2", "routes_per_core": 8}' > %t.8.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0 target=%t.8.json" --mesh-place-interleave --mesh-choose-ktree | FileCheck %s --check-prefix=EIGHT
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=3" --mesh-choose-ktree | FileCheck %s --check-prefix=SET

// convert-tfm-to-mesh leaves K open; mesh-choose-ktree routes a copy of
// the plan with each K and keeps the one whose ops' estimates add up to
// the fewest cycles: K = 2 (groups of 3 in each half of the 16 rows) for
// all three GEMVs, 321 cycles (K = 1: 377, K = 3 and 4: 333).
// OPEN-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree>}
// CHECK-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 2>
// With 8 routes per core K = 2's trees do not fit and would be relayed
// (1119 cycles); K = 3's fit (333).
// EIGHT-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 3>
// With 5 routes no K fits: K = 1 and 2 need 7 colors, K = 3 and 4 need 8;
// the smaller of the closest, which mesh-allocate-routes then reports.
// FEW-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 1>
// A K given on the command line is kept.
// SET-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 3>
func.func @main(%x: tensor<1x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<32x48xf32>, %w3: tensor<48x8xf32>) -> tensor<1x8xf32> {
  %h1 = tfm.matmul %x, %w1 : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  %h2 = tfm.matmul %h1, %w2 : (tensor<1x32xf32>, tensor<32x48xf32>) -> tensor<1x48xf32>
  %y = tfm.matmul %h2, %w3 : (tensor<1x48xf32>, tensor<48x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
