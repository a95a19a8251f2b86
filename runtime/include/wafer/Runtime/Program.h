//===- Program.h - In-memory form of a program bundle -----------*- C++ -*-===//
//
// The program the emulator executes and the bundle stores. It is grouped by
// role: a role's instruction list serves every core its predicate selects, so
// the size of a program does not grow with the number of cores. Coordinates:
// x grows east (0..W-1), y grows south (0..H-1).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_PROGRAM_H
#define WAFER_RUNTIME_PROGRAM_H

#include "wafer/Runtime/Target.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wafer::rt {

/// Bump when the meaning of a field changes; readers reject other versions.
/// 2: weights of f16 buffers are stored as f16 (`data_f16`).
constexpr uint32_t kBundleVersion = 2;

enum class Dir : uint8_t { Ramp = 0, North = 1, East = 2, South = 3, West = 4 };
inline uint8_t dirBit(Dir d) { return uint8_t(1u << unsigned(d)); }

/// The port a message leaving through `d` arrives from at the neighbour.
inline Dir opposite(Dir d) {
  switch (d) {
  case Dir::North:
    return Dir::South;
  case Dir::South:
    return Dir::North;
  case Dir::East:
    return Dir::West;
  case Dir::West:
    return Dir::East;
  case Dir::Ramp:
    break;
  }
  return Dir::Ramp;
}

inline const char *dirName(Dir d) {
  switch (d) {
  case Dir::Ramp:
    return "ramp";
  case Dir::North:
    return "north";
  case Dir::East:
    return "east";
  case Dir::South:
    return "south";
  case Dir::West:
    return "west";
  }
  return "?";
}

/// The arithmetic progression lo, lo+step, ..., up to hi (inclusive).
struct Range {
  int64_t lo = 0, hi = 0, step = 1;
  bool contains(int64_t v) const {
    return v >= lo && v <= hi && (v - lo) % step == 0;
  }
  int64_t count() const { return hi < lo ? 0 : (hi - lo) / step + 1; }
};

/// The cores {(x, y) : x in x-range, y in y-range}.
struct CoreSet {
  Range x, y;
  bool contains(int64_t cx, int64_t cy) const {
    return x.contains(cx) && y.contains(cy);
  }
};

/// Router configuration: on every core of `cores`, messages of `color`
/// arriving from `in` leave towards every direction in `outMask` (dirBit);
/// Dir::Ramp in the mask delivers to the core itself.
struct Route {
  int32_t color = 0;
  CoreSet cores;
  Dir in = Dir::Ramp;
  uint8_t outMask = 0;
};

/// A set of routes that programs name in send and recv. On a given core the
/// channel has at most one route starting at the ramp (what `send` uses) and
/// at most one delivering to the ramp (what `recv` uses).
struct Channel {
  std::string name;
  std::vector<Route> routes;
};

/// Element type of a buffer. F16 buffers take 2 bytes per element in SRAM,
/// two elements per 32-bit link word, and the target's f16 MAC rate; every
/// value written into one is rounded to half precision (the emulator keeps
/// it in a float).
enum class DType : uint8_t { F32 = 0, F16 = 1 };

inline int64_t bytesOf(DType dtype) { return dtype == DType::F16 ? 2 : 4; }

/// IEEE binary16 values (bits) to floats and back (round to nearest even),
/// with the F16C instructions where the CPU has them; the same results
/// either way.
void halvesToFloats(const uint16_t *halves, float *out, int64_t count);
void floatsToHalves(const float *values, uint16_t *out, int64_t count);

/// Gives back the host memory of the whole pages within [data, data +
/// bytes) of a read-only file mapping (madvise); reading them again reads
/// the file.
void releaseMappedPages(const void *data, int64_t bytes);

/// The values of a weight: f32 or f16, owned, or viewed where they lie (in
/// a mapped bundle) and kept alive by an owner. Copies share the values.
class TensorValues {
public:
  TensorValues() = default;
  /// Owned f32 values.
  TensorValues(std::vector<float> values);
  /// Owned f16 values (IEEE binary16 bits).
  static TensorValues halves(std::vector<uint16_t> bits);
  /// `count` values of `dtype` at `data`, valid while `owner` lives (null:
  /// while the caller keeps them); `inMappedFile`: they lie in a read-only
  /// mapping of a file, whose pages releasePages() may give back.
  static TensorValues view(const void *data, int64_t count, DType dtype,
                           std::shared_ptr<const void> owner,
                           bool inMappedFile = false);

