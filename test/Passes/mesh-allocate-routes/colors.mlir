// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=5x7" --mesh-place-interleave --mesh-allocate-routes | FileCheck %s
// RUN: echo '{"base": "wse2", "routes_per_core": 6}' > %t.json
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=5x7 target=%t.json" --mesh-place-interleave --mesh-allocate-routes 2>&1 | FileCheck %s --check-prefix=BUDGET

// The two GEMMs share their rings' colors; the GEMV's K-tree levels and
// broadcast come after them.
// CHECK: mesh.gemm {{.*}}colors = array<i32: 0, [[Y:[0-9]+]]>
// CHECK: mesh.gemm {{.*}}colors = array<i32: 0, [[Y]]>
// CHECK: mesh.gemv {{.*}}colors = array<i32:
// BUDGET: error: {{.*}}mesh-allocate-routes: {{mesh.gem[mv]}} needs {{[0-9]+}} routing colors at core (x={{[0-9]+}}, y={{[0-9]+}}) but target 'wse2 (changed by {{.*}}.json)' has 6
func.func @main(%x: tensor<10x14xf32>, %w: tensor<14x14xf32>, %v: tensor<1x14xf32>) -> (tensor<10x14xf32>, tensor<10x14xf32>, tensor<1x14xf32>) {
  %y = tfm.matmul %x, %w : (tensor<10x14xf32>, tensor<14x14xf32>) -> tensor<10x14xf32>
  %z = tfm.matmul %x, %w : (tensor<10x14xf32>, tensor<14x14xf32>) -> tensor<10x14xf32>
  %g = tfm.matmul %v, %w : (tensor<1x14xf32>, tensor<14x14xf32>) -> tensor<1x14xf32>
  return %y, %z, %g : tensor<10x14xf32>, tensor<10x14xf32>, tensor<1x14xf32>
}
