// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=4x4" --mesh-place-interleave | FileCheck %s
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=4x4" | FileCheck %s --check-prefix=BEFORE

// Every distributed value switches to the interleaved placement, so the
// element-wise consumer keeps agreeing with the GEMM.
// BEFORE-NOT: interleave
// CHECK: mesh.distribute {{.*}} -> tensor<8x8xf32, #mesh.layout<[y:4, x:4], interleave>>
// CHECK: mesh.gemm {{.*}} -> tensor<8x8xf32, #mesh.layout<[y:4, x:4], interleave>>
// CHECK: mesh.map <mul> {{.*}} : tensor<8x8xf32, #mesh.layout<[y:4, x:4], interleave>>
func.func @main(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = tfm.mul %y, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}
