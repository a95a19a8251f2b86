//===- MeshRelayoutPhases.cpp - The prefill's KV hand-off to decode -------===//
#include "wafer/Passes/Passes.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/KvCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace wafer {
#define GEN_PASS_DEF_MESHRELAYOUTPHASES
#include "mesh/Passes.h.inc"
} // namespace wafer

using namespace mlir;
using namespace wafer;

namespace {

struct MeshRelayoutPhasesPass
    : public wafer::impl::MeshRelayoutPhasesBase<MeshRelayoutPhasesPass> {
  using MeshRelayoutPhasesBase::MeshRelayoutPhasesBase;

  void runOnOperation() override {
    func::FuncOp main = getOperation();
    if (capacity < 0) {
      main.emitError("mesh-relayout-phases: capacity must be at least 0, got ")
          << int64_t(capacity);
      return signalPassFailure();
    }
    auto names = main->getAttrOfType<ArrayAttr>("tfm.output_names");
    auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    SmallVector<Value> results(ret.getOperands());
    SmallVector<Attribute> outputNames(names ? names.getValue()
                                             : ArrayRef<Attribute>());
    OpBuilder builder(ret);
    unsigned handedOff = 0;
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      auto name = names && index < names.size()
                      ? dyn_cast<StringAttr>(names[index])
                      : StringAttr();
      if (!name || !name.getValue().starts_with("present."))
        continue;
      auto collect = value.getDefiningOp<mesh::CollectOp>();
      FailureOr<Value> past =
          collect ? handOff(builder, name.getValue(), collect)
                  : FailureOr<Value>(ret.emitError()
                                     << "mesh-relayout-phases: output '"
                                     << name.getValue()
                                     << "' is not read from the grid");
      if (failed(past))
        return signalPassFailure();
      results.push_back(*past);
      outputNames.push_back(builder.getStringAttr(
          "handoff.past." + name.getValue().drop_front(8).str()));
      ++handedOff;
    }
    if (!handedOff) {
      main.emitError("mesh-relayout-phases: the function returns no "
                     "present.* keys or values to hand off");
      return signalPassFailure();
    }
    builder.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    main->setAttr("tfm.output_names", builder.getArrayAttr(outputNames));
    main.setType(builder.getFunctionType(main.getArgumentTypes(),
                                         TypeRange(ValueRange(results))));
  }

  /// The decode cache of the `presentCollect`ed keys or values ([S, KVH,
  /// D] or lanes [S, KVH * D / 2, 2], `[y:H, x:W, *]`), read back to the
  /// host as [1, KVH, S, D] from the slots it fills.
  FailureOr<Value> handOff(OpBuilder &builder, StringRef name,
                           mesh::CollectOp presentCollect) {
    Value present = presentCollect.getSource();
    mesh::GridAttr grid = mesh::lookupGrid(getOperation());
    auto type = cast<RankedTensorType>(present.getType());
    mesh::LayoutAttr layout = mesh::getLayout(type);
    int64_t h = grid.getHeight(), w = grid.getWidth();
    constexpr int64_t N = mesh::LayoutAttr::kNone, X = mesh::LayoutAttr::kX,
                      Y = mesh::LayoutAttr::kY;
    if (type.getRank() != 3 || !layout ||
        layout.getAxes() != ArrayRef<int64_t>{Y, X, N} ||
        layout.getBlocks() != ArrayRef<int64_t>{h, w, 1})
      return getOperation().emitError()
             << "mesh-relayout-phases: '" << name
             << "' is not [S, KVH, D] with positions along y and heads along "
                "x (one block per core), as the hand-off needs: "
             << type;
    KvCacheLayout cache;
    cache.rows = h;
    cache.past = type.getDimSize(0);
    cache.policy = policy;
    cache.slotsPerRow = kvSlotsPerRow(h, cache.past, capacity, policy);
    int64_t heads = type.getDimSize(1), dim = type.getDimSize(2);
    // Lanes keep their blocks (balanced, perhaps, in parts of KV heads).
    auto cacheLayout = mesh::LayoutAttr::get(
        builder.getContext(), {N, X, Y, N}, {1, w, h, 1},
        layout.getInterleave(), {false, layout.isBalanced(1), false, false},
        {1, layout.getPartCount(1), 1, 1});
    // A capacity too large for the SRAM is refused before it sizes a type
    // (near 2^63 slots the size would wrap).
    if (failed(checkKvCacheFits(getOperation(),
                                RankedTensorType::get({1, heads, h, dim},
                                                      type.getElementType(),
                                                      cacheLayout),
                                cache.slotsPerRow, "mesh-relayout-phases")))
      return failure();
    // Without a target to check against, the size may still wrap.
    std::optional<int64_t> slots = checkedMul(h, cache.slotsPerRow);
    if (!slots)
      return getOperation().emitError()
             << "mesh-relayout-phases: a KV cache of " << cache.slotsPerRow
             << " token slots per row of cores has more than 2^63 slots";
    auto cacheType = RankedTensorType::get({1, heads, *slots, dim},
                                           type.getElementType(), cacheLayout);
    Location loc = present.getLoc();
    auto handoff = builder.create<mesh::KvHandoffOp>(
        loc, cacheType, present,
        mesh::KvPolicyAttr::get(builder.getContext(), policy), nullptr);
    // Lanes: the present [S, KVH * D / 2, 2] viewed [S, KVH, D / 2, 2] and
    // permuted into head dimensions (planner's collectLanes).
    std::optional<ArrayRef<int64_t>> lanes = presentCollect.getView();
    std::optional<ArrayRef<int64_t>> order = presentCollect.getPermutation();
    if (lanes && (dim != 2 || lanes->size() != 4 || (*lanes)[0] != cache.past ||
                  (*lanes)[1] * (*lanes)[2] != heads || (*lanes)[3] != 2 ||
                  !order || order->size() != 4))
      return getOperation().emitError()
             << "mesh-relayout-phases: '" << name
             << "' is read back through a view that is not one of attention "
                "lanes ([S, KVH, D / 2, 2]), which the hand-off cannot "
                "follow";
    if (!lanes) {
      auto readBack = builder.create<mesh::CollectOp>(
          loc,
          RankedTensorType::get({1, heads, cache.past, dim},
                                builder.getF32Type()),
          handoff.getResult(), nullptr, builder.getI64IntegerAttr(2),
          builder.getDenseI64ArrayAttr(cache.pastSlots()), nullptr);
      return readBack.getResult();
    }
    // Lanes: the present is viewed [S, KVH, D / 2, 2] and permuted into
    // head dimensions, (u, i) for rotate-half pairs; the cache is read the
    // same way, [1, KVH, D / 2, slots, 2].
    int64_t kvHeads = (*lanes)[1], half = (*lanes)[2];
    bool rotateHalf = order->back() == 2;
    auto readBack = builder.create<mesh::CollectOp>(
        loc,
        RankedTensorType::get({1, kvHeads, cache.past, 2 * half},
                              builder.getF32Type()),
        handoff.getResult(), nullptr, builder.getI64IntegerAttr(3),
        builder.getDenseI64ArrayAttr(cache.pastSlots()), nullptr);
    readBack.setView(ArrayRef<int64_t>{1, kvHeads, half, *slots, 2});
    readBack.setPermutation(rotateHalf ? ArrayRef<int64_t>{0, 1, 3, 4, 2}
                                       : ArrayRef<int64_t>{0, 1, 3, 2, 4});
    return readBack.getResult();
  }
};

} // namespace