  int64_t size() const { return count; }
  bool empty() const { return count == 0; }
  DType dtype() const { return type; }
  /// Values [begin, begin + n) as floats.
  void read(int64_t begin, int64_t n, float *out) const;
  std::vector<float> toFloats() const;
  /// The f16 values rounded from these (a copy when they are f32).
  std::vector<uint16_t> toHalves() const;
  /// Gives the host memory of values in a mapped file back to the kernel
  /// (they are read from the file again when next used); a no-op for
  /// values in memory.
  void releasePages() const;
  /// The raw values; null unless dtype() matches.
  const float *f32() const {
    return type == DType::F32 ? static_cast<const float *>(data) : nullptr;
  }
  const uint16_t *f16() const {
    return type == DType::F16 ? static_cast<const uint16_t *>(data) : nullptr;
  }

private:
  std::shared_ptr<const void> owner;
  const void *data = nullptr;
  int64_t count = 0;
  DType type = DType::F32;
  bool inMappedFile = false;
};

/// Per-core SRAM buffer; every core allocates every buffer at `offsetBytes`.
struct Buffer {
  std::string name;
  int64_t elements = 0;
  DType dtype = DType::F32;
  int64_t offsetBytes = 0;
};

enum class Opcode : uint8_t {
  /// bufs {c, a, b}: c[m x n] += a[m x k] * b[k x n] (row-major, offset 0).
  GemmTile = 0,
  /// bufs {c, a, b}: c[n] += a[k] * b[k x n].
  GemvTile = 1,
  /// bufs {out, a, b}: out[i] = a[i] + b[i] over out's elements.
  Add = 2,
  /// bufs {out, a, b}: out[i] = a[i] * b[i].
  Mul = 3,
  /// bufs {a}: a[i] = 0.
  Zero = 4,
  /// bufs {a, b}: exchange the storage of a and b (same size), free.
  Swap = 5,
  /// bufs {a}, n = slot size: a holds S = elements/n slots; slot s moves to
  /// slot (s - 1) mod S.
  RotateSlots = 6,
  /// bufs {a}, channel: send all of a on the channel's route from this core.
  Send = 7,
  /// bufs {a}, channel: wait for the next message the channel delivers to
  /// this core; its size must equal a's.
  Recv = 8,
  /// bufs {a}, channel (in), channel2 (out): recv into a, then send a.
  Relay = 9,
  /// expr (count): run body count times.
  Repeat = 10,
  /// expr (condition): run body if the condition is non-zero.
  When = 11,
  /// mark: the end of mesh op number `mark` (index into Program::ops).
  Mark = 12,
  /// bufs {dst, src}, n = slot size, expr (dst slot), expr2 (src slot):
  /// dst[expr * n .. +n) = src[expr2 * n .. +n); the slot indices must lie
  /// within the buffers.
  Copy = 13,
  /// bufs {out, a, b}: out[i] = max(a[i], b[i]).
  Max = 14,
  /// bufs {out, a, b}: out[i] = silu(a[i]) * b[i], silu(v) = v / (1 + e^-v).
  Swiglu = 15,
  /// bufs {out, in}, m rows, n columns, k kind (ReduceKind):
  /// out[r] = sum / sum of squares / max of in[r * n + c] over c < n.
  Reduce = 16,
  /// bufs {out, in, sumsq, weight}, m rows, n columns, k count, scalar
  /// epsilon: out[r, c] = in[r, c] / sqrt(sumsq[r] / k + epsilon) * weight[c].
  RmsScale = 17,
  /// bufs {out, in, cos, sin}, m rows, k heads, n dim (even): rotate-half
  /// RoPE of in[m, k, n] with the factors of row r, cos[r, :] and sin[r, :]:
  /// out = in * cos + concat(-in[n/2:], in[:n/2]) * sin per head.
  Rope = 18,
  /// bufs {s, q, keys}, m kv heads, groups query heads per kv head, k keys,
  /// n dim, scalar scale, expr valid keys: s[h, g, r] = scale *
  /// sum_d q[h, g, d] keys[h, r, d] for r < valid, -inf for the others.
  AttnScores = 19,
  /// bufs {s, max}, m rows, n columns: s[r, c] = exp(s[r, c] - max[r]).
  SoftmaxExp = 20,
  /// bufs {out, p, values}, m kv heads, groups, k keys, n dim:
  /// out[h, g, :] += sum_r p[h, g, r] * values[h, r, :].
  AttnValues = 21,
  /// bufs {a, z}, m rows, n columns: a[r, c] /= z[r].
  DivRows = 22,
  /// bufs {dst, src}, m rows, k, n widths, groups extent E, expr (the axis
  /// position P the src tile comes from), expr2 (this core's position Q):
  /// relayout along one axis. src holds the blocks P, P + E, ... of width k
  /// of a row-major [rows, columns] matrix (as slots [S][m][k]); dst the
  /// blocks Q, Q + E, ... of width n (slots [T][m][n]). Copies every column
  /// the two share.
  Regrid = 23,
  /// bufs {out, ml, q, kv}, m rows, groups, k kv heads, n dim, scalar scale,
  /// expr (global position of kv's first key), expr2 (of q's first query):
  /// one block of causal attention with an online softmax. q is
  /// [m, k, groups * n], kv holds keys then values, each [m, k, n]; ml holds
  /// the running sum (0: no key yet) then max of each query
  /// [m * k * groups]; out [m, k, groups * n] accumulates the unnormalised
  /// output.
  /// Keys after a query's position are masked.
  FlashStep = 24,
  /// bufs {s, q, keys}, m lanes (pairs of a KV head's dimensions), groups
  /// query heads per kv head, k keys, n lanes per KV head, scalar scale,
  /// expr valid keys, expr2 the global index of the first lane: one core's
  /// share of decode attention's scores when the head dimension is split
  /// along x. q is [m, groups, 2], keys [m, k, 2] and s [heads, groups, k]
  /// (heads from s's size): s[h, g, r] = scale * sum over the local lanes
  /// j of head (expr2 + j) / n of q[j, g, :] . keys[j, r, :] for r < valid
  /// (0 when no local lane is of head h), -inf for the others.
  LaneScores = 25,
  /// bufs {out, p, values}, m lanes, groups, k keys, n lanes per KV head,
  /// expr the global index of the first lane: out[j, g, :] = sum_r
  /// p[h, g, r] values[j, r, :] with h = (expr + j) / n (0 beyond p's
  /// heads); p [heads, groups, k], values [m, k, 2], out [m, groups, 2].
  LaneValues = 26,
  /// bufs {sum, partial}, channel, k (the combine: Add, Mul or Max): recv
  /// into partial, sum = combine(sum, partial), send sum on the same
  /// channel, streamed: the values leave as they are combined, so the send
  /// starts a receive's handling after the message's first word arrives
  /// (a fabric-to-fabric vector instruction; one stage of a reduce chain).
  CombineRelay = 27,
  /// bufs {s, q, kv}, m lanes, groups query heads per kv head, k rows (the
  /// queries and the keys a core holds), n lanes per KV head, scalar scale,
  /// expr the global index of the first lane: prefill's partial scores when
  /// the head dimension is split along x. q is [k, m, groups, 2], kv the
  /// keys then the values [k, m, 2] each, s [k, heads, groups, k] (heads
  /// from s's size): s[q, h, g, r] = scale * the sum over the local lanes j
  /// of head (expr + j) / n of q[q, j, g, :] . keys[r, j, :] (0 without
  /// such lanes). Summed along the grid row they are the scores.
  LaneFlashScores = 28,
  /// bufs {p, ml}, m score rows per query, k queries and keys, expr the
  /// global position of the first key, expr2 that of the first query: the
  /// online softmax's step over one block of keys. p [k, m, k] holds the
  /// scores and becomes their exponentials (0 for keys after the query);
  /// ml [3, k, m] holds the running sum (0: no key yet), the running max
  /// and the factor this step scaled the running sum by, which
  /// LaneFlashValues applies to the output.
  FlashStats = 29,
  /// bufs {out, p, kv, ml}, sizes and expr as LaneFlashScores: out[q, j, g,
  /// :] = out[q, j, g, :] * factor[q, h, g] + sum_r p[q, h, g, r] *
  /// values[r, j, :], h the head of local lane j, factor ml's third part;
  /// lanes beyond p's heads are left alone.
  LaneFlashValues = 30,
  /// bufs {out, ml}, sizes and expr as LaneFlashScores: out[q, j, g, :] /=
  /// the running sum of query q, head h of lane j, query head g (ml's
  /// first part; heads from ml's size).
  LaneDivRows = 31,
};

