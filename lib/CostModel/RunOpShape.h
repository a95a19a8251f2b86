//===- RunOpShape.h - One op of a run, as its simulation asks it -*- C++
//-*-===//
//
// Private to lib/CostModel: what each core does in each op of a run of
// ring ops (RingRuns.cpp), by its ring position or its place in a tree.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_LIB_COSTMODEL_RUNOPSHAPE_H
#define WAFER_LIB_COSTMODEL_RUNOPSHAPE_H

#include "Schedules.h"
#include "wafer/Runtime/Fabric.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <variant>
#include <vector>

namespace wafer::cost {

/// What one core does in one step of a ring op: send the operands it
/// shifts (A, or the relayout's tile along x, is operand 0; B, or the
/// tile along y, 1), work `overlapped` cycles, receive each operand and
/// work `afterReceive` after it, then `after`.
struct RingStep {
  bool shifts[2] = {false, false};
  int64_t overlapped = 0, afterReceive[2] = {0, 0}, after = 0;
};

/// One op of a run, as the simulation asks it core by core.
class RunOpShape {
public:
  RunOpShape(const rt::TimingModel &timing, const RunOp &op, int64_t h,
             int64_t w)
      : op(op) {
    extents[0] = w;
    extents[1] = h;
    bool interleave = false;
    int64_t tiles[2] = {0, 0};
    rt::DType dtype = rt::DType::F32;
    if (auto *gemm = std::get_if<MeshGemm>(&op)) {
      const GemmTiling &t = gemm->tiling;
      shiftsAt[0] = w > 1 || t.aSlots > 1;
      shiftsAt[1] = h > 1 || t.bSlots > 1;
      tiles[0] = t.aSlots * t.mt * t.kt;
      tiles[1] = t.bSlots * t.kt * t.nt;
      interleave = gemm->interleave;
      dtype = gemm->dtype;
      for (int k : {0, 1})
        if ((k == 0 ? t.aSlots : t.bSlots) > 1)
          rotations[k] = timing.kernelCycles(tiles[k], dtype);
    } else if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      int k = relayout->alongX ? 0 : 1;
      shiftsAt[k] = true;
      tiles[k] = relayout->tileElements;
      interleave = relayout->interleave;
      dtype = relayout->dtype;
    } else if (auto *attention = std::get_if<RingAttention>(&op)) {
      shiftsAt[1] = true;
      tiles[1] = attention->tileElements;
      interleave = attention->interleave;
      dtype = attention->dtype;
    }
    if (const LineAllreduce *allreduce = lineAllreduce()) {
      // Each tree's positions by their physical index along the line.
      tree.assign(allreduce->alongX ? w : h, {});
      treeOf.assign(tree.size(), -1);
      for (auto [index, one] : llvm::enumerate(allreduce->trees)) {
        auto physical = [&](int64_t q) { return q < 0 ? q : one.positions[q]; };
        std::vector<TreePosition> local =
            treePositions(int64_t(one.positions.size()), one.root, one.levels);
        for (auto [q, part] : llvm::enumerate(local)) {
          TreePosition &position = tree[one.positions[q]];
          for (int64_t from : part.from)
            position.from.push_back(physical(from));
          position.relayFrom = physical(part.relayFrom);
          position.to = physical(part.to);
          treeOf[one.positions[q]] = int64_t(index);
        }
        treeRounds = std::max(treeRounds, int64_t(one.levels.size()) + 2);
      }
      treeOccupancy = timing.occupancy(allreduce->words);
    }
    for (int k : {0, 1}) {
      occupancies[k] =
          timing.occupancy(rt::TimingModel::words(tiles[k], dtype));
      order[k] = rt::ringOrder(extents[k], interleave);
      positions[k] = rt::ringPositions(extents[k], interleave);
    }
  }

  /// The op's allreduce along lines, if any: the op itself, or prefill
  /// attention's sum of its scores.
  const LineAllreduce *lineAllreduce() const {
    if (auto *attention = std::get_if<RingAttention>(&op))
      return attention->scores ? &*attention->scores : nullptr;
    return std::get_if<LineAllreduce>(&op);
  }

