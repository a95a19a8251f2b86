// RUN: wafer-opt %s --wafer-compile="grid=9x2 ktree-k=2" | FileCheck %s

// K-tree over 9 rows with K = 2, centered: halves rows 4..0 and 5..8 (half
// positions q = 4 - y and y - 5), each in groups of 3 at strides 1 and 3;
// row 5 hands the right half's sum to row 4 (the join), which multicasts
// it both ways. In each group's chain the first member receives and
// combines, the middle one streams what arrives on (combine_relay) and the
// last one sends.
// CHECK: core.channel @ktree2_level0
// CHECK: core.channel @ktree2_level1
// CHECK: core.channel @ktree2_join {
// CHECK-NEXT: core.route color {{[0-9]+}} at <x = 0:1:1, y = 5:5:1> from ramp to [north]
// CHECK-NEXT: core.route color {{[0-9]+}} at <x = 0:1:1, y = 4:4:1> from south to [ramp]
// CHECK: core.channel @broadcast_mid_y {
// CHECK-NEXT: core.route color {{[0-9]+}} at <x = 0:1:1, y = 4:4:1> from ramp to [north, south]
// CHECK: core.gemv_tile @t2
// CHECK: core.when "y <= 4 && (4 - y) % 1 == 0 && ((4 - y) / 1) % 3 == 0 && ((4 - y) / 1) % 3 + 1 < 3 && (4 - y) + 1 < 5" {
// CHECK-NEXT: core.recv @gemv0_partial on @ktree2_level0
// CHECK-NEXT: core.elementwise <add> @t2, @t2, @gemv0_partial
// CHECK: core.when "y <= 4 && (4 - y) % 1 == 0 && ((4 - y) / 1) % 3 > 0 && ((4 - y) / 1) % 3 + 1 < 3 && (4 - y) + 1 < 5" {
// CHECK-NEXT: core.combine_relay <add> @t2, @gemv0_partial on @ktree2_level0
// CHECK: core.when "y <= 4 && (4 - y) % 1 == 0 && ((4 - y) / 1) % 3 > 0 && (((4 - y) / 1) % 3 + 1 >= 3 || (4 - y) + 1 >= 5)" {
// CHECK-NEXT: core.send @t2 on @ktree2_level0
// CHECK: core.when "y > 4 && (y - 5) % 1 == 0 && ((y - 5) / 1) % 3 == 0 && ((y - 5) / 1) % 3 + 1 < 3 && (y - 5) + 1 < 4" {
// CHECK: core.when "y <= 4 && (4 - y) % 3 == 0 && ((4 - y) / 3) % 3 == 0 && ((4 - y) / 3) % 3 + 1 < 3 && (4 - y) + 3 < 5" {
// CHECK: core.when "y == 5" {
// CHECK-NEXT: core.send @t2 on @ktree2_join
// CHECK: core.when "y == 4" {
// CHECK-NEXT: core.recv @gemv0_partial on @ktree2_join
// CHECK-NEXT: core.elementwise <add> @t2, @t2, @gemv0_partial
// CHECK: core.when "y == 4" {
// CHECK-NEXT: core.send @t2 on @broadcast_mid_y
// CHECK: core.when "y != 4" {
// CHECK-NEXT: core.recv @t2 on @broadcast_mid_y
func.func @main(%x: tensor<1x20xf32>, %w: tensor<20x6xf32>) -> tensor<1x6xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x20xf32>, tensor<20x6xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}
