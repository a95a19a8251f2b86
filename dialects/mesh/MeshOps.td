//===- MeshOps.td - Distributed algorithms -----------------*- tablegen -*-===//
#ifndef WAFER_MESH_OPS
#define WAFER_MESH_OPS

include "MeshAttrs.td"
include "MeshInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Mesh_HostTensor : RankedTensorOf<[F32]>;
def Mesh_DistTensor : RankedTensorOf<[F32, F16]>;

def Mesh_DistributeOp : Mesh_Op<"distribute", [Pure]> {
  let summary = "Places a host tensor on the grid in a layout";
  let description = [{
    Host I/O: the host writes the tensor into every core's SRAM before the
    program starts, converting it to the result's element type (f32 or
    f16). The host-side view may permute the source's dimensions
    (`permutation`, how ONNX Gemm's transA/transB arrive) and broadcast it
    to the result shape with numpy's rules, both at no on-chip cost. With
    `index_dim` and `index_map` (a source of the result's rank) result
    coordinate j along that dimension takes source coordinate
    `index_map[j]` (-1: zero): how a past KV cache's positions are placed
    among the cache's slots. A `tfm.embed` of a weight by a graph input is
    placed as the rows the token ids select. `sram_offset` fixes the
    byte offset of the result's buffer on every core (otherwise the memory
    plan chooses it): where an earlier program on the same cores left the
    value (a prefill's KV hand-off), so nothing moves. With `view` the
    permutation, broadcast and index map produce a tensor of that shape
    and the result is its row-major reshape: decode attention's lanes
    merge a KV head with its (permuted) head dimension this way.

    ```mlir
    %d = mesh.distribute %w {permutation = array<i64: 1, 0>}
        : tensor<29x50xf32> -> tensor<50x29xf32, #mesh.layout<[y:35, x:7], interleave>>
    ```
  }];
  let arguments = (ins Mesh_HostTensor:$source,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       OptionalAttr<I64Attr>:$index_dim,
                       OptionalAttr<DenseI64ArrayAttr>:$index_map,
                       OptionalAttr<I64Attr>:$sram_offset,
                       OptionalAttr<DenseI64ArrayAttr>:$view);
  let results = (outs Mesh_DistTensor:$result);
  let builders = [OpBuilder<(ins "mlir::Type":$type, "mlir::Value":$source), [{
    build($_builder, $_state, type, source, nullptr, nullptr, nullptr,
          nullptr, nullptr);
  }]>];
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Mesh_CollectOp : Mesh_Op<"collect", [Pure]> {
  let summary = "Reads a distributed tensor back to the host";
  let description = [{
    Host I/O: each element is read from the core holding it (the replica at
    logical position 0 of a replicated axis), as f32. The host then reads
    it as `view` when given (a row-major reshape), gathers along
    `index_dim` (result coordinate i reads coordinate
    `index_map[i]`: a KV cache's positions out of its slots), permutes the
    dimensions (`permutation`) and gives the result its shape (the same
    elements in order: unit dimensions may differ).

    ```mlir
    %h = mesh.collect %c : tensor<37x29xf32, #mesh.layout<[y:5, x:7]>> -> tensor<37x29xf32>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$source,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       OptionalAttr<I64Attr>:$index_dim,
                       OptionalAttr<DenseI64ArrayAttr>:$index_map,
                       OptionalAttr<DenseI64ArrayAttr>:$view);
  let results = (outs Mesh_HostTensor:$result);
  let builders = [OpBuilder<(ins "mlir::Type":$type, "mlir::Value":$source), [{
    build($_builder, $_state, type, source, nullptr, nullptr, nullptr,
          nullptr);
  }]>];
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Mesh_GemmOp : Mesh_Op<"gemm", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers"]>]> {
  let summary = "Distributed C[M, N] = A[M, K] x B[K, N]";
  let description = [{
    `meshgemm` is the paper's MeshGEMM (section 5): on an H x W grid with
    N = lcm(H, W), A is `[y:H, x:N]`, B is `[y:N, x:W]` and C is
    `[y:H, x:W]`. Each core aligns its operands (row r shifts A by r,
    column c shifts B by c) and runs N compute-shift steps, A shifting
    along the x ring and B along the y ring; with interleaved placement
    every transfer is at most 2 hops.

    The paper's baselines (section 5.2) take the same operands:
    - `cannon`: the same cyclic shifting without INTERLEAVE (the module's
      placement is the identity), so the wrap-around message crosses the
      whole row or column in every step.
    - `summa`: in step s (of N) the cores holding block column s of A
      broadcast it along their rows and those holding block row s of B
      along their columns, hop by hop, every core receiving and forwarding
      in software (paying the relay cycles), then every core multiplies
      the received tiles.
    - `allgather`: every core first gathers its whole row panel of A and
      column panel of B by W - 1 (H - 1) ring shifts, each received in
      software, keeping every block (|A|/H + |B|/W values per core), then
      multiplies them without further communication.

    `colors` holds the first routing color of each message-path family
    (meshgemm, cannon: x ring, y ring; summa: east, west, south, north)
    once `mesh-allocate-routes` ran.

    ```mlir
    %c = mesh.gemm %a, %b {algorithm = #mesh.gemm_algorithm<meshgemm>}
        : tensor<37x50xf32, #mesh.layout<[y:5, x:35], interleave>>,
          tensor<50x29xf32, #mesh.layout<[y:35, x:7], interleave>>
       -> tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$lhs, Mesh_DistTensor:$rhs,
                       Mesh_GemmAlgorithmAttr:$algorithm,
                       OptionalAttr<DenseI32ArrayAttr>:$colors);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The blocks K is cut into on an h x w grid: lcm(h, w), the ring
    /// length of both block-cyclic operands.
    static int64_t kBlocks(int64_t h, int64_t w);
    /// The local tiles every core multiplies on `grid`.
    ::wafer::cost::GemmTiling getTiling(GridAttr grid);
  }];
}

def Mesh_GemvOp : Mesh_Op<"gemv", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers",
                               "getAllreduceUse"]>]> {
  let summary = "Distributed y[1, N] = x[1, K] x W[K, N] with an allreduce";
  let description = [{
    MeshGEMV (paper section 6): x is `[*, y:H]` (split along y, replicated
    along x), W is `[y:H, x:W]`, y is `[*, x:W]`. The transposed
    orientation takes the result of such a GEMV as its input without a
    relayout: x is `[*, x:W]`, W is `[x:W, y:H]` (the weight placed so),
    y is `[*, y:H]`, and the partial sums are reduced along rows instead of
    columns. Each core multiplies its tiles; the partial sums of a column
    (row) are combined with the `allreduce`
    (`#mesh.allreduce`: K-tree, or the pipeline and ring baselines).
    `colors` holds the first routing color of each message-path family
    (one per tree level and the broadcast; ring: the y ring, or the x ring
    in the transposed orientation) once
    `mesh-allocate-routes` ran. `relayed` (set by `mesh-allocate-routes`
    when the tree's colors do not fit the target's routes) sends every
    message of the tree and the broadcast hop by hop between consecutive
    ring positions, each intermediate core receiving and forwarding it in
    software (paying the relay cycles); all levels then share two colors
    per direction (three under INTERLEAVE). Colors: the hop towards
    position 0, then away from it.

    ```mlir
    %y = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>}
        : tensor<1x300xf32, #mesh.layout<[*, y:6]>>,
          tensor<300x200xf32, #mesh.layout<[y:6, x:6]>>
       -> tensor<1x200xf32, #mesh.layout<[*, x:6]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$lhs, Mesh_DistTensor:$rhs,
                       Mesh_AllreduceAttr:$allreduce,
                       OptionalAttr<DenseI32ArrayAttr>:$colors,
                       UnitAttr:$relayed);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for the transposed orientation: K split along x, partial sums
    /// reduced along each row.
    bool reducesAlongX();
  }];
}

def Mesh_MapOp : Mesh_Op<"map", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>]> {
  let summary = "Element-wise function of tensors in the same layout";
  let description = [{
    Purely local: every core applies the function to its tiles.

    ```mlir
    %z = mesh.map add %a, %b : tensor<37x29xf32, #mesh.layout<[y:5, x:7]>>
    ```
  }];
  let arguments = (ins Mesh_MapKindAttr:$kind, Mesh_DistTensor:$lhs,
                       Mesh_DistTensor:$rhs);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = "$kind $lhs `,` $rhs attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mesh_RelayoutOp : Mesh_Op<"relayout", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers"]>]> {
  let summary = "Re-blocks one split dimension along its grid axis";
  let description = [{
    The source and result layouts differ only in the block count of one
    dimension split along x (or y): e.g. `[y:H, x:W]` to the block-cyclic
    `[y:H, x:lcm(H, W)]` MeshGEMM's lhs needs on a non-square grid. Every
    core passes its tile around the axis's ring (E - 1 ring shifts, each
    at most two hops under INTERLEAVE) and copies the columns of its new
    blocks out of every tile that passes. Dimensions other than the
    re-blocked one keep one block per core (no slots).

    ```mlir
    %r = mesh.relayout %x : tensor<8x64xf32, #mesh.layout<[y:2, x:3]>>
                         -> tensor<8x64xf32, #mesh.layout<[y:2, x:6]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$source,
                       OptionalAttr<DenseI32ArrayAttr>:$colors);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dimension whose block count changes.
    int64_t getDimension();
    /// True when that dimension is split along x.
    bool alongX();
    /// The sizes of the Regrid kernel that keeps a core's columns of one
    /// ring position's tile (its expressions, expr and expr2, left 0): what
    /// the lowering emits and the cost model prices.
    ::wafer::rt::kernels::RowArgs getRegridArgs(GridAttr grid);
  }];
}

