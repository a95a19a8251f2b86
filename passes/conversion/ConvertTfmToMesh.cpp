//===- ConvertTfmToMesh.cpp - Plan a tfm graph onto a core grid -----------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Runtime/Fabric.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/DenseMap.h"

#include <numeric>

namespace wafer {
#define GEN_PASS_DEF_CONVERTTFMTOMESH
#include "conversion/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

constexpr int64_t kNone = mesh::LayoutAttr::kNone;
constexpr int64_t kX = mesh::LayoutAttr::kX;
constexpr int64_t kY = mesh::LayoutAttr::kY;

/// Parses "HxW".
static std::optional<std::pair<int64_t, int64_t>> parseGrid(StringRef text) {
  auto [h, w] = text.split('x');
  int64_t height, width;
  if (h.getAsInteger(10, height) || w.getAsInteger(10, width))
    return std::nullopt;
  return std::make_pair(height, width);
}

/// Rewrites the tfm ops of one function into mesh ops, keeping host-side
/// values (arguments, weights, constants, transposes of them) on the host.
class Planner {
public:
  Planner(func::FuncOp func, mesh::GridAttr grid,
          mesh::GemmAlgorithm gemmAlgorithm,
          mesh::AllreduceAlgorithm allreduce, int64_t ktreeK,
          Type elementType, const rt::Target &target)
      : func(func), grid(grid), gemmAlgorithm(gemmAlgorithm),
        allreduce(allreduce), ktreeK(ktreeK), elementType(elementType),
        target(target),
        builder(func.getContext()) {
    // mesh-place-interleave will interleave the module iff it has a
    // MeshGEMM; the K-tree cost model needs to know.
    func.walk([&](Operation *op) {
      if (!isa<tfm::MatMulOp, tfm::LinearOp>(op))
        return;
      auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
      interleaved |= gemmAlgorithm == mesh::GemmAlgorithm::meshgemm &&
                     lhs.getRank() == 2 && lhs.getDimSize(0) > 1;
    });
  }

  LogicalResult run() {
    SmallVector<Operation *> worklist;
    for (Operation &op : func.getBody().front())
      worklist.push_back(&op);
    for (Operation *op : worklist) {
      builder.setInsertionPoint(op);
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<tfm::MatMulOp>([&](auto op) { return planMatMul(op); })
              .Case<tfm::LinearOp>([&](auto op) { return planLinear(op); })
              .Case<tfm::AddOp>([&](auto op) {
                return planMap(op, mesh::MapKind::add);
              })
              .Case<tfm::MulOp>([&](auto op) {
                return planMap(op, mesh::MapKind::mul);
              })
              .Case<tfm::TransposeOp>([&](auto op) { return planHost(op); })
              .Case<tfm::WeightOp, tfm::ConstantOp>(
                  [&](auto) { return success(); })
              .Case<func::ReturnOp>([&](auto op) { return planReturn(op); })
              .Default([&](Operation *op) {
                return op->emitError("convert-tfm-to-mesh: no mesh plan for '")
                       << op->getName() << "'";
              });
      if (failed(result))
        return failure();
    }
    // Compute ops are replaced; host ops stay only while distributes use them.
    for (Operation *op : llvm::reverse(worklist))
      if (isa<tfm::MatMulOp, tfm::LinearOp, tfm::AddOp, tfm::MulOp,
              tfm::TransposeOp, tfm::WeightOp, tfm::ConstantOp>(op) &&
          op->use_empty())
        op->erase();
    return success();
  }

private:
  mesh::LayoutAttr layout(ArrayRef<int64_t> axes, ArrayRef<int64_t> blocks) {
    return mesh::LayoutAttr::get(func.getContext(), axes, blocks, false);
  }

  /// The layout element-wise results use when no operand imposes one: the
  /// last two dimensions split over y and x.
  mesh::LayoutAttr defaultLayout(int64_t rank) {
    SmallVector<int64_t> axes(rank, kNone), blocks(rank, 1);
    if (rank >= 1) {
      axes[rank - 1] = kX;
      blocks[rank - 1] = grid.getWidth();
    }
    if (rank >= 2) {
      axes[rank - 2] = kY;
      blocks[rank - 2] = grid.getHeight();
    }
    return layout(axes, blocks);
  }

  bool isHostValue(Value v) {
    if (isa<BlockArgument>(v))
      return true;
    Operation *def = v.getDefiningOp();
    if (isa<tfm::WeightOp, tfm::ConstantOp>(def))
      return true;
    if (auto transpose = dyn_cast<tfm::TransposeOp>(def))
      return isHostValue(transpose.getInput());
    return false;
  }

