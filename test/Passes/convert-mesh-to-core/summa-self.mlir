// RUN: not wafer-opt %s --wafer-compile="grid=2x2 gemm=summa" 2>&1 | FileCheck %s
// gemm=auto leaves SUMMA out for such a product and compiles.
// RUN: wafer-opt %s --wafer-compile="grid=2x2 gemm=auto" | FileCheck %s --check-prefix=AUTO
// AUTO: core.program

// SUMMA's owners lend their tile by swapping it into a panel; C x C would
// lend one buffer as both panels.
// CHECK: error: {{.*}}convert-mesh-to-core: summa of a tensor with itself is not supported yet
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = tfm.matmul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = tfm.matmul %c, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}
