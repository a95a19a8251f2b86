//===- DataPath.cpp - The element data of every core ----------------------===//
#include "DataPath.h"

#include "wafer/Runtime/RowKernels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Memory.h"

#include <algorithm>
#include <cstring>

#include <sys/mman.h>

namespace wafer::rt::emulator {

DataPath::~DataPath() = default;

// Empty operands may come with null pointers, which memcpy must not see.
void loadValues(DType dtype, const std::byte *from, float *to, int64_t count) {
  if (count <= 0)
    return;
  if (dtype == DType::F16)
    halvesToFloats(reinterpret_cast<const uint16_t *>(from), to, count);
  else
    std::memcpy(to, from, size_t(count) * sizeof(float));
}

void storeValues(DType dtype, const float *from, std::byte *to, int64_t count) {
  if (count <= 0)
    return;
  if (dtype == DType::F16)
    floatsToHalves(from, reinterpret_cast<uint16_t *>(to), count);
  else
    std::memmove(to, from, size_t(count) * sizeof(float));
}

namespace {

/// The row kernels' operands; the pointers only when there is data.
kernels::RowArgs rowArgs(const Program &p, const Op &op,
                         const KernelValues &values) {
  kernels::RowArgs args;
  args.m = op.m, args.groups = op.groups, args.k = op.k, args.n = op.n;
  args.scalar = op.scalar;
  args.length = op.length;
  args.parts = op.parts;
  args.expr = values.expr;
  args.expr2 = values.expr2;
  args.outElements = p.buffers[op.out].elements;
  args.aElements = op.in1 < 0 ? 0 : p.buffers[op.in1].elements;
  return args;
}

/// A kernel's operands as floats: f32 slots where they lie, f16 slots
/// converted into per-thread scratch (one copy per slot, so an operand that
/// is also the result stays one array). finish() stores the result back,
/// which rounds it to f16.
class FloatOperands {
public:
  FloatOperands(const Program &p, std::byte *core,
                const std::vector<int64_t> &slotOffset)
      : p(p), core(core), slotOffset(slotOffset) {}

  /// An operand the kernel reads (`load`) or only writes.
  float *operator()(int32_t slot, bool load = true) {
    if (slot < 0)
      return nullptr;
    const Buffer &b = p.buffers[slot];
    std::byte *bytes = core + slotOffset[slot];
    if (b.dtype == DType::F32)
      return reinterpret_cast<float *>(bytes);
    for (int i = 0; i < used; ++i)
      if (held[i] == slot)
        return scratch[i].data();
    std::vector<float> &values = scratch[used];
    held[used++] = slot;
    values.resize(size_t(b.elements));
    if (load)
      loadValues(DType::F16, bytes, values.data(), b.elements);
    return values.data();
  }

  /// Stores the first `count` values of `slot` (an f16 slot's scratch).
  void finish(int32_t slot, int64_t count) {
    if (p.buffers[slot].dtype == DType::F32)
      return;
    for (int i = 0; i < used; ++i)
      if (held[i] == slot)
        storeValues(DType::F16, scratch[i].data(), core + slotOffset[slot],
                    count);
  }

private:
  const Program &p;
  std::byte *core;
  const std::vector<int64_t> &slotOffset;
  // Kernels run on several threads at once; each has its scratch, which
  // keeps its capacity from kernel to kernel.
  static thread_local std::vector<float> scratch[4];
  int32_t held[4] = {-1, -1, -1, -1};
  int used = 0;
};

thread_local std::vector<float> FloatOperands::scratch[4];

class FunctionalDataPath final : public DataPath {
public:
  // A core's storage mirrors its SRAM byte for byte: buffer b's values
  // start at b.offsetBytes, so buffers the memory plan overlaps (disjoint
  // lifetimes) share storage as they share SRAM.
  explicit FunctionalDataPath(const Program &p) : p(p) {
    for (const Buffer &b : p.buffers) {
      slotOffset.push_back(b.offsetBytes);
      perCore =
          std::max(perCore, b.offsetBytes + b.elements * bytesOf(b.dtype));
    }
    // f32 values stay aligned in every core (offsets are multiples of 4).
    perCore = llvm::alignTo(perCore, 8);
  }

