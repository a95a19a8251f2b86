// RUN: wafer-opt %s -split-input-file --convert-tfm-to-mesh="grid=2x2" --mesh-check-memory -verify-diagnostics | FileCheck %s

// Fits: three 48x48 f32 tiles and two shift buffers, 46080 bytes of 49152.
// CHECK: mesh.gemm
func.func @main(%x: tensor<96x96xf32>, %w: tensor<96x96xf32>) -> tensor<96x96xf32> {
  %y = tfm.matmul %x, %w : (tensor<96x96xf32>, tensor<96x96xf32>) -> tensor<96x96xf32>
  return %y : tensor<96x96xf32>
}

// -----

// The tensors fit (3 x 10816 bytes); B's shift buffer does not.
func.func @main(%x: tensor<104x104xf32>, %w: tensor<104x104xf32>) -> tensor<104x104xf32> {
  // expected-error @+1 {{mesh-check-memory: 'mesh.gemm' needs working buffer 'b_next' (10816 bytes per core): core (0, 0) would hold 54080 bytes, target 'wse2' has 49152}}
  %y = tfm.matmul %x, %w : (tensor<104x104xf32>, tensor<104x104xf32>) -> tensor<104x104xf32>
  return %y : tensor<104x104xf32>
}

// -----

// One operand alone is larger than a core's SRAM.
func.func @main(%x: tensor<512x512xf32>, %w: tensor<512x512xf32>) -> tensor<512x512xf32> {
  // expected-error @+1 {{mesh-check-memory: 'mesh.distribute' needs tensor tensor<512x512xf32, #mesh.layout<[y:2, x:2]>> (262144 bytes per core): core (0, 0) would hold 262144 bytes, target 'wse2' has 49152}}
  %y = tfm.matmul %x, %w : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