/// The last opcode: readers reject larger values.
constexpr Opcode kLastOpcode = Opcode::LaneDivRows;

/// What a Reduce instruction computes per row (Instr::k).
enum class ReduceKind : int64_t { Sum = 0, SumSquares = 1, Max = 2 };

/// One instruction. Expressions are integer expressions over the core's
/// coordinates: variables x, y (physical), lx, ly (position on the logical
/// ring of the axis: see Program::interleave), W, H (grid size), i (the
/// iteration, from 0, of the innermost enclosing repeat; 0 outside), t (the
/// run's decode position, Program::position unless the run binds one); integer
/// literals; + - * / % (truncating), == != < <= > >=, && || !, unary -,
/// parentheses.
struct Instr {
  Opcode op = Opcode::Zero;
  std::vector<int32_t> bufs;
  int32_t channel = -1;
  int32_t channel2 = -1;
  int64_t m = 0, k = 0, n = 0;
  std::string expr;
  /// Copy: the source slot expression.
  std::string expr2;
  int64_t mark = -1;
  /// AttnScores, AttnValues: query heads per kv head.
  int64_t groups = 1;
  /// RmsScale: epsilon; AttnScores: scale.
  double scalar = 0;
  /// Regrid: the re-blocked dimension's length when its blocks are balanced
  /// (LayoutDim::balanced; on one side they may divide evenly, where both
  /// sizings agree); 0 when they are ceil-sized.
  int64_t length = 0;
  /// Regrid: the parts its balanced blocks are balanced in
  /// (LayoutDim::parts).
  int64_t parts = 1;
  std::vector<Instr> body;
};

