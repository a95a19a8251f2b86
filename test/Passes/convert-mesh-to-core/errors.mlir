// RUN: not wafer-opt %s --convert-mesh-to-core 2>&1 | FileCheck %s --check-prefix=NOPLAN
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=1x1" --mesh-place-interleave --mesh-allocate-routes --convert-mesh-to-core 2>&1 | FileCheck %s --check-prefix=SRAM
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=10x10" --convert-mesh-to-core 2>&1 | FileCheck %s --check-prefix=COLORS

// NOPLAN: error: {{.*}}convert-mesh-to-core: needs @main, mesh.grid and mesh.target (run convert-tfm-to-mesh first)
// SRAM: error: {{.*}}convert-mesh-to-core: per-core SRAM exhausted: buffer 't1' needs 160000 bytes at offset 40000 but target 'wse2' has 49152 bytes per core
// COLORS: error: {{.*}}convert-mesh-to-core: routing colors missing (run mesh-allocate-routes first)
func.func @main(%x: tensor<100x100xf32>, %w: tensor<100x400xf32>) -> tensor<100x400xf32> {
  %y = tfm.matmul %x, %w : (tensor<100x100xf32>, tensor<100x400xf32>) -> tensor<100x400xf32>
  return %y : tensor<100x400xf32>
}
