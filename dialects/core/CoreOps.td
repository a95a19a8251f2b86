//===- CoreOps.td - Per-core program ops -------------------*- tablegen -*-===//
#ifndef WAFER_CORE_OPS
#define WAFER_CORE_OPS

include "CoreAttrs.td"
include "MeshAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/BuiltinAttributes.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Core_ProgramOp : Core_Op<"program", [SymbolTable, NoTerminator,
    SingleBlock, IsolatedFromAbove, NoRegionArguments]> {
  let summary = "Programs for every core of a grid";
  let description = [{
    Holds `core.buffer`, `core.channel`, `core.role` and the host bindings
    (`core.input`, `core.output`). Roles must cover the grid without
    overlap. `ops` names the mesh ops the program implements, in the order
    `core.mark` numbers them: each entry is [name, kind, algorithm].
    `estimated_cycles`, one per entry of `ops`: the closed-form estimate of
    each op's cycles (CostedOpInterface), which `wafer-run run --mode
    analytic` reports.
    `kv_capacity_tokens`: the decode tokens the KV caches can still take
    before some core's SRAM overflows. `position`: the value of the
    expression variable `t` (tokens in the KV caches before a decode step)
    when a run binds none, the past the program was compiled for; a run may
    bind any position the caches have room for. `fabric_rows` and
    `fabric_cols`, when the target has defects: the fabric row of each grid
    row and the fabric column of each grid column (increasing), chosen so
    that no grid core and no message path uses a dead core or link
    (runtime/include/wafer/Runtime/FabricPlacement.h); absent, the grid sits
    at the fabric's north-west corner. `bound_inputs`: graph inputs
    tfm-bind-position-inputs bound to constants, each to "positions" (the
    run's position on, one per element) or "ones"; a run given one checks
    its values instead of ignoring it.

    ```mlir
    core.program {grid = #mesh.grid<3x3>, target = #mesh.target<...>,
                  interleave, ops = [["matmul_0", "gemm", "meshgemm"]]} {
      core.buffer @a[12] : f32 at 0
      core.role @all at #core.cores<x = 0:2:1, y = 0:2:1> {
        core.zero @a
        core.mark 0
      }
    }
    ```
  }];
  let arguments = (ins Mesh_GridAttr:$grid, Mesh_TargetAttr:$target,
                       UnitAttr:$interleave, ArrayAttr:$ops,
                       OptionalAttr<DenseI64ArrayAttr>:$estimated_cycles,
                       OptionalAttr<I64Attr>:$kv_capacity_tokens,
                       OptionalAttr<I64Attr>:$position,
                       OptionalAttr<DenseI64ArrayAttr>:$fabric_rows,
                       OptionalAttr<DenseI64ArrayAttr>:$fabric_cols,
                       OptionalAttr<DictionaryAttr>:$bound_inputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Core_BufferOp : Core_Op<"buffer", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "A per-core SRAM buffer";
  let description = [{
    Every core allocates `elements` values of `element_type` (f32 or f16)
    at byte `offset` of its SRAM.

    ```mlir
    core.buffer @a[120] : f32 at 480
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$elements,
                       TypeAttr:$element_type, I64Attr:$offset);
  let assemblyFormat = [{
    $sym_name `[` $elements `]` `:` $element_type `at` $offset attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getSizeInBytes() {
      return int64_t(getElements()) * (getElementType().isF16() ? 2 : 4);
    }
  }];
}

