//===- Attention.cpp - Prefill and decode attention plans -----------------===//
//
// Prefill attention shifts keys and values around the y ring (paper
// section 4.2); decode attention combines its rows' softmax statistics and
// values with the allreduce of Allreduce.cpp. Lowered by
// passes/conversion/LowerAttention.cpp.
//
//===----------------------------------------------------------------------===//
#include "AlgorithmPlans.h"
#include "wafer/Runtime/Fabric.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::mesh;
using namespace wafer::mesh::plans;

/// Prefill over lanes: the sizes of a core's share, as the lowering's
/// kernels take them.
struct PrefillLanes {
  int64_t perRow, lanes, lanesPerHead, group, heads;
};
static PrefillLanes prefillLanes(AttentionOp op, GridAttr grid) {
  PrefillLanes p;
  p.perRow = ceilDiv(shapeOf(op.getKey())[0], grid.getHeight());
  p.lanes = localElements(op.getKey(), grid) / (p.perRow * 2);
  p.lanesPerHead = int64_t(*op.getLanesPerHead());
  p.group = shapeOf(op.getQuery())[2] / 2;
  p.heads = op.scoresPerKey(grid) / p.group;
  return p;
}

std::optional<AllreduceUse> AttentionOp::getAllreduceUse(GridAttr grid) {
  if (!isDecode()) {
    if (!getLanesPerHead())
      return std::nullopt;
    // Each step's partial scores, [rows, heads, G, rows], summed along x
    // (per lane segment).
    PrefillLanes p = prefillLanes(*this, grid);
    AllreduceUse use{true,
                     *getAllreduce(),
                     getOperation()->hasAttr("relayed"),
                     {p.perRow * p.heads * p.group * p.perRow}};
    use.segments = getLaneSegments(grid);
    return use;
  }
  // The softmax's max and sum per query head, then the weighted values;
  // with lanes, first the partial scores summed along x (per lane
  // segment).
  int64_t out = localElements(getQuery(), grid);
  int64_t heads = scoresPerKey(grid);
  AllreduceUse use{false,
                   *getAllreduce(),
                   getOperation()->hasAttr("relayed"),
                   {heads, heads, out}};
  if (getLanesPerHead()) {
    int64_t perRow = ceilDiv(shapeOf(getKey())[2], grid.getHeight());
    use.messageElements.insert(use.messageElements.begin(), heads * perRow);
    use.crossMessages = {0};
    use.segments = getLaneSegments(grid);
  }
  return use;
}

std::vector<ChannelFamily> AttentionOp::getChannelFamilies(GridAttr grid,
                                                           bool interleave) {
  if (!isDecode()) {
    std::vector<ChannelFamily> families{
        ringFamily(ChannelRole::Ring, rt::Axis::Y, grid, interleave)};
    if (std::optional<AllreduceUse> use = getAllreduceUse(grid)) {
      std::vector<ChannelFamily> sums =
          allreduceFamilies(*use, grid, interleave);
      families.insert(families.end(), sums.begin(), sums.end());
    }
    return families;
  }
  return allreduceFamilies(*getAllreduceUse(grid), grid, interleave);
}

std::vector<ScratchBuffer> AttentionOp::getScratchBuffers(GridAttr grid) {
  std::vector<ScratchBuffer> scratch;
  if (!isDecode()) {
    // Keys and values travel together; the running max and sum per query.
    int64_t kv = 2 * localElements(getKey(), grid);
    scratch.push_back({BufferRole::KeysValues, 0, kv});
    if (grid.getHeight() > 1)
      scratch.push_back({BufferRole::KeysValuesNext, 0, kv});
    if (std::optional<AllreduceUse> use = getAllreduceUse(grid)) {
      // The scores of a step and the sum, max and step factor per score
      // row.
      PrefillLanes p = prefillLanes(*this, grid);
      int64_t rows = p.perRow * p.heads * p.group;
      scratch.push_back({BufferRole::Scores, 0, rows * p.perRow});
      scratch.push_back({BufferRole::MaxAndSum, 0, 3 * rows});
      addAllreduceScratch(*use, grid, scratch);
      return scratch;
    }
    int64_t dim = shapeOf(getKey())[2];
    scratch.push_back(
        {BufferRole::MaxAndSum, 0, 2 * localElements(getQuery(), grid) / dim});
    return scratch;
  }
  AllreduceUse use = *getAllreduceUse(grid);
  int64_t heads = scoresPerKey(grid);
  scratch.push_back({BufferRole::Scores, 0,
                     heads * ceilDiv(shapeOf(getKey())[2], grid.getHeight())});
  scratch.push_back({BufferRole::Max, 0, heads});
  scratch.push_back({BufferRole::Sum, 0, heads});
  addAllreduceScratch(use, grid, scratch);
  return scratch;
}

