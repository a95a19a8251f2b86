// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=4x4" --mesh-place-interleave | FileCheck %s
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=4x4" --mesh-place-interleave="always=true" | FileCheck %s --check-prefix=ALWAYS

// Without a MeshGEMM there are no rings to shorten: the placement stays.
// CHECK-NOT: interleave
// A decode program taking over an interleaved prefill's caches is placed
// as the prefill was (always).
// ALWAYS: mesh.gemv {{.*}} -> tensor<1x8xf32, #mesh.layout<[*, x:4], interleave>>
func.func @main(%x: tensor<1x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
