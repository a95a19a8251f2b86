// RUN: wafer-opt %s --wafer-compile="grid=4x2 allreduce=ring" | FileCheck %s --check-prefix=RING
// RUN: wafer-opt %s --wafer-compile="grid=2x4 allreduce=ktree ktree-k=2" | FileCheck %s --check-prefix=TREE

// The second GEMV of a chain takes the transposed orientation and reduces
// along rows: x ring, lx, W.
// RING: ["gemv0", "gemv", "ring"], ["gemv1", "gemv", "ring"]
// RING-DAG: core.channel @ring_y
// RING-DAG: core.channel @ring_x
// RING: core.repeat "3" {
// RING-NEXT: core.send @gemv0_pass on @ring_y
// RING: core.repeat "1" {
// RING-NEXT: core.send @gemv1_pass on @ring_x

// TREE-DAG: core.channel @ktree2_x_level0
// TREE-DAG: core.channel @broadcast_x
// TREE: core.when "lx % 1 == 0 && (lx / 1) % 2 == 0 && (lx / 1) % 2 + 1 < 2 && lx + 1 < W" {
// TREE: core.when "lx == 0" {
// TREE-NEXT: core.send {{.*}} on @broadcast_x
func.func @main(%x: tensor<1x8xf32>, %w: tensor<8x6xf32>, %v: tensor<6x4xf32>) -> tensor<1x4xf32> {
  %h = tfm.matmul %x, %w : (tensor<1x8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  %y = tfm.matmul %h, %v : (tensor<1x6xf32>, tensor<6x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
