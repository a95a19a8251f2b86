//===- Layout.cpp - Placing host tensors on the grid ----------------------===//
#include "wafer/Runtime/Layout.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace wafer::rt {

namespace {

/// How one tensor dimension maps onto the local buffer of one core.
struct DimPlacement {
  int64_t size = 0;   // shape_d
  int64_t slots = 1;  // blocks / G
  int64_t tile = 0;   // ceil(shape_d / blocks)
  int64_t extent = 1; // G: grid extent of the axis (1 when kept whole)
  int64_t pos = 0;    // the core's logical position on that axis
  int64_t blocks = 1;
  bool balanced = false;
  int64_t parts = 1;

  int64_t start(int64_t block) const {
    return blockStart(size, blocks, balanced, block, parts);
  }
};

llvm::SmallVector<DimPlacement, 4>
placeDims(const std::vector<int64_t> &shape,
          const std::vector<LayoutDim> &layout, int64_t gridH, int64_t gridW,
          int64_t lx, int64_t ly) {
  llvm::SmallVector<DimPlacement, 4> dims(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    LayoutDim ld = d < layout.size() ? layout[d] : LayoutDim{};
    int64_t blocks = std::max<int64_t>(ld.blocks, 1);
    DimPlacement &p = dims[d];
    p.size = std::max<int64_t>(shape[d], 0);
    if (ld.axis == Axis::X) {
      p.extent = std::max<int64_t>(gridW, 1);
      p.pos = lx;
    } else if (ld.axis == Axis::Y) {
      p.extent = std::max<int64_t>(gridH, 1);
      p.pos = ly;
    }
    p.slots = std::max<int64_t>(blocks / p.extent, 1);
    p.tile = (p.size + blocks - 1) / blocks;
    p.blocks = blocks;
    p.balanced = ld.balanced;
    p.parts = ld.parts;
  }
  return dims;
}

} // namespace

int64_t localElements(const std::vector<int64_t> &shape,
                      const std::vector<LayoutDim> &layout, int64_t gridH,
                      int64_t gridW) {
  int64_t n = 1;
  for (const DimPlacement &p : placeDims(shape, layout, gridH, gridW, 0, 0))
    n *= p.slots * p.tile;
  return n;
}

void forEachLocalRun(
    const std::vector<int64_t> &shape, const std::vector<LayoutDim> &layout,
    int64_t gridH, int64_t gridW, int64_t lx, int64_t ly,
    llvm::function_ref<void(int64_t localStart, int64_t globalStart,
                            int64_t length)>
        visit) {
  llvm::SmallVector<DimPlacement, 4> dims =
      placeDims(shape, layout, gridH, gridW, lx, ly);
  size_t rank = dims.size();
  if (rank == 0) {
    visit(0, 0, 1);
    return;
  }
  // The local buffer is [slots_0..slots_{r-1}, tile_0..tile_{r-1}]; walk it
  // with an odometer whose last digit turns fastest, a whole tile of the
  // last dimension (one contiguous run of the source) at a time.
  size_t digits = 2 * rank - 1;
  llvm::SmallVector<int64_t, 8> extent(digits), digit(digits, 0);
  int64_t runs = 1;
  for (size_t d = 0; d < rank; ++d) {
    extent[d] = dims[d].slots;
    if (d + 1 < rank)
      extent[rank + d] = dims[d].tile;
    runs *= dims[d].slots * (d + 1 < rank ? dims[d].tile : 1);
  }
  const DimPlacement &last = dims[rank - 1];
  int64_t tile = last.tile;
  // An empty buffer has no runs (however many its other dimensions hold).
  if (tile == 0)
    return;
  for (int64_t run = 0, local = 0; run < runs; ++run, local += tile) {
    // Coordinates past the end of their block are padding.
    int64_t global = 0, valid = 0;
    for (size_t d = 0; d < rank && global >= 0; ++d) {
      const DimPlacement &p = dims[d];
      int64_t block = digit[d] * p.extent + p.pos;
      int64_t start = p.start(block), end = p.start(block + 1);
      int64_t coord = start + (d + 1 < rank ? digit[rank + d] : 0);
      global = coord < end || d + 1 == rank ? global * p.size + coord : -1;
      valid = end - start;
    }
    if (global < 0)
      valid = 0;
    if (valid > 0)
      visit(local, global, valid);
    if (valid < tile)
      visit(local + valid, -1, tile - valid);
    for (size_t i = digits; i-- > 0;) {
      if (++digit[i] < extent[i])
        break;
      digit[i] = 0;
    }
  }
}

