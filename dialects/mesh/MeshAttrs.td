//===- MeshAttrs.td - Grid, target and layout attributes ---*- tablegen -*-===//
#ifndef WAFER_MESH_ATTRS
#define WAFER_MESH_ATTRS

include "MeshDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Mesh_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Mesh_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Mesh_GridAttr : Mesh_Attr<"Grid", "grid"> {
  let summary = "A grid of cores: height (rows, y) x width (columns, x)";
  let description = [{
    ```mlir
    #mesh.grid<5x7>   // 5 rows, 7 columns
    ```
  }];
  let parameters = (ins "int64_t":$height, "int64_t":$width);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Mesh_TargetAttr : Mesh_Attr<"Target", "target"> {
  let summary = "The hardware a module is compiled for (PLMR parameters)";
  let description = [{
    The fields of runtime/include/wafer/Runtime/TargetFields.def, under the
    same names as in a target JSON file (see docs/user-guide.md), each in
    its own type (integers, or reals such as `clock_hz`); passes read
    limits from here instead of hard-coding them. It prints every field;
    it parses either every field or `base = "<preset>"` followed by the
    fields that differ from the preset, and checks every field's range.
    The fabric's defects, when it has any, follow as lists of fabric
    coordinates [row, column]: `dead_cores` (cores whose compute and router
    are unusable) and `dead_links` (the link from a core to its `"east"` or
    `"south"` neighbour); they must lie on the fabric, sorted, once each.

    ```mlir
    #mesh.target<name = "wse2", fabric_width = 750, fabric_height = 994,
                 clock_hz = 1.100000e+09, sram_bytes = 49152, ...>
    #mesh.target<base = "wse2", routes_per_core = 4>
    #mesh.target<base = "wse2", dead_cores = [[0, 2], [3, 1]],
                 dead_links = [[1, 4, "south"]]>
    ```
  }];
  // One value per field, in TargetFields.def's order: i64 or f64. The
  // defects flattened: (y, x) pairs and (y, x, south) triples; null when
  // there are none.
  let parameters = (ins StringRefParameter<>:$name, "::mlir::ArrayAttr":$values,
                        OptionalParameter<"::mlir::DenseI64ArrayAttr">:$deadCores,
                        OptionalParameter<"::mlir::DenseI64ArrayAttr">:$deadLinks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The runtime's description: the name and every field.
    ::wafer::rt::Target getValue() const;
  }];
}

