// RUN: wafer-opt %s --wafer-compile="grid=2x3 gemm=allgather" | FileCheck %s

// Allgather on 2x3 (N = lcm = 6 blocks of K): each core copies its A chunk
// (6 / W = 2 blocks) into the row panel, then 2 ring shifts along x bring
// the other chunks; then B's column panel (chunks of 6 / H = 3 blocks)
// takes 1 shift along y. Then 6 block products.
// CHECK: core.program attributes {estimated_cycles = array<i64: {{[0-9]+}}>, grid = #mesh.grid<2x3>, ops = {{\[\[}}"gemm0", "gemm", "allgather"]]
// CHECK-NOT: interleave
// CHECK: core.zero @t2
// CHECK-NEXT: core.copy @gemm0_a_panel["lx"], @t0["0"] {size = 2 : i64}
// CHECK-NEXT: core.copy @gemm0_b_panel["ly"], @t1["0"] {size = 3 : i64}
// CHECK-NEXT: core.repeat "2" {
// CHECK-NEXT: core.send @t0 on @ring_x
// CHECK-NEXT: core.recv @gemm0_a_next on @ring_x
// CHECK-NEXT: core.swap @t0, @gemm0_a_next
// CHECK-NEXT: core.copy @gemm0_a_panel["(lx + i + 1) % W"], @t0["0"] {size = 2 : i64}
// CHECK-NEXT: }
// CHECK-NEXT: core.repeat "1" {
// CHECK-NEXT: core.send @t1 on @ring_y
// CHECK-NEXT: core.recv @gemm0_b_next on @ring_y
// CHECK-NEXT: core.swap @t1, @gemm0_b_next
// CHECK-NEXT: core.copy @gemm0_b_panel["(ly + i + 1) % H"], @t1["0"] {size = 3 : i64}
// CHECK-NEXT: }
// CHECK: core.repeat "6" {
// CHECK-NEXT: core.copy @gemm0_a_block["0"], @gemm0_a_panel["(i % W) * 2 + i / W"] {size = 1 : i64}
// CHECK-NEXT: core.copy @gemm0_b_block["0"], @gemm0_b_panel["(i % H) * 3 + i / H"] {size = 1 : i64}
// CHECK-NEXT: core.gemm_tile @t2, @gemm0_a_block, @gemm0_b_block {k = 1 : i64, m = 1 : i64, n = 1 : i64}
func.func @main(%x: tensor<2x6xf32>, %w: tensor<6x3xf32>) -> tensor<2x3xf32> {
  %y = tfm.matmul %x, %w : (tensor<2x6xf32>, tensor<6x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
