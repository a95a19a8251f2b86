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

#include <cstdint>
#include <memory>
#include <vector>

namespace wafer::rt::emulator {

/// A message's values as the sender's buffer held them.
using Payload = std::shared_ptr<const std::vector<float>>;

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
  /// Stores a received message, sent from a buffer of type `sentAs`, into
  /// a slot of buffer `buffer`'s type.
  virtual void write(int32_t core, int32_t slot, int32_t buffer,
                     const Payload &payload, DType sentAs) = 0;
  /// Host access to a slot's storage (placement and readback).
  virtual float *storage(int32_t core, int32_t slot) = 0;
};

/// Real element data: f32 storage, f16 buffers rounded after each write.
std::unique_ptr<DataPath> makeFunctionalDataPath(const Program &program);

/// No element data at all (the timing mode): kernels only count their work,
/// messages carry no values, and storage() is null.
std::unique_ptr<DataPath> makeTimingDataPath(const Program &program);

/// Rounds values just written into a buffer of `dtype` to its precision.
void roundToType(DType dtype, float *values, int64_t count);

} // namespace wafer::rt::emulator

#endif // WAFER_RUNTIME_EMULATOR_DATAPATH_H