struct Role {
  std::string name;
  CoreSet cores;
  std::vector<Instr> body;
};

enum class Axis : uint8_t { None = 0, X = 1, Y = 2 };

/// Dimension d of a tensor is split into `blocks` blocks along `axis` (blocks
/// is a multiple of the grid's extent G on that axis; block b lives on the
/// core at logical position b mod G, in slot b / G) or kept whole
/// (Axis::None, blocks = 1). A grid axis that no dimension uses holds
/// replicas. The local buffer is row-major
/// [slots_0, ..., slots_{r-1}, tile_0, ..., tile_{r-1}] with
/// tile_d = ceil(shape_d / blocks_d). Ceil-sized blocks fill whole tiles in
/// order, the padding (zeros) on the last cores; balanced blocks hold
/// floor(shape_d / blocks_d) elements, the first shape_d mod blocks_d one
/// more, each padded at its end (blockStart). Balanced in `parts` parts,
/// the dimension is that many equal parts, each balanced over as many
/// consecutive blocks (parts divides blocks and shape_d): attention's lanes,
/// whose parts are whole KV heads.
struct LayoutDim {
  Axis axis = Axis::None;
  int64_t blocks = 1;
  bool balanced = false;
  int64_t parts = 1;
};

/// The first element of block `block` of a dimension of `size` elements in
/// `blocks` blocks (block == blocks gives the end): blocks of the sizes
/// LayoutDim describes.
inline int64_t blockStart(int64_t size, int64_t blocks, bool balanced,
                          int64_t block, int64_t parts = 1) {
  if (!balanced)
    return std::min(block * ((size + blocks - 1) / blocks), size);
  if (parts > 1 && blocks % parts == 0 && size % parts == 0) {
    int64_t perPart = blocks / parts, part = block / perPart;
    return std::min(part * (size / parts) + blockStart(size / parts, perPart,
                                                       true,
                                                       block - part * perPart),
                    size);
  }
  return std::min(block * (size / blocks) + std::min(block, size % blocks),
                  size);
}

