// RUN: not wafer-opt %s --tfm-keep-layers=layers=1 2>&1 | FileCheck %s

// A module not raised (or not a transformer) has no layers to count.
// CHECK: error: {{.*}}tfm-keep-layers: the module has no tfm.attention, so no decoder layers to keep (raise it first: tfm-raise-transformer)
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %y = tfm.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
