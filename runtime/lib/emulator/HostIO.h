//===- HostIO.h - What the host places on the grid and reads back -*- C++ -*-//
//
// Inputs (user arrays, weights, embedding rows selected by token ids) are
// split over the cores by their layouts before the run; outputs are gathered
// from the cores after it, with the host-side gathers, transposes and
// reshapes the program records.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_HOSTIO_H
#define WAFER_RUNTIME_EMULATOR_HOSTIO_H

#include "DataPath.h"

#include "wafer/Runtime/NDArray.h"
#include "wafer/Runtime/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wafer::rt::emulator {

/// A core's logical ring positions, as INTERLEAVE (or identity) places them.
struct GridPositions {
  std::vector<int64_t> posX, posY;     // physical -> logical
  std::vector<int64_t> orderX, orderY; // logical -> physical
};

/// Where a buffer's storage is on a core: slotOf(core, buffer).
using SlotOf = llvm::function_ref<int32_t(int32_t, int32_t)>;

/// Checks that the bound inputs (Program::boundInputs) among `inputs` hold
/// the values the program was compiled for, at `position`.
llvm::Error checkBoundInputs(const Program &p, const NDArrayMap &inputs,
                             int64_t position);

/// Checks the user's inputs against the program and writes every input
/// into its buffer on every core, except those `resident` marks (by index
/// into Program::inputs: values an earlier program left in SRAM); with
/// `onlyGiven` (a session's later runs), only the user inputs present in
/// `inputs` (the others keep their values). Up to `threads` inputs are
/// written at once.
llvm::Error placeInputs(const Program &p, const NDArrayMap &inputs,
                        const GridPositions &grid, DataPath &data,
                        SlotOf slotOf, bool onlyGiven,
                        const std::vector<bool> &resident, unsigned threads);

/// Gathers the program's outputs named in `names` (empty: all of them).
NDArrayMap readOutputs(const Program &p, const GridPositions &grid,
                       DataPath &data, SlotOf slotOf,
                       llvm::ArrayRef<std::string> names);

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_HOSTIO_H
