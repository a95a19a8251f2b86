//===- DataPath.cpp - The element data of every core ----------------------===//
#include "DataPath.h"

#include "wafer/Runtime/RowKernels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Memory.h"

#include <algorithm>

#include <sys/mman.h>

namespace wafer::rt::emulator {

DataPath::~DataPath() = default;

void roundToType(DType dtype, float *values, int64_t count) {
  if (dtype == DType::F16)
    kernels::roundToHalf(values, count);
}

namespace {

/// The row kernels' operands; the pointers only when there is data.
kernels::RowArgs rowArgs(const Program &p, const Op &op,
                         const KernelValues &values) {
  kernels::RowArgs args;
  args.m = op.m, args.groups = op.groups, args.k = op.k, args.n = op.n;
  args.scalar = op.scalar;
  args.expr = values.expr;
  args.expr2 = values.expr2;
  args.outElements = p.buffers[op.out].elements;
  args.aElements = op.in1 < 0 ? 0 : p.buffers[op.in1].elements;
  return args;
}

/// The work of a kernel in operations, which its cycles are priced from;
/// it depends on sizes and expression values only, never on data.
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

class FunctionalDataPath final : public DataPath {
public:
  // A core's storage mirrors its SRAM: buffer b's values start at float
  // offsetBytes / 2, so buffers the memory plan overlaps (disjoint
  // lifetimes) share storage as they share SRAM, and a core needs two
  // floats per SRAM word (one per f16 value; an f32 value uses one of two).
  explicit FunctionalDataPath(const Program &p) : p(p) {
    for (const Buffer &b : p.buffers) {
      slotOffset.push_back(b.offsetBytes / 2);
      perCore = std::max(perCore, b.offsetBytes / 2 + b.elements);
    }
  }

  // Fresh anonymous pages rather than a vector: they come zeroed, so the
  // storage is not written twice. (Huge pages were tried: compaction made
  // their faults slower or faster by 4x from run to run.)
  llvm::Error allocate(int64_t cores) override {
    size_t bytes =
        std::max<size_t>(size_t(cores * perCore) * sizeof(float), 1);
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

  float *storage(int32_t core, int32_t slot) override {
    return static_cast<float *>(data.base()) + int64_t(core) * perCore +
           slotOffset[slot];
  }

  Payload read(int32_t core, int32_t slot, int64_t elements) override {
    const float *src = storage(core, slot);
    return std::make_shared<const std::vector<float>>(src, src + elements);
  }

  void write(int32_t core, int32_t slot, int32_t buffer,
             const Payload &payload, DType sentAs) override {
    float *dst = storage(core, slot);
    std::copy(payload->begin(), payload->end(), dst);
    // Values sent from a buffer of the same type are rounded already.
    if (sentAs != p.buffers[buffer].dtype)
      roundToType(p.buffers[buffer].dtype, dst, int64_t(payload->size()));
  }

  int64_t kernel(int32_t core, const Op &op, const KernelSlots &slots,
                 const KernelValues &values) override;

private:
  void round(int32_t buffer, float *values, int64_t count) const {
    roundToType(p.buffers[buffer].dtype, values, count);
  }
  void rowKernel(int32_t core, const Op &op, const KernelSlots &slots,
                 const KernelValues &values);

  const Program &p;
  int64_t perCore = 0;
  std::vector<int64_t> slotOffset;
  llvm::sys::OwningMemoryBlock data;
};

void FunctionalDataPath::rowKernel(int32_t core, const Op &op,
                                   const KernelSlots &slots,
                                   const KernelValues &values) {
  kernels::RowArgs args = rowArgs(p, op, values);
  args.out = storage(core, slots.out);
  auto operand = [&](int32_t slot) -> const float * {
    return slot < 0 ? nullptr : storage(core, slot);
  };
  args.a = operand(slots.in1);
  args.b = operand(slots.in2);
  args.c = operand(slots.in3);
  kernels::RowResult result = kernels::rowKernel(op.opcode, args);
  round(op.out, args.out, result.written);
}

int64_t FunctionalDataPath::kernel(int32_t core, const Op &op,
                                   const KernelSlots &slots,
                                   const KernelValues &values) {
  switch (op.kind) {
  case Step::Gemm:
  case Step::Gemv: {
    int64_t m = op.kind == Step::Gemm ? op.m : 1, k = op.k, n = op.n;
    float *out = storage(core, slots.out);
    const float *a = storage(core, slots.in1), *b = storage(core, slots.in2);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) {
        float av = a[i * k + q];
        for (int64_t j = 0; j < n; ++j)
          out[i * n + j] += av * b[q * n + j];
      }
    round(op.out, out, m * n);
    break;
  }
  case Step::Add:
  case Step::Mul:
  case Step::Max:
  case Step::Swiglu: {
    int64_t count = p.buffers[op.out].elements;
    float *out = storage(core, slots.out);
    const float *a = storage(core, slots.in1), *b = storage(core, slots.in2);
    for (int64_t i = 0; i < count; ++i)
      out[i] = kernels::elementwise(op.opcode, a[i], b[i]);
    round(op.out, out, count);
    break;
  }
  case Step::Zero:
    std::fill_n(storage(core, slots.out), p.buffers[op.out].elements, 0.0f);
    break;
  case Step::Rotate: {
    int64_t count = p.buffers[op.out].elements;
    float *a = storage(core, slots.out);
    if (count > 0)
      std::rotate(a, a + op.n, a + count);
    break;
  }
  case Step::Copy: {
    float *dst = storage(core, slots.out) + values.expr * op.n;
    const float *src = storage(core, slots.in1) + values.expr2 * op.n;
    if (src != dst) // slots of one size never partly overlap
      std::copy_n(src, op.n, dst);
    round(op.out, dst, op.n);
    break;
  }
  default:
    rowKernel(core, op, slots, values);
    break;
  }
  return kernelWork(p, op, values);
}

class TimingDataPath final : public DataPath {
public:
  explicit TimingDataPath(const Program &p) : p(p) {}
  llvm::Error allocate(int64_t) override { return llvm::Error::success(); }
  float *storage(int32_t, int32_t) override { return nullptr; }
  Payload read(int32_t, int32_t, int64_t) override { return nullptr; }
  void write(int32_t, int32_t, int32_t, const Payload &, DType) override {}
  int64_t kernel(int32_t, const Op &op, const KernelSlots &,
                 const KernelValues &values) override {
    return kernelWork(p, op, values);
  }

private:
  const Program &p;
};

} // namespace

std::unique_ptr<DataPath> makeFunctionalDataPath(const Program &program) {
  return std::make_unique<FunctionalDataPath>(program);
}

std::unique_ptr<DataPath> makeTimingDataPath(const Program &program) {
  return std::make_unique<TimingDataPath>(program);
}

} // namespace wafer::rt::emulator
