//===- ProgramLowering.cpp - mesh ops to one core.program -----------------===//
//
// The lowering's declarations (buffers, channels), its walk over @main and
// the ops without an algorithm of their own: placement, element-wise maps
// and the outputs. Each distributed algorithm's lowering is in its own
// file (Lower<Algorithm>.cpp).
//
//===----------------------------------------------------------------------===//
#include "ProgramLowering.h"

using namespace mlir;
using namespace wafer;

namespace wafer::lowering {

LogicalResult ProgramLowering::run() {
  MLIRContext *context = module.getContext();
  memory = planMemory(main, grid, target.getValue().sramBytes);
  if (memory.conflict)
    return memory.conflict.emitError("convert-mesh-to-core: the host input "
                                     "at sram_offset ")
           << *memory.conflict.getSramOffset()
           << " overlaps another input's fixed place";
  interleave = mesh::isInterleaved(main);
  builder.setInsertionPointToEnd(module.getBody());
  llvm::Expected<rt::FabricPlacement> placement = rt::placeAroundDefects(
      target.getValue(), grid.getHeight(), grid.getWidth());
  if (!placement)
    return module.emitError("convert-mesh-to-core: ")
           << llvm::toString(placement.takeError());
  auto array = [&](const std::vector<int64_t> &v) {
    return v.empty() ? nullptr : builder.getDenseI64ArrayAttr(v);
  };
  program = builder.create<core::ProgramOp>(
      main.getLoc(), grid, target, interleave ? builder.getUnitAttr() : nullptr,
      builder.getArrayAttr({}), nullptr, nullptr, nullptr,
      array(placement->rows), array(placement->cols),
      module->getAttrOfType<DictionaryAttr>("tfm.bound_inputs"));
  program.getBody().emplaceBlock();
  builder.setInsertionPointToEnd(&program.getBody().front());
  auto role = builder.create<core::RoleOp>(
      main.getLoc(), "all",
      core::CoreSetAttr::get(context, 0, w - 1, 1, 0, h - 1, 1));
  role.getBody().emplaceBlock();
  // Buffers and channels go before the role, host bindings after it.
  declarations.setInsertionPoint(role);
  instructions.setInsertionPointToStart(&role.getBody().front());
  bindings.setInsertionPointToEnd(&program.getBody().front());

  for (Operation &op : main.getBody().front()) {
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case<mesh::DistributeOp>([&](auto op) { return lower(op); })
            .Case<mesh::GemmOp>([&](auto op) { return lower(op); })
            .Case<mesh::GemvOp>([&](auto op) { return lower(op); })
            .Case<mesh::MapOp, mesh::RelayoutOp, mesh::RmsNormOp, mesh::RopeOp,
                  mesh::KvAppendOp, mesh::KvHandoffOp, mesh::AttentionOp>(
                [&](auto op) { return lower(op); })
            .Case<func::ReturnOp>([&](auto op) { return lower(op); })
            .Case<mesh::CollectOp, tfm::WeightOp, tfm::ConstantOp,
                  tfm::ReshapeOp, tfm::EmbedOp, tfm::TransposeOp>(
                [&](auto) { return success(); })
            .Default([&](Operation *op) {
              return op->emitError("convert-mesh-to-core: cannot lower '")
                     << op->getName() << "'";
            });
    if (failed(result))
      return failure();
  }
  program.setOpsAttr(builder.getArrayAttr(opsInfo));
  // An op's estimate is how much later the last core is done with it than
  // with the op before: the ops' estimates add up to the last core's time.
  SmallVector<int64_t> estimatedCycles;
  for (size_t i = 0; i < latestAfterOp.size(); ++i)
    estimatedCycles.push_back(latestAfterOp[i] -
                              (i ? latestAfterOp[i - 1] : 0));
  program.setEstimatedCycles(estimatedCycles);
  if (std::optional<int64_t> capacity = kvCapacityTokens())
    program.setKvCapacityTokens(*capacity);
  main.walk([&](mesh::KvAppendOp append) {
    program.setPositionAttr(builder.getI64IntegerAttr(append.getPosition()));
  });
  return success();
}

std::optional<int64_t> ProgramLowering::kvCapacityTokens() {
  int64_t perToken = 0, scores = 0;
  std::optional<KvCacheLayout> layout;
  main.walk([&](mesh::KvAppendOp append) {
    perToken += bufferBytes(localElements(append.getNewEntry(), grid),
                            elementOf(append));
    layout = getKvCacheLayout(append);
  });
  main.walk([&](mesh::AttentionOp attention) {
    if (!attention.isDecode())
      return;
    // Each key adds its scores, and over lanes as much again to each
    // buffer the sum of the partial scores along x receives into.
    int64_t copies = 1;
    if (attention.getLanesPerHead())
      copies += llvm::count_if(
          scratchBuffers(attention, grid), [](const ScratchBuffer &b) {
            return b.message == 0 && receivesAllreduce(b.role);
          });
    scores = std::max(scores, copies * bufferBytes(attention.scoresPerKey(grid),
                                                   elementOf(attention)));
  });
  perToken += scores;
  if (!layout || perToken == 0)
    return std::nullopt;
  int64_t more = (target.getValue().sramBytes - memory.peakBytes) / perToken;
  if (layout->policy == mesh::KvPolicy::concat)
    return layout->slotsPerRow - layout->countAfter(h - 1) + more;
  int64_t spare = 0;
  for (int64_t row = 0; row < h; ++row)
    spare += layout->slotsPerRow - layout->countAfter(row);
  return spare + h * more;
}

FailureOr<FlatSymbolRefAttr>
ProgramLowering::newBuffer(Location loc, StringRef name, int64_t elements,
                           Type elementType, int64_t offset) {
  int64_t bytes = bufferBytes(elements, elementType);
  if (offset + bytes > target.getValue().sramBytes)
    return emitError(loc, "convert-mesh-to-core: per-core SRAM exhausted: "
                          "buffer '")
           << name << "' needs " << bytes << " bytes at offset " << offset
           << " but target '" << target.getName() << "' has "
           << target.getValue().sramBytes << " bytes per core";
  declarations.create<core::BufferOp>(loc, name, elements, elementType, offset);
  bufferSizes[name] = elements;
  return FlatSymbolRefAttr::get(declarations.getContext(), name);
}

FailureOr<FlatSymbolRefAttr> ProgramLowering::bufferFor(Value v) {
  if (FlatSymbolRefAttr existing = buffers.lookup(v))
    return existing;
  auto buffer = newBuffer(v.getLoc(), "t" + std::to_string(buffers.size()),
                          localElements(v, grid),
                          cast<RankedTensorType>(v.getType()).getElementType(),
                          memory.valueOffsets.lookup(v));
  if (succeeded(buffer))
    buffers[v] = *buffer;
  return buffer;
}

FlatSymbolRefAttr ProgramLowering::channelFor(const ChannelFamily &family,
                                              int32_t baseColor) {
  if (FlatSymbolRefAttr existing = channels.lookup(family.name))
    return existing;
  Location loc = program.getLoc();
  OpBuilder::InsertionGuard guard(declarations);
  auto channel = declarations.create<core::ChannelOp>(loc, family.name);
  channel.getBody().emplaceBlock();
  declarations.setInsertionPointToStart(&channel.getBody().front());
  for (const rt::Route &route : rt::buildRoutes(family.paths, family.colors,
                                                family.axis, h, w, baseColor)) {
    SmallVector<int32_t> outs;
    for (unsigned d = 0; d < 5; ++d)
      if (route.outMask & (1u << d))
        outs.push_back(int32_t(d));
    declarations.create<core::RouteOp>(
        loc, declarations.getI32IntegerAttr(route.color),
        core::CoreSetAttr::get(declarations.getContext(), route.cores),
        core::DirAttr::get(declarations.getContext(),
                           core::Dir(unsigned(route.in))),
        declarations.getDenseI32ArrayAttr(outs));
  }
  auto ref = FlatSymbolRefAttr::get(channel.getSymNameAttr());
  channels[family.name] = ref;
  return ref;
}

FailureOr<OpChannels> ProgramLowering::channelsFor(Operation *op) {
  std::vector<ChannelFamily> families =
      getChannelFamilies(op, grid, interleave);
  auto colors = op->getAttrOfType<DenseI32ArrayAttr>("colors");
  if (!colors || colors.size() != int64_t(families.size()))
    return op->emitError("convert-mesh-to-core: routing colors missing "
                         "(run mesh-allocate-routes first)");
  OpChannels result;
  for (auto [family, base] : llvm::zip(families, colors.asArrayRef()))
    result.add({family.role, family.level, family.axis},
               channelFor(family, base));
  return result;
}

FailureOr<OpScratch> ProgramLowering::scratchFor(Operation *op, StringRef tag) {
  OpScratch result;
  for (auto [index, scratch] : llvm::enumerate(scratchBuffers(op, grid))) {
    auto buffer =
        newBuffer(op->getLoc(), (tag + scratch.suffix()).str(),
                  scratch.elements, scratch.elementType(elementOf(op)),
                  memory.scratchOffsets.lookup({op, index}));
    if (failed(buffer))
      return failure();
    result.add({scratch.role, scratch.message}, *buffer);
  }
  return result;
}

FailureOr<ProgramLowering::OpResources>
ProgramLowering::resourcesFor(Operation *op, StringRef kind,
                              ArrayRef<Value> values) {
  OpResources resources;
  auto channels = channelsFor(op);
  if (failed(channels))
    return failure();
  resources.channels = std::move(*channels);
  for (Value value : values) {
    auto buffer = bufferFor(value);
    if (failed(buffer))
      return failure();
    resources.buffers.push_back(*buffer);
  }
  auto scratch = scratchFor(op, (kind + Twine(opsInfo.size())).str());
  if (failed(scratch))
    return failure();
  resources.scratch = std::move(*scratch);
  return resources;
}

int64_t ProgramLowering::recordOp(Operation *op, StringRef kind,
                                  StringRef algorithm) {
  std::string name = locationName(op->getLoc());
  if (name.empty())
    name = (kind + Twine(opsInfo.size())).str();
  opsInfo.push_back(builder.getStrArrayAttr({name, kind, algorithm}));
  // An op simulated together with the ops before it revises their ends.
  cast<mesh::CostedOpInterface>(op).advanceClock(clock, grid, timing,
                                                 interleave);
  std::vector<int64_t> run = clock.runLatests();
  latestAfterOp.push_back(0);
  assert(run.size() <= latestAfterOp.size() && "a run of recorded ops");
  std::copy(run.begin(), run.end(), latestAfterOp.end() - run.size());
  return int64_t(opsInfo.size()) - 1;
}

void ProgramLowering::startShift(Location loc, const RingShift &s) {
  if (s.extent > 1)
    instructions.create<core::SendOp>(loc, s.buffer, s.channel);
}

void ProgramLowering::finishShift(Location loc, const RingShift &s) {
  if (s.extent == 1) {
    if (s.slots > 1)
      instructions.create<core::RotateSlotsOp>(loc, s.buffer, i64(s.slotSize));
    return;
  }
  instructions.create<core::RecvOp>(loc, s.next, s.channel);
  if (s.slots > 1)
    when(loc, s.lastPosition, [&] {
      instructions.create<core::RotateSlotsOp>(loc, s.next, i64(s.slotSize));
    });
  instructions.create<core::SwapOp>(loc, s.buffer, s.next);
}

void ProgramLowering::visitRingTiles(
    Location loc, const OpChannels &channels, const OpScratch &scratch,
    FlatSymbolRefAttr source, bool alongX,
    llvm::function_ref<void(FlatSymbolRefAttr, const std::string &)> visit) {
  int64_t extent = alongX ? w : h;
  std::string pos = alongX ? "lx" : "ly", ext = alongX ? "W" : "H";
  visit(source, pos);
  if (extent == 1)
    return;
  // After s shifts a core holds the tile of ring position pos + s.
  FlatSymbolRefAttr passing = scratch.get(BufferRole::Passing),
                    next = scratch.get(BufferRole::Arriving);
  instructions.create<core::CopyOp>(loc, passing, builder.getStringAttr("0"),
                                    source, builder.getStringAttr("0"),
                                    i64(localSize(passing)));
  RingShift shift{passing, next, channels.get(ChannelRole::Ring),
                  extent,  1,    localSize(passing),
                  ""};
  repeat(loc, std::to_string(extent - 1), [&] {
    startShift(loc, shift);
    finishShift(loc, shift);
    visit(passing, llvm::formatv("({0} + i + 1) % {1}", pos, ext).str());
  });
}

LogicalResult ProgramLowering::lower(mesh::DistributeOp op) {
  auto buffer = bufferFor(op.getResult());
  if (failed(buffer))
    return failure();
  // Host-side reshapes only rename the row-major source's shape.
  Value source = op.getSource();
  auto sourceType = cast<RankedTensorType>(source.getType());
  while (auto reshape = source.getDefiningOp<tfm::ReshapeOp>())
    source = reshape.getInput();
  auto input = bindings.create<core::InputOp>(
      op.getLoc(), *buffer, bindings.getStringAttr(""),
      TypeAttr::get(op.getResult().getType()),
      bindings.getDenseI64ArrayAttr(sourceType.getShape()),
      op.getPermutationAttr(), nullptr, nullptr, nullptr, op.getIndexDimAttr(),
      op.getIndexMapAttr(), op.getViewAttr(), nullptr);
  auto argumentName = [&](BlockArgument arg) {
    return tfm::inputName(main, arg.getArgNumber());
  };
  if (auto arg = dyn_cast<BlockArgument>(source)) {
    input.setName(argumentName(arg));
    // The user supplies the argument's shape; the permutation reads the
    // host's reshape of it.
    auto argType = cast<RankedTensorType>(arg.getType());
    if (argType.getShape() != sourceType.getShape()) {
      input.setSourceShape(argType.getShape());
      input.setSourceView(sourceType.getShape());
    }
  } else if (auto weight = source.getDefiningOp<tfm::WeightOp>()) {
    input.setName(weight.getName());
    input.setWeightFileAttr(weight.getSourceAttr());
  } else if (auto constant = source.getDefiningOp<tfm::ConstantOp>()) {
    input.setName("constant");
    input.setValueAttr(
        cast<DenseElementsAttr>(constant.getValue()).reshape(sourceType));
  } else if (auto embed = source.getDefiningOp<tfm::EmbedOp>()) {
    auto table = embed.getTable().getDefiningOp<tfm::WeightOp>();
    auto ids = dyn_cast<BlockArgument>(embed.getIds());
    if (!table || !ids)
      return op.emitError("convert-mesh-to-core: an embedding is placed "
                          "only from a weight table and a graph input");
    input.setName(table.getName());
    input.setWeightFileAttr(table.getSourceAttr());
    input.setGatherIds(argumentName(ids));
  } else {
    return op.emitError("convert-mesh-to-core: cannot place this host value");
  }
  return success();
}

LogicalResult ProgramLowering::lower(mesh::MapOp op) {
  auto lhs = bufferFor(op.getLhs()), rhs = bufferFor(op.getRhs()),
       out = bufferFor(op.getResult());
  if (failed(lhs) || failed(rhs) || failed(out))
    return failure();
  core::ElementwiseKind kind = core::ElementwiseKind::add;
  if (op.getKind() == mesh::MapKind::mul)
    kind = core::ElementwiseKind::mul;
  else if (op.getKind() == mesh::MapKind::swiglu)
    kind = core::ElementwiseKind::swiglu;
  instructions.create<core::ElementwiseOp>(op.getLoc(), elementwiseKind(kind),
                                           *out, *lhs, *rhs);
  instructions.create<core::MarkOp>(
      op.getLoc(), recordOp(op, "map", mesh::stringifyMapKind(op.getKind())));
  return success();
}

LogicalResult ProgramLowering::lower(func::ReturnOp op) {
  for (auto [i, value] : llvm::enumerate(op.getOperands())) {
    std::string name = tfm::outputName(main, i);
    auto collect = value.getDefiningOp<mesh::CollectOp>();
    if (!collect)
      return op.emitError("convert-mesh-to-core: output '")
             << name << "' is not computed on the grid";
    auto buffer = bufferFor(collect.getSource());
    if (failed(buffer))
      return failure();
    auto sourceType = cast<RankedTensorType>(collect.getSource().getType());
    ArrayRef<int64_t> shape = collect.getResult().getType().getShape();
    bindings.create<core::OutputOp>(
        op.getLoc(), *buffer, bindings.getStringAttr(name),
        TypeAttr::get(sourceType),
        shape == sourceType.getShape() && !collect.getPermutation() &&
                !collect.getIndexDim() && !collect.getView()
            ? nullptr
            : bindings.getDenseI64ArrayAttr(shape),
        collect.getPermutationAttr(), collect.getIndexDimAttr(),
        collect.getIndexMapAttr(), collect.getViewAttr());
  }
  return success();
}

} // namespace wafer::lowering