  /// `v` on the grid with shape `shape` in `layout`: a distribute of a host
  /// value (folding host-side transposes, and `outerPermutation` applied
  /// after them) or the mesh value computed for it.
  FailureOr<Value> materialize(Operation *user, Value v,
                               ArrayRef<int64_t> shape,
                               mesh::LayoutAttr layout,
                               ArrayRef<int64_t> outerPermutation = {}) {
    auto type = RankedTensorType::get(shape, elementType, layout);
    if (isHostValue(v)) {
      SmallVector<int64_t> permutation(outerPermutation);
      Value source = v;
      // Compose host-side transposes into one permutation of the source.
      while (auto transpose = source.getDefiningOp<tfm::TransposeOp>()) {
        ArrayRef<int64_t> perm = transpose.getPermutation();
        if (permutation.empty())
          permutation.assign(perm.begin(), perm.end());
        else
          for (int64_t &p : permutation)
            p = perm[p];
        source = transpose.getInput();
      }
      auto distribute =
          builder.create<mesh::DistributeOp>(user->getLoc(), type, source,
                                             nullptr);
      if (!permutation.empty())
        distribute.setPermutation(permutation);
      return distribute.getResult();
    }
    if (!outerPermutation.empty())
      return user->emitError("convert-tfm-to-mesh: transposing a computed "
                             "tensor is not supported yet");
    Value planned = plannedValues.lookup(v);
    if (planned.getType() != type)
      return user->emitError("convert-tfm-to-mesh: operand is laid out as ")
             << planned.getType() << " but this op needs " << type
             << "; relayout of computed tensors is not supported yet";
    return planned;
  }

  LogicalResult planMatMul(tfm::MatMulOp op) {
    return planProduct(op, op.getLhs(), op.getRhs(), false);
  }

  /// tfm.linear is x @ W (or x @ W^T, the transpose done by the host's
  /// view of the weight).
  LogicalResult planLinear(tfm::LinearOp op) {
    return planProduct(op, op.getInput(), op.getWeight(),
                       op.getTransposeWeight());
  }

  /// result = lhs @ rhs (rhs^T when `transposeRhs`) as a mesh.gemm, or a
  /// mesh.gemv when lhs has one row.
  LogicalResult planProduct(Operation *op, Value lhsValue, Value rhsValue,
                            bool transposeRhs) {
    auto lhsType = cast<RankedTensorType>(lhsValue.getType());
    auto rhsType = cast<RankedTensorType>(rhsValue.getType());
    if (lhsType.getRank() != 2 || rhsType.getRank() != 2)
      return op->emitError("convert-tfm-to-mesh: a product of rank-")
             << lhsType.getRank() << " and rank-" << rhsType.getRank()
             << " operands is not supported yet (only matrices)";
    SmallVector<int64_t> rhsPermutation;
    if (transposeRhs)
      rhsPermutation = {1, 0};
    int64_t m = lhsType.getDimSize(0), k = lhsType.getDimSize(1),
            n = rhsType.getDimSize(transposeRhs ? 0 : 1);
    int64_t h = grid.getHeight(), w = grid.getWidth();
    if (m == 1) {
      // A vector a previous GEMV left split along x feeds the transposed
      // orientation (the weight is placed [x:W, y:H]), so chained GEMVs
      // alternate between the two and never relayout.
      bool alongX = false;
      if (!isHostValue(lhsValue))
        if (mesh::LayoutAttr planned = mesh::getLayout(
                plannedValues.lookup(lhsValue).getType()))
          alongX = planned.getAxes().size() == 2 &&
                   planned.getAxes()[1] == kX;
      int64_t in = alongX ? kX : kY, out = alongX ? kY : kX;
      int64_t inBlocks = alongX ? w : h, outBlocks = alongX ? h : w;
      auto lhs = materialize(op, lhsValue, {1, k},
                             layout({kNone, in}, {1, inBlocks}));
      if (failed(lhs))
        return failure();
      auto rhs = materialize(op, rhsValue, {k, n},
                             layout({in, out}, {inBlocks, outBlocks}),
                             rhsPermutation);
      if (failed(rhs))
        return failure();
      auto resultType = RankedTensorType::get(
          {1, n}, elementType, layout({kNone, out}, {1, outBlocks}));
      auto gemv = builder.create<mesh::GemvOp>(
          op->getLoc(), resultType, *lhs, *rhs,
          allreduceFor(alongX ? w : h, n, outBlocks), nullptr, nullptr);
      plannedValues[op->getResult(0)] = gemv.getResult();
      return success();
    }
    int64_t ring = std::lcm(h, w);
    auto lhs = materialize(op, lhsValue, {m, k}, layout({kY, kX}, {h, ring}));
    if (failed(lhs))
      return failure();
    auto rhs = materialize(op, rhsValue, {k, n}, layout({kY, kX}, {ring, w}),
                           rhsPermutation);
    if (failed(rhs))
      return failure();
    auto resultType =
        RankedTensorType::get({m, n}, elementType, layout({kY, kX}, {h, w}));
    auto gemm = builder.create<mesh::GemmOp>(
        op->getLoc(), resultType, *lhs, *rhs,
        mesh::GemmAlgorithmAttr::get(op->getContext(), gemmAlgorithm),
        nullptr);
    plannedValues[op->getResult(0)] = gemm.getResult();
    return success();
  }

