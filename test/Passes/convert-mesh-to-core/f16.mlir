// RUN: wafer-opt %s --wafer-compile="grid=2x2 dtype=f16" | FileCheck %s
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=2x2 dtype=f16" | FileCheck %s --check-prefix=MESH

// dtype=f16: host tensors stay f32, every distributed tensor and buffer is
// f16 (2 bytes per value, offsets kept 4-byte aligned).
// MESH: mesh.distribute %{{.*}} : tensor<6x5xf32> -> tensor<6x5xf16, #mesh.layout<[y:2, x:2 balanced]>>
// MESH: mesh.gemm {{.*}} -> tensor<6x3xf16, #mesh.layout<[y:2, x:2 balanced]>>
// MESH: mesh.collect %{{.*}} : tensor<6x3xf16, #mesh.layout<[y:2, x:2 balanced]>> -> tensor<6x3xf32>
// CHECK: core.buffer @t0[9] : f16 at 0
// CHECK: core.buffer @t1[6] : f16 at 20
// CHECK: core.buffer @t2[6] : f16 at 32
func.func @main(%x: tensor<6x5xf32>, %w: tensor<5x3xf32>) -> tensor<6x3xf32> {
  %y = tfm.matmul %x, %w : (tensor<6x5xf32>, tensor<5x3xf32>) -> tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}
