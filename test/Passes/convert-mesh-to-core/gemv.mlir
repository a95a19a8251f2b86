// RUN: wafer-opt %s --wafer-compile="grid=9x2 ktree-k=2" | FileCheck %s

// K-tree over 9 rows with K = 2: groups of 3 at strides 1 and 3, then the
// broadcast back down each column. In each group's chain the first member
// receives and combines, the middle one streams what arrives on
// (combine_relay) and the last one sends.
// CHECK: core.channel @ktree2_level0
// CHECK: core.channel @ktree2_level1
// CHECK: core.channel @broadcast_y
// CHECK: core.gemv_tile @t2
// CHECK: core.when "ly % 1 == 0 && (ly / 1) % 3 == 0 && (ly / 1) % 3 + 1 < 3 && ly + 1 < H" {
// CHECK-NEXT: core.recv @gemv0_partial on @ktree2_level0
// CHECK-NEXT: core.elementwise <add> @t2, @t2, @gemv0_partial
// CHECK: core.when "ly % 1 == 0 && (ly / 1) % 3 > 0 && (ly / 1) % 3 + 1 < 3 && ly + 1 < H" {
// CHECK-NEXT: core.combine_relay <add> @t2, @gemv0_partial on @ktree2_level0
// CHECK: core.when "ly % 1 == 0 && (ly / 1) % 3 > 0 && ((ly / 1) % 3 + 1 >= 3 || ly + 1 >= H)" {
// CHECK-NEXT: core.send @t2 on @ktree2_level0
// CHECK: core.when "ly % 3 == 0 && (ly / 3) % 3 == 0 && (ly / 3) % 3 + 1 < 3 && ly + 3 < H" {
// CHECK: core.when "ly == 0" {
// CHECK-NEXT: core.send {{.*}} on @broadcast_y
// CHECK: core.when "ly != 0" {
// CHECK-NEXT: core.recv {{.*}} on @broadcast_y
func.func @main(%x: tensor<1x20xf32>, %w: tensor<20x6xf32>) -> tensor<1x6xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x20xf32>, tensor<20x6xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}