/// Decode attention as the lowering runs it: the kernels before each
/// allreduce message, and after the last.
struct DecodeStages {
  std::vector<int64_t> before;
  int64_t after = 0;
};
static DecodeStages decodeStages(AttentionOp op, GridAttr grid,
                                 const rt::TimingModel &timing,
                                 rt::DType dtype) {
  auto rowKernel = [&](rt::Opcode kernel, int64_t m, int64_t n, int64_t k,
                       int64_t groups) {
    return cost::rowCycles(timing, kernel, m, n, k, groups, dtype);
  };
  ArrayRef<int64_t> key = shapeOf(op.getKey());
  int64_t perRow = ceilDiv(key[2], grid.getHeight());
  if (std::optional<uint64_t> lanesPerHead = op.getLanesPerHead()) {
    // Lane scores; their sum along x; the max; the exponentials and their
    // sum; the normalised scores weigh the value lanes, summed along y.
    int64_t lanes = localElements(op.getKey(), grid) / (perRow * 2);
    int64_t heads = op.scoresPerKey(grid);
    int64_t group = shapeOf(op.getQuery())[2] / 2;
    return {{rowKernel(rt::Opcode::LaneScores, lanes, int64_t(*lanesPerHead),
                       perRow, group),
             rowKernel(rt::Opcode::Reduce, heads, perRow, 0, 1),
             rowKernel(rt::Opcode::SoftmaxExp, heads, perRow, 0, 1) +
                 rowKernel(rt::Opcode::Reduce, heads, perRow, 0, 1),
             rowKernel(rt::Opcode::DivRows, heads, perRow, 0, 1) +
                 rowKernel(rt::Opcode::LaneValues, lanes,
                           int64_t(*lanesPerHead), perRow, group)},
            0};
  }
  // Scores and their max; the exponentials and their sum; the zeroed
  // output and the weighted values; then the division.
  int64_t dim = key[3];
  int64_t kvHeads = localElements(op.getKey(), grid) / (perRow * dim);
  int64_t group = shapeOf(op.getQuery())[2] / dim;
  int64_t queries = kvHeads * group;
  return {{rowKernel(rt::Opcode::AttnScores, kvHeads, dim, perRow, group) +
               rowKernel(rt::Opcode::Reduce, queries, perRow, 0, 1),
           rowKernel(rt::Opcode::SoftmaxExp, queries, perRow, 0, 1) +
               rowKernel(rt::Opcode::Reduce, queries, perRow, 0, 1),
           timing.kernelCycles(localElements(op.getQuery(), grid), dtype) +
               rowKernel(rt::Opcode::AttnValues, kvHeads, dim, perRow, group)},
          rowKernel(rt::Opcode::DivRows, queries, dim, 0, 1)};
}

/// Prefill attention as the lowering runs it; the scores' sum along x
/// (over lanes) is left out.
static cost::RingAttention prefillStages(AttentionOp op, GridAttr grid,
                                         const rt::TimingModel &timing,
                                         bool interleave) {
  rt::DType dtype = dtypeOf(op.getResult());
  auto kernel = [&](int64_t work) { return timing.kernelCycles(work, dtype); };
  auto rowKernel = [&](rt::Opcode kernel, int64_t m, int64_t n, int64_t k,
                       int64_t groups) {
    return cost::rowCycles(timing, kernel, m, n, k, groups, dtype);
  };
  int64_t tile = localElements(op.getKey(), grid);
  int64_t out = localElements(op.getQuery(), grid);
  cost::RingAttention a;
  a.interleave = interleave;
  a.dtype = dtype;
  a.tileElements = 2 * tile;
  if (op.getLanesPerHead()) {
    // Copy keys and values, zero the output and the statistics (f32,
    // ScratchBuffer::elementType); each step the lane scores, then the
    // statistics and the values; the division.
    PrefillLanes p = prefillLanes(op, grid);
    int64_t rows = p.perRow * p.heads * p.group;
    a.before = 2 * kernel(tile) + kernel(out) +
               timing.kernelCycles(3 * rows, rt::DType::F32);
    a.score = rowKernel(rt::Opcode::LaneFlashScores, p.lanes, p.lanesPerHead,
                        p.perRow, p.group);
    a.update =
        rowKernel(rt::Opcode::FlashStats, p.heads * p.group, 0, p.perRow, 1) +
        rowKernel(rt::Opcode::LaneFlashValues, p.lanes, p.lanesPerHead,
                  p.perRow, p.group);
    a.after = rowKernel(rt::Opcode::LaneDivRows, p.lanes, p.lanesPerHead,
                        p.perRow, p.group);
    return a;
  }
  // Copy keys and values, zero the output and the statistics; each step a
  // flash step; the division.
  ArrayRef<int64_t> key = shapeOf(op.getKey());
  int64_t dim = key[2], perRow = ceilDiv(key[0], grid.getHeight());
  int64_t kvHeads = tile / (perRow * dim);
  int64_t group = shapeOf(op.getQuery())[2] / dim;
  a.before = 2 * kernel(tile) + kernel(out) +
             timing.kernelCycles(2 * out / dim, rt::DType::F32);
  a.score = rowKernel(rt::Opcode::FlashStep, perRow, dim, kvHeads, group);
  a.after = rowKernel(rt::Opcode::DivRows, perRow * kvHeads * group, dim, 0, 1);
  return a;
}

