//===- ConvertTfmToMesh.cpp - Plan a tfm graph onto a core grid -----------===//
#include "TfmToMeshPlanner.h"

namespace wafer {
#define GEN_PASS_DEF_CONVERTTFMTOMESH
#include "conversion/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;
using wafer::planning::Planner;

namespace {

/// Parses "HxW".
static std::optional<std::pair<int64_t, int64_t>> parseGrid(StringRef text) {
  auto [h, w] = text.split('x');
  int64_t height, width;
  if (h.getAsInteger(10, height) || w.getAsInteger(10, width))
    return std::nullopt;
  return std::make_pair(height, width);
}

struct ConvertTfmToMeshPass
    : public wafer::impl::ConvertTfmToMeshBase<ConvertTfmToMeshPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    auto gridSize = parseGrid(grid);
    if (!gridSize) {
      module.emitError("convert-tfm-to-mesh: grid '")
          << grid << "' is not of the form HxW";
      return signalPassFailure();
    }
    llvm::Expected<rt::Target> loaded = rt::loadTarget(target);
    if (!loaded) {
      module.emitError("convert-tfm-to-mesh: ")
          << llvm::toString(loaded.takeError());
      return signalPassFailure();
    }
    // 64 levels of at least two reach every grid; more change nothing.
    if (ktreeK < 0 || ktreeK > 64) {
      module.emitError("convert-tfm-to-mesh: ktree-k must be at least 1 "
                       "(or 0: chosen per op by mesh-choose-ktree) and at "
                       "most 64, got ")
          << int64_t(ktreeK);
      return signalPassFailure();
    }
    auto gridAttr = mesh::GridAttr::getChecked(
        [&] { return module.emitError("convert-tfm-to-mesh: "); }, context,
        gridSize->first, gridSize->second);
    if (!gridAttr)
      return signalPassFailure();
    module->setAttr(mesh::MeshDialect::kTargetAttrName,
                    mesh::getTargetAttr(context, *loaded));
    module->setAttr(mesh::MeshDialect::kGridAttrName, gridAttr);
    if (gridAttr.getHeight() > loaded->fabricHeight ||
        gridAttr.getWidth() > loaded->fabricWidth) {
      module.emitError("convert-tfm-to-mesh: grid ")
          << grid << " does not fit target '" << loaded->name << "' (fabric "
          << loaded->fabricHeight << "x" << loaded->fabricWidth
          << " cores, rows x columns)";
      return signalPassFailure();
    }
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("convert-tfm-to-mesh: the module has no @main");
      return signalPassFailure();
    }
    Type elementType = dtype == GridDType::f16
                           ? Type(Float16Type::get(context))
                           : Type(Float32Type::get(context));
    // The grid's tiles and rings need at least one element per dimension.
    WalkResult empty = main.walk([&](Operation *op) {
      SmallVector<Type> types(op->getOperandTypes());
      llvm::append_range(types, op->getResultTypes());
      for (Type t : types)
        if (auto type = dyn_cast<RankedTensorType>(t);
            type && llvm::is_contained(type.getShape(), 0)) {
          op->emitError("convert-tfm-to-mesh: '")
              << op->getName() << "' has an empty tensor " << type
              << "; the grid holds no tensors with a dimension of size 0";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (empty.wasInterrupted())
      return signalPassFailure();
    if (failed(Planner(main, gridAttr, gemm, allreduce, ktreeK, elementType)
                   .run()))
      return signalPassFailure();
  }
};

} // namespace