  // Fresh anonymous pages rather than a vector: they come zeroed, so the
  // storage is not written twice. (Huge pages were tried: compaction made
  // their faults slower or faster by 4x from run to run.)
  llvm::Error allocate(int64_t cores) override {
    size_t bytes = std::max<size_t>(size_t(cores * perCore), 1);
    std::error_code ec;
    data = llvm::sys::OwningMemoryBlock(llvm::sys::Memory::allocateMappedMemory(
        bytes, nullptr, llvm::sys::Memory::MF_READ | llvm::sys::Memory::MF_WRITE,
        ec));
    if (ec)
      return llvm::createStringError(
          ec, llvm::formatv("cannot allocate {0} bytes for the element data "
                            "of {1} cores (the timing mode needs none)",
                            bytes, cores)
                  .str());
#ifdef MADV_POPULATE_WRITE
    // Every page is written (inputs, kernels); faulting them in with one
    // call is cheaper than a trap per page. Without the call (older
    // kernels), they fault in as they are written.
    (void)madvise(data.base(), bytes, MADV_POPULATE_WRITE);
#endif
    return llvm::Error::success();
  }

  std::byte *storage(int32_t core, int32_t slot) override {
    return coreBytes(core) + slotOffset[slot];
  }

  Payload read(int32_t core, int32_t slot, int64_t elements) override {
    DType dtype = p.buffers[slot].dtype;
    const std::byte *from = storage(core, slot);
    return std::make_shared<const PayloadValues>(PayloadValues{
        dtype, std::vector<std::byte>(from, from + elements * bytesOf(dtype))});
  }

  // Values of the buffer's type are copied; f32 values into an f16 buffer
  // round, f16 values into an f32 one convert exactly.
  void write(int32_t core, int32_t slot, int32_t buffer,
             const Payload &payload) override {
    DType dtype = p.buffers[buffer].dtype;
    if (payload->dtype == dtype) {
      if (!payload->bytes.empty())
        std::memcpy(storage(core, slot), payload->bytes.data(),
                    payload->bytes.size());
      return;
    }
    int64_t count = int64_t(payload->bytes.size()) / bytesOf(payload->dtype);
    auto values = std::vector<float>(size_t(count));
    loadValues(payload->dtype, payload->bytes.data(), values.data(), count);
    storeValues(dtype, values.data(), storage(core, slot), count);
  }

  int64_t kernel(int32_t core, const Op &op, const KernelSlots &slots,
                 const KernelValues &values) override;

private:
  std::byte *coreBytes(int32_t core) {
    return static_cast<std::byte *>(data.base()) + int64_t(core) * perCore;
  }
  void copy(int32_t core, const Op &op, const KernelSlots &slots,
            const KernelValues &values);

