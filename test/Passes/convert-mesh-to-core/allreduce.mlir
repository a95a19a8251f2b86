// RUN: wafer-opt %s --wafer-compile="grid=4x2 allreduce=ring" | FileCheck %s --check-prefix=RING
// RUN: wafer-opt %s --wafer-compile="grid=4x2 allreduce=pipeline" | FileCheck %s --check-prefix=PIPE

// Ring: every core passes on the partial it last received and adds the one
// that arrives, H - 1 times.
// RING: ["gemv0", "gemv", "ring"]
// RING: core.channel @ring_y
// RING: core.gemv_tile @t2, @t0, @t1
// RING-NEXT: core.copy @gemv0_pass["0"], @t2["0"]
// RING-NEXT: core.repeat "3" {
// RING-NEXT: core.send @gemv0_pass on @ring_y
// RING-NEXT: core.recv @gemv0_pass_next on @ring_y
// RING-NEXT: core.swap @gemv0_pass, @gemv0_pass_next
// RING-NEXT: core.elementwise <add> @t2, @t2, @gemv0_pass
// RING: core.mark 0

// Pipeline: the K-tree with K = 1 rooted at row 0 (the paper's baseline):
// one chain over rows 3 to 1, handed to row 0, then the broadcast.
// PIPE: ["gemv0", "gemv", "pipeline"]
// PIPE: core.channel @pipeline_level0
// PIPE-NOT: core.channel @pipeline_level1
// PIPE: core.channel @pipeline_join
// PIPE: core.channel @broadcast_y
// PIPE: core.when "y > 0 && (y - 1) % 1 == 0 && ((y - 1) / 1) % 3 == 0 && ((y - 1) / 1) % 3 + 1 < 3 && (y - 1) + 1 < 3" {
// PIPE-NEXT: core.recv @gemv0_partial on @pipeline_level0
// PIPE: core.combine_relay <add> @t2, @gemv0_partial on @pipeline_level0
// PIPE: core.when "y == 1" {
// PIPE-NEXT: core.send @t2 on @pipeline_join
// PIPE: core.send @t2 on @broadcast_y
func.func @main(%x: tensor<1x8xf32>, %w: tensor<8x6xf32>) -> tensor<1x6xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x8xf32>, tensor<8x6xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}
