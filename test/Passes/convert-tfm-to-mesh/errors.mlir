// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=5by7" 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2000x2" 2>&1 | FileCheck %s --check-prefix=FIT
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2x2 target=wse9" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2x2 ktree-k=-1" 2>&1 | FileCheck %s --check-prefix=KTREE
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=3x2" 2>&1 | FileCheck %s --check-prefix=RELAYOUT
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2x2 gemm=strassen" 2>&1 | FileCheck %s --check-prefix=GEMM
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2x2 allreduce=tree" 2>&1 | FileCheck %s --check-prefix=ALLREDUCE
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=2x2 dtype=bf16" 2>&1 | FileCheck %s --check-prefix=DTYPE

// GRID: error: {{.*}}convert-tfm-to-mesh: grid '5by7' is not of the form HxW
// FIT: error: {{.*}}convert-tfm-to-mesh: grid 2000x2 does not fit target 'wse2' (fabric 994x750 cores, rows x columns)
// TARGET: error: {{.*}}convert-tfm-to-mesh: {{.*}}wse9
// KTREE: error: {{.*}}convert-tfm-to-mesh: ktree-k must be at least 1 (or 0: one K for all, chosen by mesh-choose-ktree) and at most 64, got -1
// GEMM: error: {{.*}}convert-tfm-to-mesh: gemm must be meshgemm, cannon, summa, allgather or auto, got 'strassen'
// The typed options' values are checked by the option parser (values in
// `wafer-opt --help`).
// ALLREDUCE: error: for the --allreduce option: Cannot find option named 'tree'{{$}}
// DTYPE: error: for the --dtype option: Cannot find option named 'bf16'{{$}}
// RELAYOUT: error: {{.*}}convert-tfm-to-mesh: tfm.transpose of a computed tensor is not supported by the plan (only attention heads and unit dimensions)

func.func @main(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = tfm.transpose %y [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %z = tfm.matmul %t, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}
