// RUN: echo '{"base": "wse2", "routes_per_core": 4}' > %t.json
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=9x2" --mesh-allocate-routes | FileCheck %s --check-prefix=WIDE
// RUN: wafer-opt %s --convert-tfm-to-mesh="grid=9x2 target=%t.json" --mesh-allocate-routes | FileCheck %s --check-prefix=RELAY
// RUN: wafer-opt %s --wafer-compile="grid=9x2 target=%t.json" | FileCheck %s --check-prefix=CORE
// RUN: echo '{"base": "wse2", "routes_per_core": 3}' > %t.3.json
// RUN: not wafer-opt %s --convert-tfm-to-mesh="grid=9x2 target=%t.3.json" --mesh-allocate-routes 2>&1 | FileCheck %s --check-prefix=TIGHT

// With 24 routes the K-tree's levels, join and broadcast get their own
// colors (2 + 1 for the levels of the halves, rows 0-4 and 5-8, one for
// the join, one for the broadcast from row 4). With 4 they do not fit, so
// the tree sends hop by hop, relayed in software: two colors towards row
// 0, two away from it.
// WIDE: mesh.gemv {{.*}}colors = array<i32: 0, 2, 3, 4>}
// WIDE-NOT: relayed
// RELAY: mesh.gemv {{.*}}{allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 0, 2>, relayed}

// Level 1 (stride 3): rows 1, 2 forward row 3's partial, rows 4, 5 row 6's.
// CORE: ["gemv0", "gemv", "ktree2-relayed"]
// CORE-DAG: core.channel @hop_in_y
// CORE-DAG: core.channel @hop_out_y
// CORE: core.when "ly % 3 != 0 && (ly / 3 + 1) % 3 != 0 && (ly / 3 + 1) * 3 < 9" {
// CORE-NEXT: core.recv @gemv0_partial on @hop_in_y
// CORE-NEXT: core.send @gemv0_partial on @hop_in_y
// CORE: core.when "ly != 0" {
// CORE-NEXT: core.recv {{.*}} on @hop_out_y
// CORE-NEXT: core.when "ly + 1 < 9" {
// CORE-NEXT: core.send {{.*}} on @hop_out_y

// Even hop by hop the tree needs 4 colors at a core.
// TIGHT: error: {{.*}}mesh-allocate-routes: mesh.gemv needs 4 routing colors at core (x={{[0-9]+}}, y={{[0-9]+}}) but target 'wse2 (changed by {{.*}}.json)' has 3
func.func @main(%x: tensor<1x20xf32>, %w: tensor<20x6xf32>) -> tensor<1x6xf32> {
  %y = tfm.matmul %x, %w : (tensor<1x20xf32>, tensor<20x6xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}
