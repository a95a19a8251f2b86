// RUN: wafer-opt %s | FileCheck %s
// RUN: wafer-opt %s | wafer-opt | FileCheck %s

// CHECK: module attributes {mesh.grid = #mesh.grid<5x7>, mesh.target = #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994, clock_hz = 1.100000e+09, sram_bytes = 49152, routes_per_core = 24, hop_cycles = 1, ramp_cycles = 2, relay_cycles = 5, send_issue_cycles = 1, link_words_per_cycle = 1, macs_per_cycle.f32 = 1.000000e+00, macs_per_cycle.f16 = 4.000000e+00, macs_per_cycle.f16_f32 = 2.000000e+00, memory_cycles_per_op = 0.000000e+00>}
module attributes {mesh.grid = #mesh.grid<5x7>,
    mesh.target = #mesh.target<base = "wse2">} {
  func.func @main(%x: tensor<37x50xf32>, %v: tensor<1x50xf32>) -> (tensor<37x29xf32>, tensor<1x29xf32>) {
    %w = tfm.weight "w" from "m.onnx" : tensor<29x50xf32>
    // CHECK: mesh.distribute %{{.*}} : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5 balanced, x:35], interleave>>
    %balanced = mesh.distribute %x : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5 balanced, x:35], interleave>>
    // CHECK: mesh.distribute %{{.*}} : tensor<1x50xf32> -> tensor<1x50xf32, #mesh.layout<[*, x:14 balanced in 2]>>
    %parts = mesh.distribute %v : tensor<1x50xf32> -> tensor<1x50xf32, #mesh.layout<[*, x:14 balanced in 2]>>
    // CHECK: mesh.distribute %{{.*}} : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5, x:35], interleave>>
    %a = mesh.distribute %x : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5, x:35], interleave>>
    // CHECK: mesh.distribute %{{.*}} {permutation = array<i64: 1, 0>}
    %b = mesh.distribute %w {permutation = array<i64: 1, 0>} : tensor<29x50xf32> -> tensor<50x29xf32, #mesh.layout<[y:35, x:7], interleave>>
    // CHECK: mesh.gemm %{{.*}}, %{{.*}} {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 0, 4>}
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>, colors = array<i32: 0, 4>}
        : tensor<37x50xf32, #mesh.layout<[y:5, x:35], interleave>>, tensor<50x29xf32, #mesh.layout<[y:35, x:7], interleave>>
       -> tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>
    // CHECK: mesh.map <add> %{{.*}}, %{{.*}} : tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>
    %d = mesh.map <add> %c, %c : tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>
    // CHECK: mesh.collect %{{.*}} : tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>> -> tensor<37x29xf32>
    %y = mesh.collect %d : tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>> -> tensor<37x29xf32>
    %vx = mesh.distribute %v : tensor<1x50xf32> -> tensor<1x50xf32, #mesh.layout<[*, y:5]>>
    %wt = mesh.distribute %w {permutation = array<i64: 1, 0>} : tensor<29x50xf32> -> tensor<50x29xf32, #mesh.layout<[y:5, x:7]>>
    // CHECK: mesh.gemv %{{.*}}, %{{.*}} {allreduce = #mesh.allreduce<ktree, k = 2>}
    %g = mesh.gemv %vx, %wt {allreduce = #mesh.allreduce<ktree, k = 2>}
        : tensor<1x50xf32, #mesh.layout<[*, y:5]>>, tensor<50x29xf32, #mesh.layout<[y:5, x:7]>>
       -> tensor<1x29xf32, #mesh.layout<[*, x:7]>>
    %z = mesh.collect %g : tensor<1x29xf32, #mesh.layout<[*, x:7]>> -> tensor<1x29xf32>
    // The transposed orientation takes the x-split result directly.
    %w2 = mesh.distribute %w : tensor<29x50xf32> -> tensor<29x50xf32, #mesh.layout<[x:7, y:5]>>
    // CHECK: mesh.gemv {{.*}} {allreduce = #mesh.allreduce<ring>} : tensor<1x29xf32, #mesh.layout<[*, x:7]>>, tensor<29x50xf32, #mesh.layout<[x:7, y:5]>> -> tensor<1x50xf32, #mesh.layout<[*, y:5]>>
    %g2 = mesh.gemv %g, %w2 {allreduce = #mesh.allreduce<ring>}
        : tensor<1x29xf32, #mesh.layout<[*, x:7]>>, tensor<29x50xf32, #mesh.layout<[x:7, y:5]>>
       -> tensor<1x50xf32, #mesh.layout<[*, y:5]>>
    return %y, %z : tensor<37x29xf32>, tensor<1x29xf32>
  }
}
