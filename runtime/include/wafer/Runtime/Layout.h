//===- Layout.h - Placing host tensors on the grid --------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_LAYOUT_H
#define WAFER_RUNTIME_LAYOUT_H

#include "wafer/Runtime/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <vector>

namespace wafer::rt {

/// Whether some dimension of `layout` is split along `axis`; along a grid
/// axis no dimension is split along, the cores hold replicas.
inline bool splitAlong(const std::vector<LayoutDim> &layout, Axis axis) {
  for (const LayoutDim &d : layout)
    if (d.axis == axis)
      return true;
  return false;
}

/// Elements one core holds for a tensor of `shape` in `layout` (Program.h).
int64_t localElements(const std::vector<int64_t> &shape,
                      const std::vector<LayoutDim> &layout, int64_t gridH,
                      int64_t gridW);

/// Calls visit(localIndex, globalIndex) for every element of the local
/// buffer of the core at logical position (lx, ly); globalIndex is the
/// row-major index into `shape`, or -1 for padding.
void forEachLocalElement(
    const std::vector<int64_t> &shape, const std::vector<LayoutDim> &layout,
    int64_t gridH, int64_t gridW, int64_t lx, int64_t ly,
    llvm::function_ref<void(int64_t localIndex, int64_t globalIndex)> visit);

/// Calls visit(localStart, globalStart, length) for the local buffer of the
/// core at (lx, ly) in runs: local elements localStart + i hold global
/// element globalStart + i (row-major in `shape`) for i < length, or
/// padding when globalStart is -1. The runs cover the buffer in order.
void forEachLocalRun(
    const std::vector<int64_t> &shape, const std::vector<LayoutDim> &layout,
    int64_t gridH, int64_t gridW, int64_t lx, int64_t ly,
    llvm::function_ref<void(int64_t localStart, int64_t globalStart,
                            int64_t length)>
        visit);

/// The row-major index into the source of a host input for element
/// `placedIndex` of the placed tensor (applies the permutation and the
/// broadcast, or padding, of HostTensor); -1 for padding.
int64_t sourceIndex(const HostTensor &tensor, int64_t placedIndex);

/// sourceIndex of every placed element, in placed order, as runs: calls
/// visit(placed, length, source, stride) meaning that placed elements
/// [placed, placed + length) read source elements source + i * stride
/// (source -1: padding). No division per element.
void forEachSourceRun(const HostTensor &tensor,
                      llvm::function_ref<void(int64_t placed, int64_t length,
                                              int64_t source, int64_t stride)>
                          visit);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_LAYOUT_H
