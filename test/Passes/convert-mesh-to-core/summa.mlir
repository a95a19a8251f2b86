// RUN: wafer-opt %s --wafer-compile="grid=4x4 gemm=summa" | FileCheck %s

// SUMMA: no INTERLEAVE; neighbour channels in both directions on both axes.
// In step i the owners (column i % W for A, row i % H for B) lend their
// tile to the panel and send it both ways; the others receive from the
// owner's side and forward one hop further.
// CHECK: core.program
// CHECK-NOT: interleave
// CHECK-SAME: ["gemm0", "gemm", "summa"]
// CHECK-DAG: core.channel @east_x
// CHECK-DAG: core.channel @west_x
// CHECK-DAG: core.channel @south_y
// CHECK-DAG: core.channel @north_y
// CHECK: core.repeat "4" {
// CHECK-NEXT: core.when "x == i % W" {
// CHECK-NEXT: core.swap @t0, @gemm0_a_panel
// CHECK-NEXT: core.when "x + 1 < W" {
// CHECK-NEXT: core.send @gemm0_a_panel on @east_x
// CHECK: core.when "x > 0" {
// CHECK-NEXT: core.send @gemm0_a_panel on @west_x
// CHECK: core.when "x > i % W" {
// CHECK-NEXT: core.recv @gemm0_a_panel on @east_x
// CHECK: core.when "x < i % W" {
// CHECK-NEXT: core.recv @gemm0_a_panel on @west_x
// CHECK: core.when "y == i % H" {
// CHECK: core.gemm_tile @t2, @gemm0_a_panel, @gemm0_b_panel {k = 2 : i64, m = 2 : i64, n = 2 : i64}
// CHECK-NEXT: core.when "x == i % W" {
// CHECK-NEXT: core.swap @t0, @gemm0_a_panel
// CHECK: core.when "y == i % H" {
// CHECK-NEXT: core.swap @t1, @gemm0_b_panel
// CHECK: core.mark 0
func.func @main(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
