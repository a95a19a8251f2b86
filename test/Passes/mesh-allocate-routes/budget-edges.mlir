// RUN: echo '{"base": "wse2", "routes_per_core": 14}' > %t.14.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=6x6 target=%t.14.json" --mesh-place-interleave --mesh-allocate-routes | FileCheck %s --check-prefix=FITS
// RUN: echo '{"base": "wse2", "routes_per_core": 13}' > %t.13.json
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=6x6 target=%t.13.json" --mesh-place-interleave --mesh-allocate-routes 2>&1 | FileCheck %s --check-prefix=OVER

// With INTERLEAVE, relayed hops would take 3 colors per direction, more
// than these small trees: 14 routes fit without relaying, and with 13 the
// error reports the smaller need.
// FITS-NOT: relayed
// OVER: error: {{.*}}mesh-allocate-routes: mesh.gemv needs 14 routing colors at core (x=2, y=2) but target 'wse2 (changed by {{.*}}.json)' has 13
func.func @main(%a: tensor<12x12xf32>, %b: tensor<12x12xf32>, %x: tensor<1x12xf32>, %w: tensor<12x12xf32>, %v: tensor<12x12xf32>) -> (tensor<12x12xf32>, tensor<1x12xf32>) {
  %c = tfm.matmul %a, %b : (tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xf32>
  %h = tfm.matmul %x, %w : (tensor<1x12xf32>, tensor<12x12xf32>) -> tensor<1x12xf32>
  %y = tfm.matmul %h, %v : (tensor<1x12xf32>, tensor<12x12xf32>) -> tensor<1x12xf32>
  return %c, %y : tensor<12x12xf32>, tensor<1x12xf32>
}
