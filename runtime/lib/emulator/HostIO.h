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

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace wafer::rt::emulator {

/// A core's logical ring positions, as INTERLEAVE (or identity) places them.
struct GridPositions {
  std::vector<int64_t> posX, posY;     // physical -> logical
  std::vector<int64_t> orderX, orderY; // logical -> physical
};

/// Checks the user's inputs against the program and writes every input
/// into its buffer on every core.
llvm::Error placeInputs(const Program &p, const NDArrayMap &inputs,
                        const GridPositions &grid, DataPath &data);

/// Gathers the program's outputs; `slotOf(core, buffer)` is where the
/// buffer's storage ended up on the core.
NDArrayMap readOutputs(const Program &p, const GridPositions &grid,
                       DataPath &data,
                       llvm::function_ref<int32_t(int32_t, int32_t)> slotOf);

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_HOSTIO_H
