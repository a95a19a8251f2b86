// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0" | FileCheck %s --check-prefix=OPEN
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0" --mesh-place-interleave --mesh-choose-ktree | FileCheck %s
// RUN: echo '{"base": "wse2", "routes_per_core": 5}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=0 target=%t.json" --mesh-place-interleave --mesh-choose-ktree | FileCheck %s --check-prefix=FEW
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=16x4 ktree-k=3" --mesh-choose-ktree | FileCheck %s --check-prefix=SET

// convert-tfm-to-mesh leaves K open; mesh-choose-ktree asks the cost model
// (rt::chooseKTreeK) for one K for all three GEMVs: K = 2 (groups of 3 in
// each half of the 16 rows) is fastest for the two column trees, and the
// 4-column tree, whose halves are one chain of 2 at any K, does not move it.
// OPEN-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree>}
// CHECK-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 2>
// With 5 routes per core no K fits both axes' trees (2 (2K + 2) colors):
// K = 1, the shallowest, which mesh-allocate-routes then relays.
// FEW-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 1>
// A K given on the command line is kept.
// SET-COUNT-3: mesh.gemv {{.*}}allreduce = #mesh.allreduce<ktree, k = 3>
func.func @main(%x: tensor<1x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<32x48xf32>, %w3: tensor<48x8xf32>) -> tensor<1x8xf32> {
  %h1 = tfm.matmul %x, %w1 : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  %h2 = tfm.matmul %h1, %w2 : (tensor<1x32xf32>, tensor<32x48xf32>) -> tensor<1x48xf32>
  %y = tfm.matmul %h2, %w3 : (tensor<1x48xf32>, tensor<48x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
