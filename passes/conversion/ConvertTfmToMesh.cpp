//===- ConvertTfmToMesh.cpp - Plan a tfm graph onto a core grid -----------===//
#include "TfmToMeshPlanner.h"

#include "wafer/Support/PlanPrice.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

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

/// Whether @main holds a prefill attention on a grid wider than its KV
/// heads, whose heads may go whole or as lanes.
static bool hasPrefillHeadsChoice(func::FuncOp main, int64_t width) {
  bool found = false;
  main.walk([&](tfm::AttentionOp attention) {
    auto query = cast<RankedTensorType>(attention.getQuery().getType());
    found |=
        query.getDimSize(2) > 1 && width > int64_t(attention.getNumKvHeads());
  });
  return found;
}

/// One way to plan @main, judged by the cost model: the sum of its mesh
/// ops' estimates and whether its routes and buffers fit the target.
struct CandidatePlan {
  bool planned = false, fits = false, hasGemm = false;
  int64_t cycles = 0;

  /// Planned, and fits where `other` does not, or as well in fewer cycles.
  bool betterThan(const CandidatePlan &other) const {
    return planned && (!other.planned || (fits && !other.fits) ||
                       (fits == other.fits && cycles < other.cycles));
  }
};

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
      module.emitError(
          "convert-tfm-to-mesh: ktree-k must be at least 1 "
          "(or 0: one K for all, chosen by mesh-choose-ktree) and at "
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
    std::optional<mesh::GemmAlgorithm> fixedGemm =
        mesh::symbolizeGemmAlgorithm(gemm);
    if (!fixedGemm && gemm != "auto") {
      module.emitError("convert-tfm-to-mesh: gemm must be ")
          << gemmAlgorithmNames() << " or auto, got '" << gemm << "'";
      return signalPassFailure();
    }
    if (prefillHeads != "auto" && prefillHeads != "lanes" &&
        prefillHeads != "whole") {
      module.emitError("convert-tfm-to-mesh: prefill-heads must be auto, "
                       "lanes or whole, got '")
          << prefillHeads << "'";
      return signalPassFailure();
    }
    // On a forced INTERLEAVE, mesh-place-interleave rejects the others.
    SmallVector<mesh::GemmAlgorithm, 4> gemms =
        fixedGemm ? SmallVector<mesh::GemmAlgorithm, 4>{*fixedGemm}
        : interleave
            ? SmallVector<mesh::GemmAlgorithm, 4>{mesh::GemmAlgorithm::meshgemm}
            : gemmAlgorithms();
    SmallVector<bool, 2> laneChoices;
    if (prefillHeads == "auto" &&
        hasPrefillHeadsChoice(main, gridAttr.getWidth()))
      laneChoices.assign({true, false});
    else
      laneChoices.push_back(prefillHeads == "lanes");
    // Unless every candidate fails to plan (the plan below then reports
    // why), the first of the cheapest that fit wins: the paper's MeshGEMM
    // and lanes on a tie.
    mesh::GemmAlgorithm chosenGemm = gemms.front();
    bool lanes = laneChoices.back();
    if (gemms.size() * laneChoices.size() > 1) {
      CandidatePlan best;
      for (mesh::GemmAlgorithm algorithm : gemms) {
        bool planned = false, anyGemm = false;
        for (bool withLanes : laneChoices) {
          CandidatePlan plan = candidate(module, gridAttr, *loaded, elementType,
                                         algorithm, withLanes);
          planned |= plan.planned;
          anyGemm |= plan.hasGemm;
          if (plan.betterThan(best)) {
            best = plan;
            chosenGemm = algorithm;
            lanes = withLanes;
          }
        }
        // Without a mesh.gemm the other algorithms plan the same.
        if (planned && !anyGemm)
          break;
      }
    }
    if (failed(Planner(main, gridAttr, chosenGemm, allreduce, ktreeK,
                       elementType, lanes)
                   .run()))
      return signalPassFailure();
  }

  /// Plans a copy of the module with a GEMM algorithm, with or without
  /// prefill lanes, places it as mesh-place-interleave will (INTERLEAVE
  /// for a MeshGEMM or when forced), closes its open K-trees as
  /// mesh-choose-ktree will, and prices it routed.
  CandidatePlan candidate(ModuleOp module, mesh::GridAttr grid,
                          const rt::Target &target, Type elementType,
                          mesh::GemmAlgorithm algorithm, bool lanes) {
    OwningOpRef<ModuleOp> copy(module.clone());
    auto main = copy->lookupSymbol<func::FuncOp>("main");
    // A candidate that cannot be planned is not chosen; its errors are
    // not the user's.
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    CandidatePlan plan;
    if (failed(Planner(main, grid, algorithm, allreduce, ktreeK, elementType,
                       lanes)
                   .run()) ||
        failed(mlir::verify(*copy)))
      return plan;
    // SUMMA lends a tile by swapping it into a panel, which one buffer
    // cannot do for both operands (convert-mesh-to-core says so).
    bool summaOfItself = false;
    main.walk([&](mesh::GemmOp gemm) {
      plan.hasGemm = true;
      summaOfItself |= gemm.getAlgorithm() == mesh::GemmAlgorithm::summa &&
                       gemm.getLhs() == gemm.getRhs();
    });
    if (summaOfItself)
      return plan;
    plan.planned = true;
    if (interleave ||
        (algorithm == mesh::GemmAlgorithm::meshgemm && plan.hasGemm))
      mesh::placeInterleaved(*copy);
    std::optional<PlanPrice> price = chooseOpenKtreeK(*copy, grid, target);
    if (!price)
      price = priceRoutedPlan(*copy, grid, target);
    plan.cycles = price->cycles;
    plan.fits = price->fits();
    return plan;
  }
};

} // namespace
