// RUN: not wafer-opt %s --split-input-file --mesh-place-interleave 2>&1 | FileCheck %s
// RUN: not wafer-opt %s --split-input-file --mesh-place-interleave="always=true" 2>&1 | FileCheck %s --check-prefix=ALWAYS

// MeshGEMM needs INTERLEAVE, Cannon the identity placement: one module
// cannot have both.
// CHECK: error: mesh-place-interleave: 'cannon' needs the identity placement but a meshgemm in the same module needs INTERLEAVE
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @main(%a: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %b: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %c: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %d: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    %x = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    %y = mesh.gemm %c, %d {algorithm = #mesh.gemm_algorithm<cannon>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}

// -----

// ALWAYS: error: mesh-place-interleave: 'summa' needs the identity placement but the module is placed on INTERLEAVE (always)
module attributes {mesh.grid = #mesh.grid<2x2>} {
  func.func @main(%c: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, %d: tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>) {
    %y = mesh.gemm %c, %d {algorithm = #mesh.gemm_algorithm<summa>} : tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>, tensor<4x4xf32, #mesh.layout<[y:2, x:2]>> -> tensor<4x4xf32, #mesh.layout<[y:2, x:2]>>
    return
  }
}
