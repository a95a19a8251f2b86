// RUN: echo '{"base": "wse2", "routes_per_core": 3}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=1x6 gemm=cannon target=%t.json" --mesh-allocate-routes | FileCheck %s

// On a single row the y ring has no paths and takes no color: the x ring's
// 3 colors fit a budget of 3.
// CHECK: mesh.gemm {{.*}}colors = array<i32: 0, 0>
func.func @main(%a: tensor<4x12xf32>, %b: tensor<12x6xf32>) -> tensor<4x6xf32> {
  %c = tfm.matmul %a, %b : (tensor<4x12xf32>, tensor<12x6xf32>) -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}
