// RUN: wafer-opt %s --wafer-compile="grid=3x3" | FileCheck %s
// RUN: wafer-opt %s --wafer-compile="grid=30x30" | FileCheck %s --check-prefix=BIG

// One role serves every core; the program's size does not depend on the grid.
// CHECK: core.program attributes {estimated_cycles = array<i64: {{[0-9]+}}>, grid = #mesh.grid<3x3>, interleave, ops = {{\[\[}}"gemm0", "gemm", "meshgemm"]]
// CHECK-DAG: core.channel @ring_x
// CHECK-DAG: core.channel @ring_y
// CHECK: core.role @all at <x = 0:2:1, y = 0:2:1> {
// CHECK-NEXT: core.zero @t2
// Alignment: the A and B shifts overlap for min(ly, lx) steps.
// CHECK-NEXT: core.repeat "(lx < ly) * lx + (ly <= lx) * ly" {
// CHECK-NEXT: core.send @t0 on @ring_x
// CHECK-NEXT: core.send @t1 on @ring_y
// CHECK-NEXT: core.recv @gemm0_a_next on @ring_x
// CHECK-NEXT: core.swap @t0, @gemm0_a_next
// CHECK-NEXT: core.recv @gemm0_b_next on @ring_y
// CHECK-NEXT: core.swap @t1, @gemm0_b_next
// CHECK: core.repeat "ly - ((lx < ly) * lx + (ly <= lx) * ly)" {
// CHECK-NEXT: core.send @t0 on @ring_x
// CHECK-NEXT: core.recv @gemm0_a_next on @ring_x
// CHECK-NEXT: core.swap @t0, @gemm0_a_next
// CHECK: core.repeat "lx - ((lx < ly) * lx + (ly <= lx) * ly)" {
// CHECK: core.repeat "2" {
// CHECK: core.gemm_tile @t2, @t0, @t1 {k = 3 : i64, m = 3 : i64, n = 3 : i64}
// CHECK: core.mark 0
// CHECK: core.input @t0 {name = "x"
// CHECK: core.output @t2 {name = "output0"
// CHECK-NOT: func.func
// BIG: core.role @all at <x = 0:29:1, y = 0:29:1> {
// BIG-NOT: core.role
func.func @main(%x: tensor<9x9xf32> {tfm.name = "x"}, %w: tensor<9x9xf32>) -> tensor<9x9xf32> attributes {tfm.output_names = []} {
  %y = tfm.matmul %x, %w : (tensor<9x9xf32>, tensor<9x9xf32>) -> tensor<9x9xf32>
  return %y : tensor<9x9xf32>
}