def Mesh_LayoutAttr : Mesh_Attr<"Layout", "layout"> {
  let summary = "How a tensor's dimensions are split over the grid";
  let description = [{
    One entry per tensor dimension: `*` keeps the dimension whole on every
    core; `x:B` / `y:B` splits it into B blocks along the grid's x (column)
    or y (row) axis. B is a multiple of the grid's extent on that axis:
    block b lives at logical position b mod extent, in local slot
    b / extent (B larger than the extent is the block-cyclic form the lcm
    construction of MeshGEMM on non-square grids uses). A grid axis no
    dimension uses holds replicas. `interleave` maps logical positions to
    physical cores with INTERLEAVE (paper Algorithm 1); without it the map
    is the identity.

    Every core holds a tile of ceil(n / B) entries of a split dimension of
    n. By default the blocks are ceil-sized: they fill whole tiles in
    order, the padding on the last blocks (n = 37 in 5 blocks: 8, 8, 8, 8,
    5). `x:B balanced` balances them instead, so that their sizes differ by
    at most one: floor(n / B) entries each, the first n mod B one more,
    each padded at its end (8, 8, 7, 7, 7). `x:B balanced in P` splits
    the dimension into P equal parts first (P divides n and B), each
    balanced over B / P consecutive blocks (n = 16 lanes of 4 KV heads in
    10 blocks, in 2 parts: 2, 2, 2, 1, 1, 2, 2, 2, 1, 1). The planner
    balances the feature dimensions (hidden size, FFN width, vocabulary)
    and, in parts of whole KV heads, attention's lanes where they do not
    divide the columns and the parts narrow the lane segments; positions,
    KV slots and heads stay ceil-sized, whose global indices the
    attention kernels compute.

    In the paper's notation, prefill activations `L_y E_x` on a 5x7 grid are
    `#mesh.layout<[y:5, x:7]>`; a decode vector `E_y L^x` of shape [1, E] is
    `#mesh.layout<[*, y:5]>` (replicated along x).

    ```mlir
    tensor<37x50xf32, #mesh.layout<[y:5, x:35], interleave>>
    tensor<1x37xf32, #mesh.layout<[*, y:5 balanced]>>
    tensor<1x16x2xf32, #mesh.layout<[*, x:10 balanced in 2, *]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$axes,
                        ArrayRefParameter<"int64_t">:$blocks,
                        "bool":$interleave,
                        OptionalArrayRefParameter<"bool">:$balanced,
                        OptionalArrayRefParameter<"int64_t">:$parts);
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$axes,
                     "::llvm::ArrayRef<int64_t>":$blocks,
                     "bool":$interleave,
                     CArg<"::llvm::ArrayRef<bool>", "{}">:$balanced,
                     CArg<"::llvm::ArrayRef<int64_t>", "{}">:$parts), [{
      // One spelling: no flags when no dimension is balanced, no part
      // counts when every dimension is one part.
      if (::llvm::none_of(balanced, [](bool b) { return b; }))
        balanced = {};
      if (::llvm::all_of(parts, [](int64_t n) { return n == 1; }))
        parts = {};
      return $_get($_ctxt, axes, blocks, interleave, balanced, parts);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether dimension d's blocks are balanced (see the description).
    bool isBalanced(size_t d) const {
      return d < getBalanced().size() && getBalanced()[d];
    }
    /// The parts dimension d's balanced blocks are balanced in.
    int64_t getPartCount(size_t d) const {
      return d < getParts().size() ? getParts()[d] : 1;
    }
    /// Axis codes of `axes`.
    static constexpr int64_t kNone = 0, kX = 1, kY = 2;
    /// The runtime's form of this layout (without the interleave flag).
    std::vector<::wafer::rt::LayoutDim> toRuntime() const;
    /// The same layout with dimension d's blocks balanced (in `parts`
    /// parts) or ceil-sized.
    LayoutAttr withBalanced(size_t d, bool balanced, int64_t parts = 1) const;
    /// The same layout with `interleave` set to the given value.
    LayoutAttr withInterleave(bool interleave) const;
  }];
}

def Mesh_AllreduceAlgorithm : I32EnumAttr<"AllreduceAlgorithm",
    "allreduce algorithm of a distributed GEMV", [
      I32EnumAttrCase<"ktree", 0>,
      I32EnumAttrCase<"pipeline", 1>,
      I32EnumAttrCase<"ring", 2>
    ]> {
  let cppNamespace = "::wafer::mesh";
  let genSpecializedAttr = 0;
}

def Mesh_AllreduceAttr : Mesh_Attr<"Allreduce", "allreduce"> {
  let summary = "How a distributed GEMV combines its partial sums";
  let description = [{
    - `ktree, k = K` (paper section 6): K levels of group reductions, groups
      of g = ceil(H^(1/K)) cores reduced as chains, then one broadcast.
      `ktree` alone leaves K open: `mesh-choose-ktree` picks it with the
      cost model once the placement is known, and every later pass
      refuses an open K.
    - `pipeline` (the paper's pipeline allreduce baseline): one chain over
      the whole column towards its first core, then the broadcast; the
      K-tree with K = 1.
    - `ring` (the paper's ring allreduce baseline): H - 1 (transposed
      orientation: W - 1) steps in which
      every core passes the partial sum it last received to the previous
      ring position and adds the one it receives.
    ```mlir
    #mesh.allreduce<ktree, k = 2>
    #mesh.allreduce<ktree>
    #mesh.allreduce<pipeline>
    #mesh.allreduce<ring>
    ```
  }];
  let parameters = (ins
    EnumParameter<Mesh_AllreduceAlgorithm>:$algorithm,
    DefaultValuedParameter<"int64_t", "0">:$k);
  let assemblyFormat = "`<` $algorithm (`,` `k` `=` $k^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The K of the K-tree this allreduce runs (pipeline: 1); 0 for ring.
    int64_t getTreeK() const;
    /// A K-tree whose K mesh-choose-ktree has not chosen yet.
    bool isOpenKtree() const {
      return getAlgorithm() == AllreduceAlgorithm::ktree && getK() == 0;
    }
  }];
}

def Mesh_GemmAlgorithm : I32EnumAttr<"GemmAlgorithm",
    "distributed GEMM algorithm", [
      I32EnumAttrCase<"meshgemm", 0>,
      I32EnumAttrCase<"cannon", 1>,
      I32EnumAttrCase<"summa", 2>,
      I32EnumAttrCase<"allgather", 3>
    ]> {
  let cppNamespace = "::wafer::mesh";
  let genSpecializedAttr = 0;
}
def Mesh_GemmAlgorithmAttr : EnumAttr<Mesh_Dialect, Mesh_GemmAlgorithm,
                                      "gemm_algorithm"> {
  let assemblyFormat = "`<` $value `>`";
}

def Mesh_KvPolicy : I32EnumAttr<"KvPolicy", "where a KV cache stores new tokens", [
      I32EnumAttrCase<"concat", 0>,
      I32EnumAttrCase<"shift", 1>
    ]> {
  let cppNamespace = "::wafer::mesh";
  let genSpecializedAttr = 0;
}
def Mesh_KvPolicyAttr : EnumAttr<Mesh_Dialect, Mesh_KvPolicy, "kv_policy"> {
  let assemblyFormat = "`<` $value `>`";
}

def Mesh_MapKind : I32EnumAttr<"MapKind", "element-wise function", [
      I32EnumAttrCase<"add", 0>,
      I32EnumAttrCase<"mul", 1>,
      I32EnumAttrCase<"swiglu", 2>
    ]> {
  let cppNamespace = "::wafer::mesh";
  let genSpecializedAttr = 0;
}
def Mesh_MapKindAttr : EnumAttr<Mesh_Dialect, Mesh_MapKind, "map_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // WAFER_MESH_ATTRS
