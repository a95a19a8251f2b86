//===- MeshCheckMemory.cpp - Per-core SRAM high-water against the target --===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/BufferPlan.h"
#include "wafer/Support/LocationName.h"

#include "llvm/ADT/DenseSet.h"

namespace wafer {
#define GEN_PASS_DEF_MESHCHECKMEMORY
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

/// The ONNX node an op came from, or the op's name.
static std::string opLabel(Operation *op) {
  std::string name = locationName(op->getLoc());
  return name.empty() ? op->getName().getStringRef().str() : name;
}

struct MeshCheckMemoryPass
    : public wafer::impl::MeshCheckMemoryBase<MeshCheckMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mesh::GridAttr grid = mesh::lookupGrid(module);
    mesh::TargetAttr target = mesh::lookupTarget(module);
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!grid || !target || !main)
      return;
    // Buffers are never reused (convert-mesh-to-core allocates each once),
    // so the high-water is the running sum in program order; the first op
    // that crosses the budget is the one to name.
    int64_t used = 0;
    llvm::DenseSet<Value> placed;
    auto add = [&](Operation *op, const Twine &what, int64_t bytes) {
      used += bytes;
      if (used <= target.getSramBytes())
        return true;
      op->emitError("mesh-check-memory: '")
          << opLabel(op) << "' needs " << what << " (" << bytes
          << " bytes per core): core (0, 0) would hold " << used
          << " bytes, target '" << target.getName() << "' has "
          << target.getSramBytes();
      return false;
    };
    for (Operation &op : main.getBody().front()) {
      SmallVector<Value> values(op.getOperands());
      llvm::append_range(values, op.getResults());
      for (Value v : values) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || !mesh::getLayout(type) || !placed.insert(v).second)
          continue;
        std::string what;
        llvm::raw_string_ostream(what) << "tensor " << type;
        if (!add(&op, what,
                 bufferBytes(localElements(v, grid), type.getElementType())))
          return signalPassFailure();
      }
      auto resultType = op.getNumResults()
                            ? dyn_cast<RankedTensorType>(op.getResult(0).getType())
                            : RankedTensorType();
      Type element = resultType ? resultType.getElementType() : Type();
      for (const ScratchBuffer &scratch : scratchBuffers(&op, grid))
        if (!add(&op, "working buffer '" + scratch.suffix.substr(1) + "'",
                 bufferBytes(scratch.elements, element)))
          return signalPassFailure();
    }
  }
};

} // namespace