def Mesh_RmsNormOp : Mesh_Op<"rms_norm", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers",
                               "getAllreduceUse"]>]> {
  let summary = "RMS normalisation of the last axis, reduced with an allreduce";
  let description = [{
    `x / sqrt(mean(x^2, -1) + epsilon) * weight`. The last dimension of x
    is split along one grid axis (x: `[*, y:H]` in decode, `[y:H, x:W]` in
    prefill); the weight `[E]` is split the same way. Every core sums the
    squares of its part of each row, the sums are combined along that axis
    with the `allreduce` (as mesh.gemv's; `colors`, `relayed` likewise), and
    every core scales its part.

    ```mlir
    %n = mesh.rms_norm %x, %w {epsilon = 1.0e-05 : f64,
                               allreduce = #mesh.allreduce<ktree, k = 2>}
        : tensor<1x64xf32, #mesh.layout<[*, y:4]>>,
          tensor<64xf32, #mesh.layout<[y:4]>> -> tensor<1x64xf32, #mesh.layout<[*, y:4]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$input, Mesh_DistTensor:$weight,
                       F64Attr:$epsilon, Mesh_AllreduceAttr:$allreduce,
                       OptionalAttr<DenseI32ArrayAttr>:$colors,
                       UnitAttr:$relayed);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the normalised axis is split along x.
    bool reducesAlongX();
  }];
}

def Mesh_RopeOp : Mesh_Op<"rope", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>]> {
  let summary = "Rotary position embedding, rotate-half, head by head";
  let description = [{
    Local: x is `[rows, ..., D]` with the head dimension D whole on every
    core (heads are split, never D); cos and sin are `[rows, D]` in the
    layout of x's rows. Each core rotates every head of its tile.
    With `interleaved` the pairs are adjacent elements `(x[2i], x[2i+1])`
    (Meta's convention) and cos and sin have x's type, one factor per
    element: the core runs the rotate-half kernel on rows of two, so no
    permutation is needed on chip or at the host boundary.

    ```mlir
    %r = mesh.rope %q, %cos, %sin
        : tensor<1x2x32xf32, #mesh.layout<[*, x:4, *]>>,
          tensor<1x16xf32, #mesh.layout<[*, *]>>, tensor<1x16xf32, #mesh.layout<[*, *]>>
       -> tensor<1x2x32xf32, #mesh.layout<[*, x:4, *]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$input, Mesh_DistTensor:$cos,
                       Mesh_DistTensor:$sin, I64Attr:$head_dim,
                       UnitAttr:$interleaved);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `,` type($sin) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mesh_KvAppendOp : Mesh_Op<"kv_append", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers"]>]> {
  let summary = "Stores the new token's key or value in a KV cache";
  let description = [{
    `cache` is `[1, KVH, S, D]`: S = H x C slots, the KV heads split along
    x and the slots along y (`[*, x:W, y:H, *]`, C slots per row of
    cores). It holds the `position` past tokens balanced over the rows
    (row r holds floor(position / H) tokens, one more in the bottom
    position % H rows; positions contiguous, row 0 the oldest, each row's
    tokens in its first slots). `new_entry` is `[1, KVH, D]` (`[*, x:W, *]`,
    replicated along y). The result is the cache, updated in place:
    - `concat` (the baseline, paper Figure 5 (1)-(2)): the bottom row
      appends the token; every later token lands there too.
    - `shift` (paper section 4.3): the token enters the bottom row and the
      rows that hold one token more than the row above pass their oldest
      token up (one hop, in parallel), so the rows stay balanced.
    `position` is the past this step is planned for (where the host places
    it); the lowering moves tokens by the run-time position `t` of the
    core program (default `position`), so the same program serves later
    steps while the cache has slots for them.

    ```mlir
    %k = mesh.kv_append %past, %new {position = 8 : i64,
                                     policy = #mesh.kv_policy<shift>}
        : tensor<1x2x16x16xf32, #mesh.layout<[*, x:4, y:4, *]>>,
          tensor<1x2x16xf32, #mesh.layout<[*, x:4, *]>>
       -> tensor<1x2x16x16xf32, #mesh.layout<[*, x:4, y:4, *]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$cache, Mesh_DistTensor:$new_entry,
                       I64Attr:$position, Mesh_KvPolicyAttr:$policy,
                       OptionalAttr<DenseI32ArrayAttr>:$colors);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $cache `,` $new_entry attr-dict `:` type($cache) `,` type($new_entry) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mesh_KvHandoffOp : Mesh_Op<"kv_handoff", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers"]>]> {
  let summary = "Moves a prefill's keys or values into a decode KV cache on the NoC";
  let description = [{
    The prefill/decode transition of paper section 4 ("we reshuffle KV
    cache ... through the fast NoC"), for a decode program on the same
    cores. `source` is the prefill's `[S, KVH, D]` (positions along y, KV
    heads along x: `[y:H, x:W, *]`); the result is a decode cache
    `[1, KVH, H x C, D]` (`[*, x:W, y:H, *]`, C slots per row of cores)
    holding the S positions where mesh.kv_append expects a past of S
    (balanced over the rows, row 0 the oldest, each row's tokens in its
    first slots; the other slots zero). Heads stay in their column; every
    core passes its tile once around the ring of its column (H - 1 ring
    shifts, each at most two hops under INTERLEAVE) and copies the
    positions its row keeps out of every tile that passes.

    ```mlir
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>}
        : tensor<5x2x16xf32, #mesh.layout<[y:4, x:4, *]>>
       -> tensor<1x2x12x16xf32, #mesh.layout<[*, x:4, y:4, *]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$source, Mesh_KvPolicyAttr:$policy,
                       OptionalAttr<DenseI32ArrayAttr>:$colors);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Mesh_AttentionOp : Mesh_Op<"attention", [Pure,
    DeclareOpInterfaceMethods<Mesh_CostedOpInterface, ["advanceClock"]>,
    DeclareOpInterfaceMethods<Mesh_CommunicatingOpInterface,
                              ["getChannelFamilies", "getScratchBuffers",
                               "getAllreduceUse"]>]> {
  let summary = "Causal attention with heads grouped by KV head";
  let description = [{
    Heads are grouped by KV head (MHA, GQA and MQA alike, paper section
    4.4); G query heads share each of the KVH KV heads.

    Decode (one query, sections 4.2, 4.3): q is `[1, KVH, G * D]` with the
    KV heads split along x and replicated along y; the caches k and v are
    `[1, KVH, L, D]` with the KV heads along x and the positions along y.
    Every core scores its keys against its query heads (positions past
    `length` are masked), the softmax's max and sum and the weighted values
    are combined along y with the `allreduce` (`colors`, `relayed` as in
    mesh.gemv), and the result is q's layout.

    Decode with `lanes_per_head = D / 2` (grids wider than KVH): the heads
    are split into **lanes**, pairs of one KV head's dimensions, so every
    column holds some (section 4.2's split of Q x K^T along X). q is
    `[1, KVH * D / 2, G * 2]` and the caches `[1, KVH * D / 2, L, 2]`,
    lanes along x. Each core scores its keys over its lanes
    (`lane_scores`), the partial scores are summed along x, the softmax
    runs along y as above, and each core weighs the values of its lanes
    (`lane_values`), summed along y. With a K-tree or pipeline allreduce
    that is not relayed, each run of columns holding whole KV heads sums
    the scores of its own query heads apart (the paper's ReduceAdd into a
    distributed score matrix; the last run may be shorter); with the ring
    or a relayed tree the whole row sums those of all H = KVH x G query
    heads.

    Prefill (L queries, section 4.1): q is `[L, KVH, G * D]`, k and v are
    `[L, KVH, D]`, all `[y:H, x:W, *]`. Q x K^T is a GEMM-T without a
    transpose: the key and value tiles shift around the y ring (H steps,
    at most two hops each under INTERLEAVE) while every core scores its
    queries against the keys passing by, with an online softmax and the
    causal mask; no allreduce (`colors`: the y ring).

    Prefill with `lanes_per_head = D / 2`: q is `[L, KVH * D / 2, G * 2]`
    and k, v `[L, KVH * D / 2, 2]`, lanes along x. Each step, every core
    scores its queries against the passing keys over its lanes
    (`lane_flash_scores`), the `allreduce` sums the partial scores along
    x (per run of columns holding whole KV heads, as for decode), every
    core updates the online softmax (`flash_stats`) and weighs its value
    lanes (`lane_flash_values`); `colors`: the y ring and the allreduce.

    ```mlir
    %o = mesh.attention %q, %k, %v {scale = 0.25 : f64, length = 9 : i64,
                                    allreduce = #mesh.allreduce<ktree, k = 2>}
        : tensor<1x2x32xf32, #mesh.layout<[*, x:4, *]>>,
          tensor<1x2x9x16xf32, #mesh.layout<[*, x:4, y:4, *]>>,
          tensor<1x2x9x16xf32, #mesh.layout<[*, x:4, y:4, *]>>
       -> tensor<1x2x32xf32, #mesh.layout<[*, x:4, *]>>
    ```
  }];
  let arguments = (ins Mesh_DistTensor:$query, Mesh_DistTensor:$key,
                       Mesh_DistTensor:$value, F64Attr:$scale,
                       I64Attr:$length, OptionalAttr<Mesh_AllreduceAttr>:$allreduce,
                       OptionalAttr<DenseI32ArrayAttr>:$colors,
                       UnitAttr:$relayed,
                       OptionalAttr<I64Attr>:$lanes_per_head);
  let results = (outs Mesh_DistTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for the decode form (one query against KV caches).
    bool isDecode();
    /// The scores a core keeps per key position and query: its query
    /// heads; with lanes, those of the KV heads its lane segment holds
    /// (getLaneSegments), or every query head.
    int64_t scoresPerKey(GridAttr grid);
    /// With lanes: the runs of columns that hold whole KV heads' lanes,
    /// whose partial scores are summed apart; nullopt when they are summed
    /// along the whole row (a ring or relayed allreduce, or one segment
    /// that spans the row).
    std::optional<AxisSegments> getLaneSegments(GridAttr grid);
  }];
}

#endif // WAFER_MESH_OPS
