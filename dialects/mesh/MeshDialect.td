//===- MeshDialect.td - Distributed tensors on a core grid -*- tablegen -*-===//
#ifndef WAFER_MESH_DIALECT
#define WAFER_MESH_DIALECT

include "mlir/IR/OpBase.td"

def Mesh_Dialect : Dialect {
  let name = "mesh";
  let summary = "Distributed tensors on a 2D core grid and the algorithms that move them";
  let description = [{
    Tensors carry a `#mesh.layout` encoding that says how each dimension is
    split over the grid. Ops are distributed algorithms with an explicit
    algorithm choice (`mesh.gemm {algorithm = meshgemm}`,
    `mesh.gemv {allreduce = #mesh.allreduce<ktree, k = 2>}`), so baselines and WaferLLM's
    methods live side by side.

    A module compiled for the mesh carries two attributes: `mesh.grid`
    (the core grid, rows x columns) and `mesh.target` (the hardware
    description). This dialect is unrelated to upstream MLIR's `mesh`
    dialect (device-mesh sharding), which wafer's tools do not register.
  }];
  let cppNamespace = "::wafer::mesh";
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr llvm::StringLiteral kGridAttrName = "mesh.grid";
    static constexpr llvm::StringLiteral kTargetAttrName = "mesh.target";
  }];
}

class Mesh_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mesh_Dialect, mnemonic, traits>;

#endif // WAFER_MESH_DIALECT