  const Program &p;
  int64_t perCore = 0;
  std::vector<int64_t> slotOffset;
  llvm::sys::OwningMemoryBlock data;
};

void FunctionalDataPath::copy(int32_t core, const Op &op,
                              const KernelSlots &slots,
                              const KernelValues &values) {
  DType to = p.buffers[slots.out].dtype, from = p.buffers[slots.in1].dtype;
  std::byte *dst = storage(core, slots.out) + values.expr * op.n * bytesOf(to);
  const std::byte *src =
      storage(core, slots.in1) + values.expr2 * op.n * bytesOf(from);
  if (to == from) {
    if (src != dst) // slots of one size never partly overlap
      std::memmove(dst, src, size_t(op.n * bytesOf(to)));
    return;
  }
  std::vector<float> floats(size_t(op.n));
  loadValues(from, src, floats.data(), op.n);
  storeValues(to, floats.data(), dst, op.n);
}

int64_t FunctionalDataPath::kernel(int32_t core, const Op &op,
                                   const KernelSlots &slots,
                                   const KernelValues &values) {
  FloatOperands operand(p, coreBytes(core), slotOffset);
  int64_t outElements = p.buffers[slots.out].elements;
  switch (op.kind) {
  case Step::Gemm:
  case Step::Gemv: {
    int64_t m = op.kind == Step::Gemm ? op.m : 1, k = op.k, n = op.n;
    float *out = operand(slots.out);
    const float *a = operand(slots.in1), *b = operand(slots.in2);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) {
        float av = a[i * k + q];
        for (int64_t j = 0; j < n; ++j)
          out[i * n + j] += av * b[q * n + j];
      }
    operand.finish(slots.out, m * n);
    break;
  }
  case Step::Add:
  case Step::Mul:
  case Step::Max:
  case Step::Swiglu: {
    // The inputs first: an output that is one of them is then loaded.
    const float *a = operand(slots.in1), *b = operand(slots.in2);
    kernels::elementwise(op.opcode, a, b, operand(slots.out, /*load=*/false),
                         outElements);
    operand.finish(slots.out, outElements);
    break;
  }
  case Step::Zero:
    std::memset(storage(core, slots.out), 0,
                size_t(outElements * bytesOf(p.buffers[slots.out].dtype)));
    break;
  case Step::Rotate: {
    std::byte *a = storage(core, slots.out);
    int64_t size = bytesOf(p.buffers[slots.out].dtype);
    if (outElements > 0)
      std::rotate(a, a + op.n * size, a + outElements * size);
    break;
  }
  case Step::Copy:
    copy(core, op, slots, values);
    break;
  default: {
    kernels::RowArgs args = rowArgs(p, op, values);
    args.out = operand(slots.out);
    args.a = operand(slots.in1);
    args.b = operand(slots.in2);
    args.c = operand(slots.in3);
    kernels::rowKernel(op.opcode, args);
    // A row kernel may write any of the slot; values it left convert back
    // exactly. FlashStep and FlashStats also update their running
    // statistics (in1).
    operand.finish(slots.out, outElements);
    if (rowKernelUpdatesOperand(op.opcode))
      operand.finish(slots.in1, p.buffers[slots.in1].elements);
    break;
  }
  }
  return kernelWork(p, op, values);
}

class TimingDataPath final : public DataPath {
public:
  explicit TimingDataPath(const Program &p) : p(p) {}
  llvm::Error allocate(int64_t) override { return llvm::Error::success(); }
  std::byte *storage(int32_t, int32_t) override { return nullptr; }
  Payload read(int32_t, int32_t, int64_t) override { return nullptr; }
  void write(int32_t, int32_t, int32_t, const Payload &) override {}
  int64_t kernel(int32_t, const Op &op, const KernelSlots &,
                 const KernelValues &values) override {
    return kernelWork(p, op, values);
  }

private:
  const Program &p;
};

} // namespace

int64_t kernelWork(const Program &p, const Op &op, const KernelValues &values) {
  switch (op.kind) {
  case Step::Gemm:
    return op.m * op.k * op.n;
  case Step::Gemv:
    return op.k * op.n;
  case Step::Add:
  case Step::Mul:
  case Step::Max:
  case Step::Swiglu:
  case Step::Zero:
  case Step::Rotate:
    return p.buffers[op.out].elements;
  case Step::Copy:
    return op.n;
  default:
    return kernels::rowKernelCounts(op.opcode, rowArgs(p, op, values)).work;
  }
}

std::unique_ptr<DataPath> makeFunctionalDataPath(const Program &program) {
  return std::make_unique<FunctionalDataPath>(program);
}

std::unique_ptr<DataPath> makeTimingDataPath(const Program &program) {
  return std::make_unique<TimingDataPath>(program);
}

} // namespace wafer::rt::emulator
