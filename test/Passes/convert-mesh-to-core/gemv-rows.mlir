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

// Over the 2 rows the tree is only the join; over the 4 columns two halves
// of 2 (columns 1, 0 and 2, 3), joined at column 1, which broadcasts.
// TREE-DAG: core.channel @ktree2_join
// TREE-DAG: core.channel @broadcast_y
// TREE-DAG: core.channel @ktree2_x_level0
// TREE-DAG: core.channel @broadcast_mid_x
// TREE: core.when "x <= 1 && (1 - x) % 1 == 0 && ((1 - x) / 1) % 2 == 0 && ((1 - x) / 1) % 2 + 1 < 2 && (1 - x) + 1 < 2" {
// TREE-NEXT: core.recv @gemv1_partial on @ktree2_x_level0
// TREE-NOT: combine_relay
// TREE: core.when "x == 2" {
// TREE-NEXT: core.send {{.*}} on @ktree2_x_join
// TREE: core.when "x == 1" {
// TREE-NEXT: core.recv @gemv1_partial on @ktree2_x_join
// TREE: core.when "x == 1" {
// TREE-NEXT: core.send {{.*}} on @broadcast_mid_x
func.func @main(%x: tensor<1x8xf32>, %w: tensor<8x6xf32>, %v: tensor<6x4xf32>) -> tensor<1x4xf32> {
  %h = tfm.matmul %x, %w : (tensor<1x8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  %y = tfm.matmul %h, %v : (tensor<1x6xf32>, tensor<6x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
