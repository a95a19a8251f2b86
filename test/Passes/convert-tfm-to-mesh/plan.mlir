// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=5x7" | FileCheck %s

// CHECK: module attributes {mesh.grid = #mesh.grid<5x7>, mesh.target = #mesh.target<name = "wse2"
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<37x50xf32>, %v: tensor<1x50xf32>, %bias: tensor<29xf32>) -> (tensor<37x29xf32>, tensor<1x29xf32>) attributes {tfm.output_names = ["y", "z"]} {
  %w = tfm.weight "w" from "m.onnx" : tensor<29x50xf32>
  %t = tfm.transpose %w [1, 0] : tensor<29x50xf32> -> tensor<50x29xf32>
  // CHECK-DAG: %[[A:.*]] = mesh.distribute %arg0 : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5, x:35 balanced]>>
  // CHECK-DAG: %[[B:.*]] = mesh.distribute %{{.*}} {permutation = array<i64: 1, 0>} : tensor<29x50xf32> -> tensor<50x29xf32, #mesh.layout<[y:35 balanced, x:7 balanced]>>
  // CHECK: %[[C:.*]] = mesh.gemm %[[A]], %[[B]] {algorithm = #mesh.gemm_algorithm<meshgemm>}
  %y = tfm.matmul %x, %t : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
  // CHECK: %[[BIAS:.*]] = mesh.distribute %arg2 : tensor<29xf32> -> tensor<37x29xf32, #mesh.layout<[y:5, x:7 balanced]>>
  // CHECK: %[[S:.*]] = mesh.map <add> %[[C]], %[[BIAS]] : tensor<37x29xf32, #mesh.layout<[y:5, x:7 balanced]>>
  %s = tfm.add %y, %bias : (tensor<37x29xf32>, tensor<29xf32>) -> tensor<37x29xf32>
  // CHECK: mesh.distribute %arg1 : tensor<1x50xf32> -> tensor<1x50xf32, #mesh.layout<[*, y:5]>>
  // CHECK: mesh.gemv %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ktree, k = 2>} {{.*}} -> tensor<1x29xf32, #mesh.layout<[*, x:7 balanced]>>
  %z = tfm.matmul %v, %t : (tensor<1x50xf32>, tensor<50x29xf32>) -> tensor<1x29xf32>
  // CHECK: mesh.collect %[[S]]
  // CHECK-NOT: tfm.matmul
  return %s, %z : tensor<37x29xf32>, tensor<1x29xf32>
}
