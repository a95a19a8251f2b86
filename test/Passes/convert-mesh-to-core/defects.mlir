// RUN: echo '{"base": "wse2", "dead_cores": [[1, 2]], "dead_links": [[0, 5, "south"]]}' > %t.json
// RUN: wafer-opt %s --wafer-compile="grid=3x4 target=%t.json" | FileCheck %s
// RUN: echo '{"base": "wse2", "fabric_width": 5, "fabric_height": 4, "dead_cores": [[2, 2], [1, 1]]}' > %t.small.json
// RUN: not wafer-opt %s --wafer-compile="grid=3x4 target=%t.small.json" 2>&1 | FileCheck %s --check-prefix=FIT

// The dead core at fabric row 1, column 2 takes its row and its column; the
// dead link below (0, 5) lies outside the grid's span (fabric columns 0..4)
// and costs nothing. The program records where each grid row and column
// sits; everything else is as on a clean fabric.
// CHECK: core.program attributes {estimated_cycles = array<i64: {{[0-9, ]+}}>, fabric_cols = array<i64: 0, 1, 3, 4>, fabric_rows = array<i64: 0, 2, 3>, grid = #mesh.grid<3x4>
// CHECK-SAME: target = #mesh.target<name = "wse2 (changed by {{.*}}.json)",
// CHECK-SAME: dead_cores = {{\[\[}}1, 2]], dead_links = {{\[\[}}0, 5, "south"]]>

// Two dead cores take two rows and two columns: 3x4 needs 5x6 fabric cores.
// FIT: error: {{.*}}convert-mesh-to-core: grid 3x4 (HxW) does not fit the wse2 (changed by {{.*}}.small.json) fabric of 4x5 (HxW) around its 2 dead cores and 0 dead links: skipping the rows and columns they take, it needs 5x6 fabric cores
func.func @main(%x: tensor<9x9xf32> {tfm.name = "x"}, %w: tensor<9x9xf32>) -> tensor<9x9xf32> attributes {tfm.output_names = []} {
  %y = tfm.matmul %x, %w : (tensor<9x9xf32>, tensor<9x9xf32>) -> tensor<9x9xf32>
  return %y : tensor<9x9xf32>
}
