//===- DataPath.h - The element data of every core --------------*- C++ -*-===//
//
// The room of the emulator that holds numbers: each core's buffer storage
// and the arithmetic of the local kernels. The scheduler decides when a
// kernel runs and on which storage slots; the data path only computes, so
// a mode without element data replaces this room and nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_EMULATOR_DATAPATH_H
#define WAFER_RUNTIME_EMULATOR_DATAPATH_H

#include "RoleCode.h"

#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace wafer::rt::emulator {

/// A message's values as the sender's buffer held them: its bytes in its
/// type (null in the timing mode).
struct PayloadValues {
  DType dtype;
  std::vector<std::byte> bytes;
};
using Payload = std::shared_ptr<const PayloadValues>;

/// The storage slots a kernel reads and writes: out, in1, in2, in3 of its
/// Op resolved on one core (-1: no operand).
struct KernelSlots {
  int32_t out = -1, in1 = -1, in2 = -1, in3 = -1;
};

/// The values of a kernel's expressions on the running core.
struct KernelValues {
  int64_t expr = 0, expr2 = 0;
};

class DataPath {
public:
  virtual ~DataPath();
  /// Storage for `cores` cores, one slot per program buffer (an error when
  /// the host has not the memory).
  virtual llvm::Error allocate(int64_t cores) = 0;
  /// Runs a local kernel (every Step that computes: Gemm .. FlashStep,
  /// Zero, Rotate, Copy) on core `core`; returns its work in operations.
  virtual int64_t kernel(int32_t core, const Op &op, const KernelSlots &slots,
                         const KernelValues &values) = 0;
  /// The values of a slot, as a message carries them.
  virtual Payload read(int32_t core, int32_t slot, int64_t elements) = 0;
  /// Stores a received message into a slot of buffer `buffer`'s type.
  virtual void write(int32_t core, int32_t slot, int32_t buffer,
                     const Payload &payload) = 0;
  /// Host access to a slot's storage (placement, readback, handover): its
  /// bytes as the core's SRAM holds them, f16 values as IEEE binary16.
  virtual std::byte *storage(int32_t core, int32_t slot) = 0;
};

/// The work of a kernel in operations, which its cycles are priced from
/// and DataPath::kernel returns; it depends on sizes and expression values
/// only, never on data.
int64_t kernelWork(const Program &p, const Op &op, const KernelValues &values);

/// Values of `dtype` in storage to floats, and floats to storage (f16:
/// rounded to nearest even).
void loadValues(DType dtype, const std::byte *from, float *to, int64_t count);
void storeValues(DType dtype, const float *from, std::byte *to, int64_t count);

/// Real element data, stored as the SRAM stores it (f16 buffers in two
/// bytes a value); the kernels compute in f32 and round each result to
/// its buffer's type.
std::unique_ptr<DataPath> makeFunctionalDataPath(const Program &program);

/// No element data at all (the timing mode): kernels only count their work,
/// messages carry no values, and storage() is null.
std::unique_ptr<DataPath> makeTimingDataPath(const Program &program);

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_DATAPATH_H
