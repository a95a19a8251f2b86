//===- Passes.td - Mesh passes -----------------------------*- tablegen -*-===//
#ifndef WAFER_MESH_PASSES
#define WAFER_MESH_PASSES

include "mlir/Pass/PassBase.td"

def MeshPlaceInterleave : Pass<"mesh-place-interleave", "mlir::ModuleOp"> {
  let summary = "Maps logical ring positions to physical cores with INTERLEAVE";
  let description = [{
    MeshGEMM shifts tiles around rings; laid out in order, each ring's
    wrap-around link spans the whole axis. INTERLEAVE (paper Algorithm 1)
    places consecutive ring positions at most 2 hops apart on every axis of
    3 or more cores. The placement is chosen per module (every distributed
    tensor uses it) so that consumers never need a relayout: INTERLEAVE
    when the module has a meshgemm, the identity otherwise (the cannon and
    summa baselines are defined on it; mixing them with meshgemm is an
    error). `always` places INTERLEAVE without a meshgemm too: a decode
    program that takes over the caches an interleaved prefill left on the
    same cores (mesh-relayout-phases) must read them in its order.

    Before:
    ```mlir
    %c = mesh.gemm %a, %b ... -> tensor<37x29xf32, #mesh.layout<[y:5, x:7]>>
    ```
    After:
    ```mlir
    %c = mesh.gemm %a, %b ... -> tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>
    ```
  }];
  let options = [
    Option<"always", "always", "bool", /*default=*/"false",
           "INTERLEAVE even without a meshgemm">,
  ];
}

def MeshPlanKvCache : Pass<"mesh-plan-kv-cache", "mlir::func::FuncOp"> {
  let summary = "Chooses the KV policy and sizes the KV caches for it";
  let description = [{
    The planner places a decode step's KV caches with room for the step's
    own token and appends it to the bottom row (`concat`, the baseline:
    paper Figure 5). This pass makes the one decision about the caches:
    the policy, and the slots per row for a generation of `capacity`
    tokens (past and new; 0: the step's own) under it. `shift` (paper
    section 4.3) enters the token in the bottom row and every row holding
    one token more than the row above passes its oldest token one row up,
    so the cache stays balanced over all rows and its capacity grows with
    the grid height; `concat` keeps appending to the bottom row. The past
    keeps its slots; the present caches the graph returns are read from
    their new ones.

    Before (4 rows of 4 slots, 9 past tokens held 2, 2, 2, 3):
    ```mlir
    %c = mesh.distribute %past {index_dim = 2 : i64,
                                index_map = array<i64: 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, 8, -1>} ...
    %k = mesh.kv_append %c, %new {position = 9 : i64, policy = #mesh.kv_policy<concat>} ...
    %r = mesh.collect %k {index_dim = 2 : i64,
                          index_map = array<i64: 0, 1, 4, 5, 8, 9, 12, 13, 14, 15>} ...
    ```
    After `policy=shift` (rows hold 2, 2, 3, 3):
    ```mlir
    %k = mesh.kv_append %c, %new {position = 9 : i64, policy = #mesh.kv_policy<shift>} ...
    %r = mesh.collect %k {index_dim = 2 : i64,
                          index_map = array<i64: 0, 1, 4, 5, 8, 9, 10, 12, 13, 14>} ...
    ```
    With `capacity=40` as well, every row gets 10 slots (the caches become
    `tensor<1x2x40x4xf32, ...>`) and the index maps follow.

    `resident=past.0.key=1024,...` fixes where named past caches live
    (`sram_offset` on their mesh.distribute): where a prefill on the same
    cores left them (mesh-relayout-phases), so the decode program reads
    them there and the host does not place them.
  }];
  let options = [
    Option<"policy", "policy", "::wafer::mesh::KvPolicy",
           /*default=*/"::wafer::mesh::KvPolicy::shift",
           "How a step stores its token", "::wafer::kvPolicyValues()">,
    Option<"capacity", "capacity", "int64_t", /*default=*/"0",
           "Tokens (past and new) the caches have room for, so that one "
           "program runs every step of a generation; 0: the step's own">,
    ListOption<"resident", "resident", "std::string",
               "Past caches already in SRAM, as NAME=BYTE_OFFSET">,
  ];
}