void forEachLocalElement(
    const std::vector<int64_t> &shape, const std::vector<LayoutDim> &layout,
    int64_t gridH, int64_t gridW, int64_t lx, int64_t ly,
    llvm::function_ref<void(int64_t localIndex, int64_t globalIndex)> visit) {
  forEachLocalRun(shape, layout, gridH, gridW, lx, ly,
                  [&](int64_t local, int64_t global, int64_t length) {
                    for (int64_t i = 0; i < length; ++i)
                      visit(local + i, global < 0 ? -1 : global + i);
                  });
}

int64_t sourceIndex(const HostTensor &tensor, int64_t placedIndex) {
  // The placed tensor is the row-major reshape of the view.
  const std::vector<int64_t> &shape = tensor.viewShape();
  const std::vector<int64_t> &src = tensor.permutedSource();
  size_t rank = shape.size(), srcRank = src.size();
  // Coordinates of the placed element, last dimension first.
  llvm::SmallVector<int64_t, 8> coord(rank);
  for (size_t d = rank; d-- > 0;) {
    int64_t extent = std::max<int64_t>(shape[d], 1);
    coord[d] = placedIndex % extent;
    placedIndex /= extent;
  }
  // The transposed source is right-aligned against the placed shape; its
  // dimension j is source dimension perm[j], broadcast when of size 1.
  llvm::SmallVector<int64_t, 8> srcCoord(srcRank, 0);
  size_t lead = rank >= srcRank ? rank - srcRank : 0;
  for (size_t j = 0; j < srcRank && lead + j < rank; ++j) {
    size_t s = tensor.permutation.empty() ? j : size_t(tensor.permutation[j]);
    if (s >= srcRank)
      continue;
    if (int64_t(j) == tensor.indexDim) {
      srcCoord[s] = tensor.indexMap[coord[lead + j]];
      if (srcCoord[s] < 0)
        return -1;
    } else if (src[s] != 1) {
      srcCoord[s] = coord[lead + j];
    }
  }
  int64_t index = 0;
  for (size_t s = 0; s < srcRank; ++s)
    index = index * src[s] + srcCoord[s];
  return index;
}

void forEachSourceRun(
    const HostTensor &tensor,
    llvm::function_ref<void(int64_t, int64_t, int64_t, int64_t)> visit) {
  // sourceIndex's mapping, as one source stride per placed dimension (0:
  // broadcast or unmapped) plus the gathered dimension, if any.
  const std::vector<int64_t> &shape = tensor.viewShape();
  const std::vector<int64_t> &src = tensor.permutedSource();
  size_t rank = shape.size(), srcRank = src.size();
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= std::max<int64_t>(extent, 0);
  if (count == 0)
    return;
  if (rank == 0)
    return visit(0, 1, 0, 0);
  std::vector<int64_t> srcStride(srcRank, 1), stride(rank, 0);
  for (size_t s = srcRank; s-- > 1;)
    srcStride[s - 1] = srcStride[s] * src[s];
  int64_t gathered = -1; // the placed dimension indexMap applies to
  size_t lead = rank >= srcRank ? rank - srcRank : 0;
  for (size_t j = 0; j < srcRank && lead + j < rank; ++j) {
    size_t s = tensor.permutation.empty() ? j : size_t(tensor.permutation[j]);
    if (s >= srcRank)
      continue;
    stride[lead + j] = srcStride[s];
    if (int64_t(j) == tensor.indexDim)
      gathered = int64_t(lead + j);
    else if (src[s] == 1)
      stride[lead + j] = 0;
  }
  // Odometer over all dimensions but the last, which is the run.
  size_t inner = rank - 1;
  int64_t length = shape[inner];
  std::vector<int64_t> coord(rank, 0);
  for (int64_t placed = 0; placed < count; placed += length) {
    int64_t base = 0;
    bool padding = false;
    for (size_t d = 0; d < inner; ++d) {
      int64_t c = coord[d];
      if (int64_t(d) == gathered) {
        c = tensor.indexMap[c];
        padding |= c < 0;
      }
      base += c * stride[d];
    }
    if (padding) {
      visit(placed, length, -1, 0);
    } else if (int64_t(inner) == gathered) {
      for (int64_t i = 0; i < length; ++i) {
        int64_t at = tensor.indexMap[i];
        visit(placed + i, 1, at < 0 ? -1 : base + at * stride[inner], 0);
      }
    } else {
      visit(placed, length, base, stride[inner]);
    }
    for (size_t d = inner; d-- > 0;) {
      if (++coord[d] < shape[d])
        break;
      coord[d] = 0;
    }
  }
}

} // namespace wafer::rt