  /// The allreduce of a GEMV reducing over `ring` positions, each core
  /// holding ceil(n / splits) values: K = 0 (auto) picks the K-tree the
  /// cost model (rt::chooseKTreeK) finds fastest.
  mesh::AllreduceAttr allreduceFor(int64_t ring, int64_t n, int64_t splits) {
    MLIRContext *context = func.getContext();
    if (allreduce != mesh::AllreduceAlgorithm::ktree)
      return mesh::AllreduceAttr::get(context, allreduce, 0);
    if (ktreeK > 0)
      return mesh::AllreduceAttr::get(context, allreduce, ktreeK);
    bool half = elementType.isF16();
    int64_t values = (n + splits - 1) / splits;
    int64_t k = rt::chooseKTreeK(
        ring, values, half ? (values + 1) / 2 : values,
        half ? target.macsPerCycleF16 : target.macsPerCycleF32, target,
        interleaved);
    return mesh::AllreduceAttr::get(context, mesh::AllreduceAlgorithm::ktree,
                                    k);
  }

  template <typename BinaryOp>
  LogicalResult planMap(BinaryOp op, mesh::MapKind kind) {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    // A computed operand of the full shape imposes its layout.
    mesh::LayoutAttr chosen;
    for (Value operand : {op.getLhs(), op.getRhs()})
      if (!isHostValue(operand) &&
          cast<RankedTensorType>(operand.getType()).getShape() ==
              resultType.getShape())
        chosen = mesh::getLayout(plannedValues.lookup(operand).getType());
    if (!chosen)
      chosen = defaultLayout(resultType.getRank());
    auto lhs = materialize(op, op.getLhs(), resultType.getShape(), chosen);
    if (failed(lhs))
      return failure();
    auto rhs = materialize(op, op.getRhs(), resultType.getShape(), chosen);
    if (failed(rhs))
      return failure();
    auto map = builder.create<mesh::MapOp>(
        op.getLoc(), lhs->getType(),
        mesh::MapKindAttr::get(op.getContext(), kind), *lhs, *rhs);
    plannedValues[op.getResult()] = map.getResult();
    return success();
  }

  LogicalResult planHost(tfm::TransposeOp op) {
    if (isHostValue(op.getResult()))
      return success();
    return op.emitError("convert-tfm-to-mesh: transposing a computed tensor "
                        "is not supported yet");
  }

  LogicalResult planReturn(func::ReturnOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (isHostValue(v))
        continue;
      auto collect = builder.create<mesh::CollectOp>(
          op.getLoc(), v.getType(), plannedValues.lookup(v));
      operand.set(collect.getResult());
    }
    return success();
  }

  func::FuncOp func;
  mesh::GridAttr grid;
  mesh::GemmAlgorithm gemmAlgorithm;
  mesh::AllreduceAlgorithm allreduce;
  /// K of every K-tree, or 0: chosen per GEMV.
  int64_t ktreeK;
  /// Element type of every distributed tensor (--dtype).
  Type elementType;
  const rt::Target &target;
  bool interleaved = false;
  OpBuilder builder;
  /// The mesh value computed for each tfm value.
  DenseMap<Value, Value> plannedValues;
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
    if (ktreeK < 0) {
      module.emitError("convert-tfm-to-mesh: ktree-k must be at least 1 "
                       "(or 0: chosen per GEMV), got ")
          << int64_t(ktreeK);
      return signalPassFailure();
    }
    std::optional<mesh::GemmAlgorithm> gemmAlgorithm =
        mesh::symbolizeGemmAlgorithm(gemm);
    if (!gemmAlgorithm) {
      module.emitError("convert-tfm-to-mesh: unknown gemm algorithm '")
          << gemm << "' (known: meshgemm, cannon, summa, allgather)";
      return signalPassFailure();
    }
    std::optional<mesh::AllreduceAlgorithm> allreduceAlgorithm =
        mesh::symbolizeAllreduceAlgorithm(allreduce);
    if (!allreduceAlgorithm) {
      module.emitError("convert-tfm-to-mesh: unknown allreduce algorithm '")
          << allreduce << "' (known: ktree, pipeline, ring)";
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
    if (dtype != "f32" && dtype != "f16") {
      module.emitError("convert-tfm-to-mesh: unknown dtype '")
          << dtype << "' (known: f32, f16)";
      return signalPassFailure();
    }
    Type elementType = dtype == "f16" ? Type(Float16Type::get(context))
                                      : Type(Float32Type::get(context));
    if (*gemmAlgorithm == mesh::GemmAlgorithm::summa &&
        gridAttr.getHeight() != gridAttr.getWidth()) {
      module.emitError("convert-tfm-to-mesh: gemm algorithm summa needs a "
                       "square grid, got ")
          << grid;
      return signalPassFailure();
    }
    if (failed(Planner(main, gridAttr, *gemmAlgorithm, *allreduceAlgorithm,
                       ktreeK, elementType, *loaded)
                   .run()))
      return signalPassFailure();
  }
};

} // namespace