def MeshRelayoutPhases : Pass<"mesh-relayout-phases", "mlir::func::FuncOp"> {
  let summary = "Hands a prefill's keys and values to a decode program on the NoC";
  let description = [{
    When the decode program runs on the prefill's cores, the prefill's keys
    and values need not go through the host (paper section 4: "we
    reshuffle KV cache ... through the fast NoC"). On a planned prefill
    function this pass appends, for every `present.*` output (`[S, KVH,
    D]`, positions along y, heads along x), a `mesh.kv_handoff` into the
    decode cache a decode step after S tokens expects (`[1, KVH, H x C,
    D]`, C slots per row for a generation of `capacity` tokens under
    `policy`, as mesh-plan-kv-cache sizes them), and returns it as
    `handoff.past.*` (read back as `[1, KVH, S, D]`). A decode program
    compiled with mesh-plan-kv-cache's `resident` option finds those
    caches where the prefill left them.

    Before (S = 5 on a 4x4 grid):
    ```mlir
    %p = mesh.collect %k {permutation = array<i64: 1, 0, 2>}
        : tensor<5x2x16xf32, #mesh.layout<[y:4, x:4, *]>> -> tensor<1x2x5x16xf32>
    return %logits, %p : ...   // tfm.output_names = ["logits", "present.0.key"]
    ```
    After `capacity=12 policy=shift` (3 slots per row; rows hold 1, 1, 1, 2):
    ```mlir
    %c = mesh.kv_handoff %k {policy = #mesh.kv_policy<shift>}
        : tensor<5x2x16xf32, #mesh.layout<[y:4, x:4, *]>>
       -> tensor<1x2x12x16xf32, #mesh.layout<[*, x:4, y:4, *]>>
    %h = mesh.collect %c {index_dim = 2 : i64,
                          index_map = array<i64: 0, 3, 6, 9, 10>} ...
    return %logits, %p, %h : ...  // ..., "handoff.past.0.key"
    ```
  }];
  let options = [
    Option<"policy", "policy", "::wafer::mesh::KvPolicy",
           /*default=*/"::wafer::mesh::KvPolicy::shift",
           "The decode program's KV policy", "::wafer::kvPolicyValues()">,
    Option<"capacity", "capacity", "int64_t", /*default=*/"0",
           "Tokens the decode caches have room for (mesh-plan-kv-cache's "
           "capacity); 0: the first decode step's">,
  ];
}

def MeshChooseKtree : Pass<"mesh-choose-ktree", "mlir::ModuleOp"> {
  let summary = "Chooses K for every K-tree left to the cost model";
  let description = [{
    `convert-tfm-to-mesh --ktree-k 0` leaves the K of each K-tree allreduce
    open (`#mesh.allreduce<ktree>`). This pass closes it once the placement
    is known, with one K for every open op (of GEMVs, rms_norms and
    attention, decode or prefill over lanes): for each K from 1 to a binary
    tree's depth on the widest open tree, it routes a copy of the module as
    `mesh-allocate-routes` will (lib/Support/PlanPrice.cpp) and adds up the
    ops' estimates, the analytic mode's total, and keeps the cheapest K
    whose routes and buffers fit (when none does, the one whose routes came
    closest, which mesh-allocate-routes or mesh-check-memory then reports).
    Routing each K matters: a K whose trees overflow the routes gets them
    relayed hop by hop (LLaMA3-8B prefill on 720x720: 612M cycles of
    attention at K = 4 against 0.66M at K = 2). One K, not one per op: trees
    with equal K along an axis share their colors, while per-op Ks soon
    exhaust the routes and the trees fall back to relaying (a LLaMA3-8B
    decode on 660x660 ran 10x slower). Trees whose K is set are left alone.
    `mesh-allocate-routes`, `mesh-check-memory` and `convert-mesh-to-core`
    refuse an open K.

    Before (a 64-row column, identity placement):
    ```mlir
    %y = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree>} : ...
    ```
    After:
    ```mlir
    %y = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 3>} : ...
    ```
  }];
}

def MeshAllocateRoutes : Pass<"mesh-allocate-routes", "mlir::ModuleOp"> {
  let summary = "Assigns routing colors to every communicating op";
  let description = [{
    Each op's message paths (MeshGEMM's x and y rings, each K-tree level's
    chains, the broadcast) are colored so that paths sharing a core never
    share a color; ops with the same paths share colors. The colors any
    core needs must fit the target's `routes_per_core`. A GEMV tree that
    does not fit is marked `relayed` (its messages then move one ring
    position at a time, forwarded in software, sharing two colors per
    direction, three under INTERLEAVE) when that needs fewer colors; if
    that still overflows, every tree is relayed, and failing that the pass
    fails naming the op, the core and the smaller of the two needs.

    Before:
    ```mlir
    %y = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>} : ...
    ```
    After:
    ```mlir
    %y = mesh.gemv %x, %w {allreduce = #mesh.allreduce<ktree, k = 2>, colors = array<i32: 0, 2, 4>} : ...
    ```
  }];
}

def MeshCheckMemory : Pass<"mesh-check-memory", "mlir::ModuleOp"> {
  let summary = "Checks every core's SRAM high-water against the target";
  let description = [{
    Adds up, in program order, what each core stores: the local tile of
    every distributed tensor (padding and block-cyclic slots included) and
    the working buffers of each algorithm (MeshGEMM's shift targets, SUMMA's
    panels, the K-tree partial, the ring's pass buffers), with the sizes
    convert-mesh-to-core allocates. The first op that takes a core past the
    target's `sram_bytes` is an error naming the op, the tensor or buffer,
    the core and the bytes; otherwise the IR is unchanged.

    Before and after (grid 2x2, a 512x512 f32 GEMM on a 48 KB target):
    ```
    error: mesh-check-memory: 'matmul' needs tensor tensor<512x512xf32,
      #mesh.layout<[y:2, x:2]>> (262144 bytes per core): core (0, 0) would
      hold 262144 bytes, target 'wse2' has 49152
    ```
  }];
}

#endif // WAFER_MESH_PASSES