struct HostTensor {
  /// The ONNX name (graph input, initializer or output).
  std::string name;
  /// Shape of the tensor as placed on the grid.
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  int32_t buffer = -1;
  std::vector<LayoutDim> layout;
  /// Outputs: the shape the host returns (the same elements in order,
  /// after `permutation` of the dimensions when given; empty: `shape`). Inputs: the placed tensor is the source (of shape sourceShape)
  /// transposed by `permutation` (empty: identity) and then broadcast to
  /// `shape` with numpy's rules.
  std::vector<int64_t> sourceShape;
  std::vector<int64_t> permutation;
  /// Inputs only: embedded data of a weight (row-major, sourceShape); empty
  /// for tensors the user supplies at run time.
  TensorValues data;
  /// Embedding inputs only: the graph input holding token ids. The source
  /// is then the rows of the table `data` ([rows, sourceShape.back()])
  /// those ids select, of shape sourceShape ([ids, dim] after the plan's
  /// reshapes: the bundle checks the ids' count, not their shape).
  std::string gatherIds;
  /// A gather along dimension `indexDim` (-1: none). Inputs: placed
  /// coordinate j reads source coordinate indexMap[j] (-1: zero; where a
  /// past KV cache's positions go among the cache's slots). Outputs: the
  /// returned tensor's coordinate i reads placed coordinate indexMap[i],
  /// before `permutation` and the reshape to `sourceShape`.
  int64_t indexDim = -1;
  std::vector<int64_t> indexMap;
  /// The shape `permutation`, `indexDim` and broadcasting refer to, when it
  /// is not `shape` (empty): the placed tensor is the row-major reshape of
  /// this view (attention lanes merge a KV head with its dimension after
  /// permuting them).
  std::vector<int64_t> view;
  const std::vector<int64_t> &viewShape() const {
    return view.empty() ? shape : view;
  }
  /// Inputs only: the row-major reshape of the source (of sourceShape, what
  /// the user supplies) that `permutation` permutes (empty: sourceShape).
  std::vector<int64_t> sourceView;
  const std::vector<int64_t> &permutedSource() const {
    return sourceView.empty() ? sourceShape : sourceView;
  }
  /// Inputs only: a weight or constant the program brings (from the
  /// model, not the user), also when its data was omitted (timing mode).
  bool weight = false;
};

/// One mesh op, for the per-op statistics.
struct OpInfo {
  std::string name;
  std::string kind;
  std::string algorithm;
  /// The compiler's closed-form estimate of the op's cycles, which the
  /// analytic mode reports instead of running the program; -1: none.
  int64_t estimatedCycles = -1;
};

/// A graph input the compiler bound to the values every run it supports
/// has (tfm-bind-position-inputs): the program does not read it, and a
/// run given it checks it holds these values.
struct BoundInput {
  std::string name;
  /// The run's position on, one per element (position_ids); else all ones
  /// (attention_mask).
  bool positions = false;
  /// Element `index`'s value in a run at `position`.
  int64_t valueAt(int64_t position, int64_t index) const {
    return positions ? position + index : 1;
  }
};

struct Program {
  uint32_t version = kBundleVersion;
  Target target;
  int64_t gridHeight = 0, gridWidth = 0;
  /// Logical ring positions map to physical cores by INTERLEAVE (paper
  /// Algorithm 1) on each axis of extent >= 3; otherwise identity.
  bool interleave = false;
  std::vector<Buffer> buffers;
  std::vector<Channel> channels;
  std::vector<Role> roles;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;
  std::vector<OpInfo> ops;
  /// Decode tokens the KV caches can still take before some core's SRAM
  /// overflows (-1: the program has no KV cache).
  int64_t kvCapacityTokens = -1;
  /// Compiled for the timing mode only: the weights' data was never read
  /// (never true in a bundle, which always carries its weights).
  bool weightsOmitted = false;
  /// The value of the expression variable `t` when a run binds none: the
  /// past a decode program was compiled for (0 for other programs).
  int64_t position = 0;
  /// Where the grid sits on the fabric (FabricPlacement.h): the fabric row
  /// of each grid row and column of each grid column; empty: the identity.
  /// Messages between neighbouring grid cores pay one hop per fabric hop.
  std::vector<int64_t> fabricRows, fabricCols;
  std::vector<BoundInput> boundInputs;
};

} // namespace wafer::rt

#endif // WAFER_RUNTIME_PROGRAM_H