def Core_ChannelOp : Core_Op<"channel", [Symbol, HasParent<"ProgramOp">,
    NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "A named set of routes that sends and receives use";
  let description = [{
    On a core, `core.send` uses the channel's route that starts at the
    core's ramp and `core.recv` the one that delivers to it.

    ```mlir
    core.channel @ring_x {
      core.route color 0 at #core.cores<x = 0:4:4, y = 0:4:1> from ramp to [east]
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def Core_RouteOp : Core_Op<"route", [HasParent<"ChannelOp">]> {
  let summary = "Router configuration for a color on a set of cores";
  let description = [{
    On every selected core, messages of `color` arriving from `in` leave
    towards each port of `outs`; `ramp` in `outs` delivers to the core.

    ```mlir
    core.route color 2 at #core.cores<x = 1:5:4, y = 0:4:1> from west to [east, ramp]
    ```
  }];
  let arguments = (ins I32Attr:$color, Core_CoreSetAttr:$cores,
                       Core_DirAttr:$in, DenseI32ArrayAttr:$outs);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Core_RoleOp : Core_Op<"role", [Symbol, HasParent<"ProgramOp">,
    NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "The program of every core a predicate selects";
  let description = [{
    ```mlir
    core.role @all at #core.cores<x = 0:6:1, y = 0:4:1> {
      core.zero @c
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Core_CoreSetAttr:$cores);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `at` $cores attr-dict-with-keyword $body";
}

// Ops naming buffers check them in verifySymbolUses, which the program's
// symbol table runs for all of them with one table of its symbols (a
// lookup per op scans the program: quadratic in a large model's code).
def BufferUser : DeclareOpInterfaceMethods<SymbolUserOpInterface>;

def Core_InputOp : Core_Op<"input", [HasParent<"ProgramOp">, BufferUser]> {
  let summary = "Places a host tensor into a buffer before the program runs";
  let description = [{
    `type` is the placed tensor with its `#mesh.layout`. The source is the
    user's input `name` (a graph input), or the initializer `name` of the
    ONNX file `weight_file`, or the constant `value`; it has shape
    `source_shape` and is permuted by `permutation` and broadcast to the
    placed shape on the host. With `gather_ids` the initializer is an
    embedding table and the source (of shape `source_shape`: the ids' shape
    and the row size) is made of the rows the token ids in input
    `gather_ids` select. With `index_dim` and `index_map` the placed
    coordinate j along that dimension reads source coordinate
    `index_map[j]` (-1: zero), as in mesh.distribute. With `view` the
    permutation, broadcast and index map refer to that shape, of which the
    placed tensor is the row-major reshape; with `source_view` they permute
    that row-major reshape of the source (which the user supplies as
    `source_shape`).

    ```mlir
    core.input @b {name = "w", weight_file = "m.onnx",
                   source_shape = array<i64: 50, 29>,
                   type = tensor<50x29xf32, #mesh.layout<[y:35, x:7], interleave>>}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, StrAttr:$name,
                       TypeAttr:$type, DenseI64ArrayAttr:$source_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       OptionalAttr<StrAttr>:$weight_file,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<StrAttr>:$gather_ids,
                       OptionalAttr<I64Attr>:$index_dim,
                       OptionalAttr<DenseI64ArrayAttr>:$index_map,
                       OptionalAttr<DenseI64ArrayAttr>:$view,
                       OptionalAttr<DenseI64ArrayAttr>:$source_view);
  let assemblyFormat = "$buffer attr-dict";
  let hasVerifier = 1;
}

def Core_OutputOp : Core_Op<"output", [HasParent<"ProgramOp">, BufferUser]> {
  let summary = "Reads a buffer back to the host after the program ran";
  let description = [{
    The host reads the buffer as `view` when given (a row-major reshape),
    gathers along `index_dim` (returned coordinate i reads
    `index_map[i]`), permutes the dimensions by `permutation` and returns
    the tensor in `result_shape` when given (the same elements in order,
    e.g. with the graph's unit dimensions).
    ```mlir
    core.output @c {name = "y", type = tensor<37x29xf32, #mesh.layout<[y:5, x:7], interleave>>}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, StrAttr:$name,
                       TypeAttr:$type,
                       OptionalAttr<DenseI64ArrayAttr>:$result_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       OptionalAttr<I64Attr>:$index_dim,
                       OptionalAttr<DenseI64ArrayAttr>:$index_map,
                       OptionalAttr<DenseI64ArrayAttr>:$view);
  let assemblyFormat = "$buffer attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

class Core_Instr<string mnemonic, list<Trait> traits = []>
    : Core_Op<mnemonic, traits>;

def Core_GemmTileOp : Core_Instr<"gemm_tile", [BufferUser]> {
  let summary = "c[m x n] += a[m x k] * b[k x n] on local tiles";
  let description = [{
    ```mlir
    core.gemm_tile @c, @a, @b {m = 8 : i64, k = 2 : i64, n = 5 : i64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$c, FlatSymbolRefAttr:$a,
                       FlatSymbolRefAttr:$b, I64Attr:$m, I64Attr:$k,
                       I64Attr:$n);
  let assemblyFormat = "$c `,` $a `,` $b attr-dict";
}

def Core_GemvTileOp : Core_Instr<"gemv_tile", [BufferUser]> {
  let summary = "c[n] += a[k] * b[k x n] on local tiles";
  let description = [{
    ```mlir
    core.gemv_tile @part, @x, @w {k = 50 : i64, n = 34 : i64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$c, FlatSymbolRefAttr:$a,
                       FlatSymbolRefAttr:$b, I64Attr:$k, I64Attr:$n);
  let assemblyFormat = "$c `,` $a `,` $b attr-dict";
}

def Core_ElementwiseOp : Core_Instr<"elementwise", [BufferUser]> {
  let summary = "out[i] = f(a[i], b[i]) over whole buffers";
  let description = [{
    `add`, `mul`, `max`, or `swiglu`: silu(a) * b with
    silu(v) = v / (1 + exp(-v)).
    ```mlir
    core.elementwise <add> @out, @a, @b
    ```
  }];
  let arguments = (ins Core_ElementwiseKindAttr:$kind, FlatSymbolRefAttr:$out,
                       FlatSymbolRefAttr:$a, FlatSymbolRefAttr:$b);
  let assemblyFormat = "$kind $out `,` $a `,` $b attr-dict";
}

def Core_RowsOp : Core_Instr<"rows", [BufferUser]> {
  let summary = "A row kernel: reductions, normalisation, RoPE, attention";
  let description = [{
    Local arithmetic on row-major tiles; `buffers` are the operands in the
    order below (the first is written). Sizes: `m`, `groups`, `k`, `n`.
    - `reduce_sum | reduce_sumsq | reduce_max` [@out, @in]:
      out[r] = sum / sum of squares / max of in[r, c], in [m, n].
    - `rms_scale` [@out, @in, @sumsq, @weight]: out[r, c] = in[r, c] /
      sqrt(sumsq[r] / k + scalar) * weight[c] (k = the normalised length,
      scalar = epsilon).
    - `rope` [@out, @in, @cos, @sin]: rotate-half RoPE of in [m, k, n]
      (k heads of dimension n) with the factors cos[r, :], sin[r, :] of row
      r.
    - `attn_scores` [@s, @q, @keys]: s[h, g, r] = scalar * q[h, g, :] .
      keys[h, r, :] for r < valid (an expression over the core's
      coordinates), -inf beyond; m kv heads, groups query heads each, k
      keys, n = head dimension.
    - `softmax_exp` [@s, @max]: s[r, c] = exp(s[r, c] - max[r]), s [m, n].
    - `attn_values` [@out, @p, @values]: out[h, g, :] += sum_r p[h, g, r]
      values[h, r, :] (sizes as attn_scores).
    - `div_rows` [@a, @z]: a[r, c] /= z[r], a [m, n].
    - `regrid` [@dst, @src]: relayout along one grid axis of `groups`
      cores: src holds the column blocks P, P + groups, ... (width k) of an
      [m, columns] matrix, dst the blocks Q, Q + groups, ... (width n);
      copies the columns they share. `valid` is P, `position` Q. Without
      `length` the blocks are ceil-sized; with it, the re-blocked
      dimension has `length` entries in balanced blocks (`#mesh.layout`;
      a side that divides evenly is the same either way), each entry
      k / ceil(length / source blocks) columns wide; `parts` (with
      `length`) balances them in that many equal parts.
    - `flash_step` [@out, @ml, @q, @kv]: one block of causal attention with
      an online softmax: q [m, k, groups * n] (m queries, k kv heads,
      groups query heads each, head dimension n), kv the keys then the
      values [m, k, n] each, ml the running sum then max per query, out the
      unnormalised output. `valid` is the global position of kv's first
      key, `position` that of q's first query; later keys are masked.
    - `lane_scores` [@s, @q, @keys]: decode scores when each core holds
      lanes (pairs of dimensions) of the KV heads: q [m, groups, 2], keys
      [m, k, 2], s [heads, groups, k] (heads from its size). `position` is
      the global index of the first lane, `n` the lanes of one KV head:
      s[h, g, r] = scalar * the sum over local lanes of head h of
      q[j, g, :] . keys[j, r, :] for r < valid (0 without such lanes),
      -inf beyond. Summed over the cores of a grid row, they are the
      scores.
    - `lane_values` [@out, @p, @values]: out[j, g, :] = sum_r p[h, g, r]
      values[j, r, :] with h the head of local lane j; `valid` is the
      global index of the first lane, sizes as lane_scores.
    - `lane_flash_scores` [@s, @q, @kv]: prefill's partial scores over
      lanes: q [k, m, groups, 2] (k queries, m local lanes), kv the keys
      then the values [k, m, 2] each, s [k, heads, groups, k]; `valid` is
      the global index of the first lane, `n` the lanes of one KV head.
      s[q, h, g, r] = scalar * the sum over local lanes j of head h of
      q[q, j, g, :] . keys[r, j, :].
    - `flash_stats` [@p, @ml]: the online softmax over one block of keys:
      p [k, m, k] (k queries of m score rows each, k keys) becomes exp(p -
      the new running max), 0 for keys after the query; ml [3, k, m], the
      running sum, max and this step's scale factor of the sum, is
      updated. `valid` is the global position of the first key,
      `position` that of the first query.
    - `lane_flash_values` [@out, @p, @kv, @ml]: out[q, j, g, :] = out[q,
      j, g, :] * factor[q, h, g] + sum_r p[q, h, g, r] values[r, j, :]
      with h the head of local lane j (sizes and `valid` as
      lane_flash_scores).
    - `lane_div_rows` [@out, @ml]: out[q, j, g, :] /= the running sum of
      query q, head h of lane j, query head g.

    ```mlir
    core.rows <attn_scores> [@s, @q, @k] {m = 1, groups = 2, k = 3, n = 16,
                                          scalar = 0.25, valid = "9 - 3 * ly"}
    ```
  }];
  let arguments = (ins Core_RowKernelAttr:$kernel,
                       FlatSymbolRefArrayAttr:$buffers, I64Attr:$m,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64Attr, "0">:$k, I64Attr:$n,
                       DefaultValuedAttr<F64Attr, "0.0">:$scalar,
                       OptionalAttr<StrAttr>:$valid,
                       OptionalAttr<StrAttr>:$position,
                       DefaultValuedAttr<I64Attr, "0">:$length,
                       DefaultValuedAttr<I64Attr, "1">:$parts);
  let assemblyFormat = "$kernel $buffers attr-dict";
  let extraClassDeclaration = [{
    /// The runtime opcode and its `k` (the reduction kind for reductions).
    std::pair<::wafer::rt::Opcode, int64_t> toRuntime();
  }];
}

def Core_ZeroOp : Core_Instr<"zero", [BufferUser]> {
  let summary = "Sets a buffer to zero";
  let description = "`core.zero @c`";
  let arguments = (ins FlatSymbolRefAttr:$buffer);
  let assemblyFormat = "$buffer attr-dict";
}

def Core_SwapOp : Core_Instr<"swap", [BufferUser]> {
  let summary = "Exchanges two buffers of the same size (no data moves)";
  let description = "`core.swap @a, @a_next`: double buffering.";
  let arguments = (ins FlatSymbolRefAttr:$a, FlatSymbolRefAttr:$b);
  let assemblyFormat = "$a `,` $b attr-dict";
}

def Core_RotateSlotsOp : Core_Instr<"rotate_slots", [BufferUser]> {
  let summary = "Moves slot s of a buffer to slot s - 1 (cyclically)";
  let description = [{
    The buffer holds elements / slot slots. MeshGEMM's lcm construction
    uses it where a block-cyclic tensor wraps around its ring.

    ```mlir
    core.rotate_slots @a {slot = 16 : i64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, I64Attr:$slot);
  let assemblyFormat = "$buffer attr-dict";
}

def Core_CopyOp : Core_Instr<"copy", [BufferUser]> {
  let summary = "Copies one slot of a buffer into a slot of another";
  let description = [{
    Both buffers are read as slots of `size` elements; the slot indices are
    coordinate expressions (they may read `i`, the iteration of the
    innermost repeat) and must lie within the buffers at run time. Gathers
    blocks into a panel and picks them out again (the allgather GEMM).
    ```mlir
    core.copy @panel["(lx + i + 1) % 4"], @a["0"] {size = 16 : i64}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$dst, StrAttr:$dst_slot,
                       FlatSymbolRefAttr:$src, StrAttr:$src_slot,
                       I64Attr:$size);
  let assemblyFormat = [{
    $dst `[` $dst_slot `]` `,` $src `[` $src_slot `]` attr-dict
  }];
}

def Core_SendOp : Core_Instr<"send", [BufferUser]> {
  let summary = "Sends a buffer on a channel";
  let description = [{
    Asynchronous: the core goes on while the message travels; the buffer
    is not overwritten before the message has left.

    ```mlir
    core.send @a on @ring_x
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, FlatSymbolRefAttr:$channel);
  let assemblyFormat = "$buffer `on` $channel attr-dict";
}

def Core_RecvOp : Core_Instr<"recv", [BufferUser]> {
  let summary = "Waits for the next message a channel delivers";
  let description = "`core.recv @a_next on @ring_x`";
  let arguments = (ins FlatSymbolRefAttr:$buffer, FlatSymbolRefAttr:$channel);
  let assemblyFormat = "$buffer `on` $channel attr-dict";
}

def Core_RelayOp : Core_Instr<"relay", [BufferUser]> {
  let summary = "Receives a message in software and sends it on";
  let description = [{
    Pays the target's relay cycles (beta); used where routing colors run
    out and a path is split into hops.

    ```mlir
    core.relay @tmp from @first_leg to @second_leg
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, FlatSymbolRefAttr:$from,
                       FlatSymbolRefAttr:$to);
  let assemblyFormat = "$buffer `from` $from `to` $to attr-dict";
}

def Core_CombineRelayOp : Core_Instr<"combine_relay", [BufferUser]> {
  let summary = "One stage of a reduce chain: receive, combine, send on";
  let description = [{
    Receives a message into `partial`, combines it into `sum`
    (`sum[i] = f(sum[i], partial[i])`, `add`, `mul` or `max`) and sends
    `sum` on the same channel: one member of a K-tree or pipeline chain,
    which passes its group's partial sums towards the root. As on the
    hardware, where this is one vector instruction from the fabric to the
    fabric, the values stream: the send leaves once the receive's handling
    (the target's relay cycles) is done after the message's first word,
    not after its last, and the core is busy until the stream has passed.

    ```mlir
    core.combine_relay <add> @sum, @partial on @ktree2_level0
    ```
  }];
  let arguments = (ins Core_ElementwiseKindAttr:$kind, FlatSymbolRefAttr:$sum,
                       FlatSymbolRefAttr:$partial,
                       FlatSymbolRefAttr:$channel);
  let assemblyFormat = "$kind $sum `,` $partial `on` $channel attr-dict";
}

def Core_RepeatOp : Core_Instr<"repeat", [NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "Runs its body a coordinate-dependent number of times";
  let description = [{
    The count is an expression over the core's coordinates (`x`, `y`,
    `lx`, `ly`, `W`, `H`); inside the body, expressions may also read `i`,
    the iteration number (from 0) of the innermost enclosing repeat.
    ```mlir
    core.repeat "ly" {
      core.send @a on @ring_x
    }
    core.repeat "4" {
      core.when "x == i % W" { core.send @a on @east_x }
    }
    ```
  }];
  let arguments = (ins StrAttr:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Core_WhenOp : Core_Instr<"when", [NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "Runs its body on the cores where a condition holds";
  let description = [{
    ```mlir
    core.when "ly % 3 == 0 && ly + 1 < H" {
      core.recv @tmp on @ktree_l0
    }
    ```
  }];
  let arguments = (ins StrAttr:$condition);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$condition attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Core_MarkOp : Core_Instr<"mark"> {
  let summary = "The end of a mesh op, for per-op statistics";
  let description = "`core.mark 0`: index into the program's `ops`.";
  let arguments = (ins I64Attr:$op_index);
  let assemblyFormat = "$op_index attr-dict";
  let hasVerifier = 1;
}

#endif // WAFER_CORE_OPS
