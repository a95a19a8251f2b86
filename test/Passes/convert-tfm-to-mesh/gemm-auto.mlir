// gemm=auto plans a copy of the module with each GEMM algorithm and keeps
// the one whose ops' estimates add up to fewest cycles among those whose
// buffers fit (test/e2e/gemm-auto.test checks the totals): a 37x50x29
// matmul on 5x7 takes 35 MeshGEMM steps (lcm(5, 7)) against the allgather's
// 4 + 6 whole-chunk shifts; on 8x8 MeshGEMM's 8 steps win.
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=5x7 gemm=auto" | FileCheck %s --check-prefix=ODD
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=8x8 gemm=auto" | FileCheck %s --check-prefix=SQUARE
// RUN: wafer-opt %s --wafer-compile="grid=5x7 gemm=auto" | FileCheck %s --check-prefix=PIPELINE
// On a placement forced to INTERLEAVE only MeshGEMM is defined (the
// all-gather would be rejected by mesh-place-interleave).
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=5x7 gemm=auto interleave=true" | FileCheck %s --check-prefix=MESHGEMM
// RUN: wafer-opt %s --wafer-compile="grid=5x7 gemm=auto interleave=true" | FileCheck %s --check-prefix=FORCED

// ODD: mesh.gemm {{.*}}algorithm = #mesh.gemm_algorithm<allgather>
// SQUARE: mesh.gemm {{.*}}algorithm = #mesh.gemm_algorithm<meshgemm>
// MESHGEMM: mesh.gemm {{.*}}algorithm = #mesh.gemm_algorithm<meshgemm>
// PIPELINE: core.program attributes {estimated_cycles = array<i64: {{[0-9]+}}>, grid = #mesh.grid<5x7>, ops = {{\[\[}}"gemm0", "gemm", "allgather"]]
// FORCED: core.program attributes {{{.*}}interleave{{.*}}ops = {{\[\[}}"gemm0", "gemm", "meshgemm"]]
func.func @main(%x: tensor<37x50xf32>, %w: tensor<50x29xf32>) -> tensor<37x29xf32> {
  %y = tfm.matmul %x, %w : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
  return %y : tensor<37x29xf32>
}
