// gemm=auto routes each candidate plan as mesh-allocate-routes will: an
// algorithm whose colors overflow the target's routes per core does not
// fit. A 16x64x64 matmul on 4x12 is cheapest with SUMMA (3,825 cycles),
// whose row and column broadcasts need 8 colors at a core; with 7, the
// all-gather (3,932 cycles, 6 colors) is the cheapest that fits; with 5,
// nothing fits and the cheapest plan's overflow is the error.
// RUN: echo '{"base": "wse2", "name": "routes8", "routes_per_core": 8}' > %t.8.json
// RUN: echo '{"base": "wse2", "name": "routes7", "routes_per_core": 7}' > %t.7.json
// RUN: echo '{"base": "wse2", "name": "routes5", "routes_per_core": 5}' > %t.5.json
// RUN: wafer-opt %s --wafer-compile="grid=4x12 gemm=auto target=%t.8.json" | FileCheck %s --check-prefix=EIGHT
// RUN: wafer-opt %s --wafer-compile="grid=4x12 gemm=auto target=%t.7.json" | FileCheck %s --check-prefix=SEVEN
// RUN: not wafer-opt %s --wafer-compile="grid=4x12 gemm=auto target=%t.5.json" 2>&1 | FileCheck %s --check-prefix=FIVE

// EIGHT: core.program attributes {estimated_cycles = array<i64: 3825>, {{.*}}ops = {{\[\[}}"gemm0", "gemm", "summa"]]
// SEVEN: core.program attributes {estimated_cycles = array<i64: 3932>, {{.*}}ops = {{\[\[}}"gemm0", "gemm", "allgather"]]
// FIVE: error: {{.*}}mesh-allocate-routes: mesh.gemm needs 8 routing colors at core (x={{[0-9]+}}, y={{[0-9]+}}) but target 'routes5' has 5
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = tfm.matmul %x, %w : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