int64_t AttentionOp::estimateCycles(GridAttr grid,
                                    const rt::TimingModel &timing,
                                    bool interleave) {
  rt::DType dtype = dtypeOf(getResult());
  int64_t h = grid.getHeight();
  if (!isDecode()) {
    // H steps with H - 1 shifts of the keys and values between them; over
    // lanes each step sums its scores along x.
    cost::RingAttention a = prefillStages(*this, grid, timing, interleave);
    int64_t step = a.score + a.update;
    if (getLanesPerHead())
      step += allreduceCycles(*getAllreduceUse(grid), 0, grid, timing,
                              interleave, dtype);
    return a.before +
           cost::ringShiftCycles(timing, h - 1, a.tileElements, dtype, h,
                                 interleave, step, 0, 0) +
           step + a.after;
  }
  AllreduceUse use = *getAllreduceUse(grid);
  DecodeStages stages = decodeStages(*this, grid, timing, dtype);
  int64_t cycles = stages.after;
  for (unsigned message = 0; message < use.messageElements.size(); ++message)
    cycles += stages.before[message] +
              allreduceCycles(use, message, grid, timing, interleave, dtype);
  return cycles;
}

void AttentionOp::advanceClock(cost::CoreClock &clock, GridAttr grid,
                               const rt::TimingModel &timing, bool interleave) {
  if (!isDecode()) {
    // Simulated with the ring ops around it where its scores' sum along x
    // (over lanes) can be; else every core waits for the last.
    int64_t closedForm = estimateCycles(grid, timing, interleave);
    cost::RingAttention attention =
        prefillStages(*this, grid, timing, interleave);
    if (getLanesPerHead()) {
      attention.scores = lineAllreduce(*getAllreduceUse(grid), grid, timing,
                                       interleave, dtypeOf(getResult()), 0, 0);
      if (!attention.scores) {
        clock.barrier(closedForm);
        return;
      }
    }
    cost::advanceRingAttention(timing, attention, closedForm, clock);
    return;
  }
  // Each core runs the kernels before a message from its own time, and
  // each line's (or lane segment's) allreduce starts from its members'.
  rt::DType dtype = dtypeOf(getResult());
  AllreduceUse use = *getAllreduceUse(grid);
  DecodeStages stages = decodeStages(*this, grid, timing, dtype);
  for (unsigned message = 0; message < use.messageElements.size(); ++message) {
    clock.local(stages.before[message]);
    bool alongX = use.messageAlongX(message);
    std::optional<AxisSegments> segments = use.segmentsAlong(alongX);
    if (!segments) {
      clock.lines(alongX, [&](std::vector<int64_t> &times) {
        allreduceCycles(use, message, grid, timing, interleave, dtype, &times);
      });
      continue;
    }
    // The segments cover the first used() logical columns and each ends
    // together; the columns past them hold no lanes and skip this message.
    int64_t w = grid.getWidth();
    std::vector<int64_t> physical = rt::ringOrder(w, interleave);
    std::vector<int64_t> times = clock.perCore();
    if (times.empty())
      times.assign(grid.getHeight() * w, clock.latest());
    std::vector<int64_t> segment;
    for (int64_t row = 0; row < grid.getHeight(); ++row) {
      int64_t *line = times.data() + row * w;
      for (int64_t first = 0; first < segments->used();
           first += segments->columns) {
        int64_t last = std::min(first + segments->columns, segments->used());
        segment.clear();
        for (int64_t x = first; x < last; ++x)
          segment.push_back(line[physical[x]]);
        allreduceCycles(use, message, grid, timing, interleave, dtype,
                        &segment);
        for (int64_t x = first; x < last; ++x)
          line[physical[x]] = segment[x - first];
      }
    }
    clock.set(std::move(times));
  }
  clock.local(stages.after);
}
