// The passes that need K refuse a K-tree whose K is still open.
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=4x4 ktree-k=0" --mesh-allocate-routes 2>&1 | FileCheck %s --check-prefix=ROUTES
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=4x4 ktree-k=0" --mesh-check-memory 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=4x4 ktree-k=0" --convert-mesh-to-core 2>&1 | FileCheck %s --check-prefix=LOWER

// ROUTES: error: {{.*}}mesh-allocate-routes: the K of this K-tree is not chosen yet (run mesh-choose-ktree first)
// MEMORY: error: {{.*}}mesh-check-memory: the K of this K-tree is not chosen yet (run mesh-choose-ktree first)
// LOWER: error: {{.*}}convert-mesh-to-core: the K of this K-tree is not chosen yet (run mesh-choose-ktree first)
func.func @main(%x: tensor<1x16xf32>, %w: tensor<16x8xf32>) -> tensor<1x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
