//===- Passes.td - Conversions between levels --------------*- tablegen -*-===//
#ifndef WAFER_CONVERSION_PASSES
#define WAFER_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTfmToMesh : Pass<"convert-tfm-to-mesh", "mlir::ModuleOp"> {
  let summary = "Plans a tfm graph onto a core grid";
  let description = [{
    Sets `mesh.grid` and `mesh.target` on the module and turns every tfm
    compute op of `@main` into a distributed algorithm: a matmul with more
    than one row becomes `mesh.gemm` with the `gemm` algorithm (default
    meshgemm; `auto`: the algorithm whose plan's ops' estimates add up to
    fewest cycles among those whose routes and buffers fit, each candidate
    placed, given its K and routed as mesh-place-interleave,
    mesh-choose-ktree and mesh-allocate-routes will), a matmul of a single
    row becomes `mesh.gemv` with the `allreduce` algorithm (default a K-tree with K = `ktree-k`; 0 leaves K
    open for `mesh-choose-ktree`), add and
    mul become `mesh.map`. With `dtype=f16` every distributed tensor is f16
    (inputs are converted when placed, outputs read back as f32). Host tensors (inputs, weights, constants and
    transposes of them) enter through `mesh.distribute`; graph outputs
    leave through `mesh.collect`. A range of a weight (a fused
    projection's part, `tfm.slice`) is read from the whole stored weight
    by the distribute's index map; a slice that keeps everything is
    dropped, and kept positions of a computed tensor (Hugging Face's
    logits_to_keep) move past the projections and norms after them to the
    return, whose collect reads them back by its index map. On a grid wider than the KV heads,
    decode attention splits the heads into lanes (pairs of dimensions
    along x); prefill attention does too or keeps whole heads
    (`prefill-heads`; by default the plan whose ops' cycle estimates add
    up to less, among those whose routes and buffers fit).

    Before:
    ```mlir
    func.func @main(%x: tensor<37x50xf32>) -> tensor<37x29xf32> {
      %w = tfm.weight "w" from "m.onnx" : tensor<50x29xf32>
      %y = tfm.matmul %x, %w : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
      return %y : tensor<37x29xf32>
    }
    ```
    After (grid=5x7):
    ```mlir
    module attributes {mesh.grid = #mesh.grid<5x7>, mesh.target = #mesh.target<...>} {
      func.func @main(%x: tensor<37x50xf32>) -> tensor<37x29xf32> {
        %w = tfm.weight "w" from "m.onnx" : tensor<50x29xf32>
        %a = mesh.distribute %x : tensor<37x50xf32> -> tensor<37x50xf32, #mesh.layout<[y:5, x:35]>>
        %b = mesh.distribute %w : tensor<50x29xf32> -> tensor<50x29xf32, #mesh.layout<[y:35, x:7]>>
        %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>} : ...
        %y = mesh.collect %c : tensor<37x29xf32, #mesh.layout<[y:5, x:7]>> -> tensor<37x29xf32>
        return %y : tensor<37x29xf32>
      }
    }
    ```
  }];
  let options = [
    Option<"grid", "grid", "std::string", /*default=*/"\"\"",
           "Core grid as HxW (rows x columns)">,
    Option<"target", "target", "std::string", /*default=*/"\"wse2\"",
           "Target preset (wse2, wse3) or target JSON file">,
    Option<"gemm", "gemm", "std::string", /*default=*/"\"meshgemm\"",
           "GEMM algorithm: meshgemm (interleaved cyclic shifts, the "
           "paper's), cannon (the shifts on the identity placement), summa "
           "(row and column broadcasts), allgather (ring allgather of the "
           "operands, then local products), or auto: the one whose plan's "
           "estimates add up to fewest cycles among those whose routes and "
           "buffers fit">,
    Option<"allreduce", "allreduce", "::wafer::mesh::AllreduceAlgorithm",
           /*default=*/"::wafer::mesh::AllreduceAlgorithm::ktree",
           "GEMV allreduce", "::wafer::allreduceAlgorithmValues()">,
    Option<"ktreeK", "ktree-k", "int64_t", /*default=*/"2",
           "K of the K-tree allreduces; 0: left open, one K for all chosen by "
           "mesh-choose-ktree">,
    Option<"dtype", "dtype", "::wafer::GridDType",
           /*default=*/"::wafer::GridDType::f32",
           "Element type on the grid (host I/O stays f32)",
           "::wafer::gridDTypeValues()">,
    Option<"prefillHeads", "prefill-heads", "std::string",
           /*default=*/"\"auto\"",
           "Prefill attention on a grid wider than the KV heads: 'lanes' "
           "(heads split into pairs of dimensions along x), 'whole' (whole "
           "KV heads along x), or 'auto': the plan whose ops' estimates "
           "add up to fewer cycles among those whose routes and buffers "
           "fit">,
    Option<"interleave", "interleave", "bool", /*default=*/"false",
           "The plan will be placed on INTERLEAVE whatever its algorithms "
           "(mesh-place-interleave's always): gemm=auto then keeps to "
           "meshgemm, the one algorithm defined on it, and prices "
           "candidates so placed">,
  ];
  let dependentDialects = ["::wafer::mesh::MeshDialect"];
}

def ConvertMeshToCore : Pass<"convert-mesh-to-core", "mlir::ModuleOp"> {
  let summary = "Lowers distributed algorithms to per-core role programs";
  let description = [{
    Replaces `@main` with a `core.program`: one SRAM buffer per distributed
    tensor and per scratch tile, routing channels built from each op's
    allocated colors, host bindings for distribute and collect, and a role
    program whose size does not depend on the grid. MeshGEMM becomes
    alignment loops and a compute-shift loop over the logical rings;
    MeshGEMV becomes a local GEMV, one chain reduction per K-tree level and
    a broadcast down each column (along each row in the transposed
    orientation); the baselines (Cannon, SUMMA, allgather, pipeline, ring)
    and relayed trees lower to their own loops.

    Before:
    ```mlir
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>,
                           colors = array<i32: 0, 4>} : ...
    ```
    After:
    ```mlir
    core.program {grid = #mesh.grid<3x3>, ...} {
      core.buffer @v0[16] : f32 at 0
      core.channel @ring_x { core.route color 0 at ... from ramp to [east] ... }
      core.role @all at #core.cores<x = 0:2:1, y = 0:2:1> {
        core.zero @v2
        core.repeat "(lx < ly) * lx + (ly <= lx) * ly" {
          core.send @v0 on @ring_x ...
        }
        ...
        core.mark 0
      }
    }
    ```
  }];
  let dependentDialects = ["::wafer::core::CoreDialect"];
}

#endif // WAFER_CONVERSION_PASSES
