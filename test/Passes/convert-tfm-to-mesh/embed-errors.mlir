// An embedding runs on the host as it places the rows: only from a weight
// table by ids that are a graph input (a constant table crashed the
// planner once).
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=1x1" 2>&1 | FileCheck %s
// RUN: not wafer-opt %s --wafer-compile="grid=2x2" 2>&1 | FileCheck %s

// CHECK: error: {{.*}}convert-tfm-to-mesh: an embedding is gathered by the host, from a weight table (tfm.weight) by token ids that are a graph input
// CHECK-NOT: error
func.func @main(%ids: tensor<4xi64>) -> tensor<4x8xf32> {
  %t = tfm.constant dense<1.0> : tensor<3x8xf32>
  %0 = tfm.embed %t[%ids] : (tensor<3x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
