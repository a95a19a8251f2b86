// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// A target's defects round-trip, sorted by fabric row and column.
// CHECK: mesh.target = #mesh.target<name = "wse2", {{.*}}, dead_cores = {{\[\[}}0, 4], [2, 1]], dead_links = {{\[\[}}1, 1, "south"], [1, 3, "east"]]>
module attributes {mesh.target = #mesh.target<base = "wse2", dead_cores = [[2, 1], [0, 4]], dead_links = [[1, 3, "east"], [1, 1, "south"]]>} {
}