  /// The steps on the core that takes the most.
  int64_t rounds() const {
    if (std::holds_alternative<RingAttention>(op))
      return extents[1] * (treeRounds + 2);
    if (std::holds_alternative<LineAllreduce>(op))
      return treeRounds;
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return std::max(extents[0], extents[1]) - 1 + gemm->tiling.blocks - 1;
    if (auto *relayout = std::get_if<RingRelayout>(&op))
      return extents[relayout->alongX ? 0 : 1] - 1;
    return 0;
  }

  /// The core at ring positions (x, y)'s steps.
  int64_t steps(int64_t x, int64_t y) const {
    if (auto *gemm = std::get_if<MeshGemm>(&op)) {
      // Alignment: A shifts y times, B x times, both at once while both
      // shift; then the compute-shift steps.
      int64_t both = shiftsAt[0] && shiftsAt[1] ? std::min(x, y) : 0;
      return (shiftsAt[0] ? y : 0) + (shiftsAt[1] ? x : 0) - both +
             gemm->tiling.blocks - 1;
    }
    return rounds();
  }

  /// The core at ring positions (x, y)'s work before its first step.
  int64_t before(int64_t x, int64_t y) const {
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return gemm->before;
    if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      int64_t position = relayout->alongX ? x : y;
      return relayout->before + relayout->keep(position, position);
    }
    if (auto *allreduce = std::get_if<LineAllreduce>(&op))
      return allreduce->before;
    if (auto *attention = std::get_if<RingAttention>(&op))
      return attention->before;
    return std::get<LocalWork>(op).cycles;
  }

  /// Each core's work after its last step: MeshGEMM's last multiply, the
  /// work after an allreduce.
  int64_t finish() const {
    if (auto *gemm = std::get_if<MeshGemm>(&op))
      return gemm->multiply;
    if (auto *allreduce = std::get_if<LineAllreduce>(&op))
      return allreduce->after;
    if (auto *attention = std::get_if<RingAttention>(&op))
      return attention->after;
    return 0;
  }

  /// The core at ring positions (x, y)'s step s.
  RingStep step(int64_t x, int64_t y, int64_t s) const {
    RingStep step;
    if (auto *relayout = std::get_if<RingRelayout>(&op)) {
      // After s + 1 shifts a core holds the tile of position + s + 1.
      int64_t k = relayout->alongX ? 0 : 1, position = k == 0 ? x : y;
      step.shifts[k] = true;
      step.after = relayout->keep(position, (position + s + 1) % extents[k]);
      return step;
    }
    const MeshGemm &gemm = std::get<MeshGemm>(op);
    int64_t both = shiftsAt[0] && shiftsAt[1] ? std::min(x, y) : 0;
    int64_t onlyA = shiftsAt[0] ? y - both : 0,
            onlyB = shiftsAt[1] ? x - both : 0;
    if (s < both) {
      step.shifts[0] = step.shifts[1] = true;
    } else if (s < both + onlyA) {
      step.shifts[0] = true;
    } else if (s < both + onlyA + onlyB) {
      step.shifts[1] = true;
    } else {
      // A compute-shift step: the multiply overlaps the transfers.
      step.shifts[0] = shiftsAt[0];
      step.shifts[1] = shiftsAt[1];
      step.overlapped = gemm.multiply;
    }
    // The wrap-around (or a ring of one) rotates the slots.
    for (int k : {0, 1}) {
      int64_t position = k == 0 ? x : y;
      if (step.shifts[k] && (extents[k] == 1 || position == extents[k] - 1))
        step.afterReceive[k] = rotations[k];
    }
    return step;
  }

  int64_t extents[2], occupancies[2];
  /// Per axis: the physical index of each ring position, and the ring
  /// position of each physical index.
  std::vector<int64_t> order[2], positions[2];
  /// An allreduce's trees: each position's part, by physical indices along
  /// the line, and the tree it is in (-1: none); the messages' occupancy of
  /// a link or ramp, and the rounds of the deepest tree.
  std::vector<TreePosition> tree;
  std::vector<int64_t> treeOf;
  int64_t treeOccupancy = 0, treeRounds = 0;

private:
  const RunOp &op;
  bool shiftsAt[2] = {false, false};
  int64_t rotations[2] = {0, 0};
};

} // namespace wafer::cost

#endif // WAFER_LIB_COSTMODEL_RUNOPSHAPE_H
