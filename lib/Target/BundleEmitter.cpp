//===- BundleEmitter.cpp - core.program to runtime program ----------------===//
#include "wafer/Target/BundleEmitter.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/WeightStore.h"
#include "wafer/Runtime/Bundle.h"
#include "wafer/Support/ToolSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <set>

using namespace mlir;
using namespace wafer;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

rt::Opcode combineOpcode(core::ElementwiseKind kind) {
  switch (kind) {
  case core::ElementwiseKind::add:
    return rt::Opcode::Add;
  case core::ElementwiseKind::mul:
    return rt::Opcode::Mul;
  case core::ElementwiseKind::max:
    return rt::Opcode::Max;
  case core::ElementwiseKind::swiglu:
    return rt::Opcode::Swiglu;
  }
  llvm_unreachable("unknown elementwise kind");
}

/// The attribute's values as floats: f32 as stored, other element types
/// converted one by one (an APFloat each, ten times slower).
static std::vector<float> floatValues(DenseElementsAttr attr) {
  if (attr.getElementType().isF32()) {
    auto values = attr.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  std::vector<float> values;
  values.reserve(attr.getNumElements());
  for (APFloat v : attr.getValues<APFloat>())
    values.push_back(v.convertToFloat());
  return values;
}

class ProgramEmitter {
public:
  ProgramEmitter(core::ProgramOp program, bool loadWeights,
                 uint64_t maxValueBytes)
      : program(program), loadWeights(loadWeights),
        maxValueBytes(maxValueBytes) {}

  llvm::Expected<rt::Program> run() {
    rt::Program result;
    result.target = mesh::getRuntimeTarget(program.getTarget());
    result.gridHeight = program.getGrid().getHeight();
    result.gridWidth = program.getGrid().getWidth();
    result.interleave = program.getInterleave();
    result.weightsOmitted = !loadWeights;
    if (auto capacity = program.getKvCapacityTokens())
      result.kvCapacityTokens = *capacity;
    if (IntegerAttr position = program.getPositionAttr())
      result.position = position.getInt();
    if (std::optional<ArrayRef<int64_t>> rows = program.getFabricRows())
      result.fabricRows.assign(rows->begin(), rows->end());
    if (std::optional<ArrayRef<int64_t>> cols = program.getFabricCols())
      result.fabricCols.assign(cols->begin(), cols->end());
    if (DictionaryAttr bound = program.getBoundInputsAttr())
      for (NamedAttribute entry : bound)
        result.boundInputs.push_back(
            {entry.getName().str(),
             cast<StringAttr>(entry.getValue()).getValue() == "positions"});
    std::optional<ArrayRef<int64_t>> estimates = program.getEstimatedCycles();
    for (auto [i, entry] : llvm::enumerate(program.getOps())) {
      auto names = cast<ArrayAttr>(entry);
      result.ops.push_back({cast<StringAttr>(names[0]).str(),
                            cast<StringAttr>(names[1]).str(),
                            cast<StringAttr>(names[2]).str(),
                            estimates ? (*estimates)[i] : -1});
    }
    Block &body = program.getBody().front();
    for (auto buffer : body.getOps<core::BufferOp>()) {
      bufferIndex[buffer.getSymName()] = int32_t(result.buffers.size());
      result.buffers.push_back({buffer.getSymName().str(),
                                int64_t(buffer.getElements()),
                                buffer.getElementType().isF16() ? rt::DType::F16
                                                                : rt::DType::F32,
                                int64_t(buffer.getOffset())});
    }
    for (auto channel : body.getOps<core::ChannelOp>()) {
      channelIndex[channel.getSymName()] = int32_t(result.channels.size());
      rt::Channel &out = result.channels.emplace_back();
      out.name = channel.getSymName().str();
      for (auto route : channel.getBody().getOps<core::RouteOp>()) {
        uint8_t mask = 0;
        for (int32_t dir : route.getOuts())
          mask |= uint8_t(1u << dir);
        // RouteOp's verifier keeps the color within the route budget.
        out.routes.push_back({int32_t(route.getColor()),
                              route.getCores().toRuntime(),
                              rt::Dir(unsigned(route.getIn())), mask});
      }
    }
    for (auto role : body.getOps<core::RoleOp>())
      result.roles.push_back({role.getSymName().str(),
                              role.getCores().toRuntime(),
                              instructions(role.getBody().front())});
    if (loadWeights)
      if (llvm::Error error = checkValueBytes(body, result))
        return std::move(error);
    std::map<std::pair<std::string, std::string>,
             std::pair<std::vector<int64_t>, rt::TensorValues>>
        loaded;
    for (auto input : body.getOps<core::InputOp>()) {
      auto tensor = hostTensor(input.getBuffer(), input.getName(),
                               input.getType());
      tensor.sourceShape.assign(input.getSourceShape().begin(),
                                input.getSourceShape().end());
      if (auto perm = input.getPermutation())
        tensor.permutation.assign(perm->begin(), perm->end());
      if (auto dim = input.getIndexDim()) {
        tensor.indexDim = *dim;
        tensor.indexMap.assign(input.getIndexMap()->begin(),
                               input.getIndexMap()->end());
      }
      if (auto view = input.getView())
        tensor.view.assign(view->begin(), view->end());
      if (auto view = input.getSourceView())
        tensor.sourceView.assign(view->begin(), view->end());
      // The embedding table stays on the host (it places the rows the ids
      // select), so it is no weight of the cores.
      tensor.weight = (input.getWeightFile() || input.getValue()) &&
                      !input.getGatherIds();
      if (auto file = input.getWeightFile(); file && !loadWeights) {
        if (auto ids = input.getGatherIds())
          tensor.gatherIds = ids->str();
      } else if (file) {
        // A weight placed more than once (a tied embedding, the parts of a
        // fused projection) is read once and its values shared.
        auto [known, first] = loaded.try_emplace(
            std::make_pair(file->str(), input.getName().str()));
        auto &[shape, values] = known->second;
        if (first) {
          llvm::Expected<WeightData> weight =
              weights.load(*file, input.getName());
          if (!weight)
            return weight.takeError();
          shape = std::move(weight->shape);
          values = rt::TensorValues(std::move(weight->values));
        }
        bool matches =
            input.getGatherIds()
                ? !shape.empty() && !tensor.sourceShape.empty() &&
                      shape.back() == tensor.sourceShape.back()
                : elementCount(shape) == elementCount(tensor.sourceShape);
        if (!matches)
          return fail(*file + ": initializer '" + input.getName() +
                      "' changed shape since import");
        if (auto ids = input.getGatherIds())
          tensor.gatherIds = ids->str();
        tensor.data = values;
      } else if (auto value = input.getValue(); value && loadWeights) {
        // Without weights the constants stay out too: the modes that run
        // such a program read no element data, and a 4096-token prefill's
        // RoPE tables are 128 copies of 2 MB.
        tensor.data = floatValues(cast<DenseElementsAttr>(*value));
      }
      result.inputs.push_back(std::move(tensor));
    }
    for (auto output : body.getOps<core::OutputOp>()) {
      result.outputs.push_back(
          hostTensor(output.getBuffer(), output.getName(), output.getType()));
      if (auto shape = output.getResultShape())
        result.outputs.back().sourceShape.assign(shape->begin(), shape->end());
      if (auto perm = output.getPermutation())
        result.outputs.back().permutation.assign(perm->begin(), perm->end());
      if (auto dim = output.getIndexDim()) {
        result.outputs.back().indexDim = *dim;
        result.outputs.back().indexMap.assign(output.getIndexMap()->begin(),
                                              output.getIndexMap()->end());
      }
      if (auto view = output.getView())
        result.outputs.back().view.assign(view->begin(), view->end());
    }
    return result;
  }

private:
  /// Weights may be placed under another shape of the same elements (a
  /// projection's output dimension split into heads).
  static int64_t elementCount(ArrayRef<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }

  rt::HostTensor hostTensor(StringRef buffer, StringRef name, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    rt::HostTensor host;
    host.name = name.str();
    host.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    host.buffer = bufferIndex.lookup(buffer);
    host.layout = mesh::getLayout(tensor).toRuntime();
    return host;
  }

  std::vector<rt::Instr> instructions(Block &block) {
    std::vector<rt::Instr> list;
    for (Operation &op : block) {
      rt::Instr instr;
      auto buf = [&](StringRef name) {
        instr.bufs.push_back(bufferIndex.lookup(name));
      };
      llvm::TypeSwitch<Operation *>(&op)
          .Case<core::GemmTileOp>([&](auto op) {
            instr.op = rt::Opcode::GemmTile;
            buf(op.getC()), buf(op.getA()), buf(op.getB());
            instr.m = op.getM(), instr.k = op.getK(), instr.n = op.getN();
          })
          .Case<core::GemvTileOp>([&](auto op) {
            instr.op = rt::Opcode::GemvTile;
            buf(op.getC()), buf(op.getA()), buf(op.getB());
            instr.m = 1, instr.k = op.getK(), instr.n = op.getN();
          })
          .Case<core::ElementwiseOp>([&](auto op) {
            instr.op = combineOpcode(op.getKind());
            buf(op.getOut()), buf(op.getA()), buf(op.getB());
          })
          .Case<core::RowsOp>([&](auto op) {
            std::tie(instr.op, instr.k) = op.toRuntime();
            for (Attribute ref : op.getBuffers())
              buf(cast<FlatSymbolRefAttr>(ref).getValue());
            instr.m = op.getM(), instr.n = op.getN();
            instr.groups = op.getGroups();
            instr.scalar = op.getScalar().convertToDouble();
            instr.length = op.getLength();
            instr.parts = op.getParts();
            if (op.getValid())
              instr.expr = op.getValid()->str();
            if (op.getPosition())
              instr.expr2 = op.getPosition()->str();
          })
          .Case<core::ZeroOp>([&](auto op) {
            instr.op = rt::Opcode::Zero;
            buf(op.getBuffer());
          })
          .Case<core::SwapOp>([&](auto op) {
            instr.op = rt::Opcode::Swap;
            buf(op.getA()), buf(op.getB());
          })
          .Case<core::RotateSlotsOp>([&](auto op) {
            instr.op = rt::Opcode::RotateSlots;
            buf(op.getBuffer());
            instr.n = op.getSlot();
          })
          .Case<core::CopyOp>([&](auto op) {
            instr.op = rt::Opcode::Copy;
            buf(op.getDst());
            buf(op.getSrc());
            instr.n = op.getSize();
            instr.expr = op.getDstSlot().str();
            instr.expr2 = op.getSrcSlot().str();
          })
          .Case<core::SendOp>([&](auto op) {
            instr.op = rt::Opcode::Send;
            buf(op.getBuffer());
            instr.channel = channelIndex.lookup(op.getChannel());
          })
          .Case<core::RecvOp>([&](auto op) {
            instr.op = rt::Opcode::Recv;
            buf(op.getBuffer());
            instr.channel = channelIndex.lookup(op.getChannel());
          })
          .Case<core::RelayOp>([&](auto op) {
            instr.op = rt::Opcode::Relay;
            buf(op.getBuffer());
            instr.channel = channelIndex.lookup(op.getFrom());
            instr.channel2 = channelIndex.lookup(op.getTo());
          })
          .Case<core::CombineRelayOp>([&](auto op) {
            instr.op = rt::Opcode::CombineRelay;
            buf(op.getSum()), buf(op.getPartial());
            instr.channel = channelIndex.lookup(op.getChannel());
            instr.k = int64_t(combineOpcode(op.getKind()));
          })
          .Case<core::RepeatOp>([&](auto op) {
            instr.op = rt::Opcode::Repeat;
            instr.expr = op.getCount().str();
            instr.body = instructions(op.getBody().front());
          })
          .Case<core::WhenOp>([&](auto op) {
            instr.op = rt::Opcode::When;
            instr.expr = op.getCondition().str();
            instr.body = instructions(op.getBody().front());
          })
          .Case<core::MarkOp>([&](auto op) {
            instr.op = rt::Opcode::Mark;
            instr.mark = op.getOpIndex();
          });
      list.push_back(std::move(instr));
    }
    return list;
  }

  /// Refuses, before any weight is read, values that would take more than
  /// maxValueBytes as a bundle stores them: each weight once, as halves
  /// in an f16 buffer. The sizes come from the files' metadata.
  llvm::Error checkValueBytes(Block &body, const rt::Program &p) {
    if (maxValueBytes == UINT64_MAX)
      return llvm::Error::success();
    uint64_t bytes = 0;
    std::set<std::pair<std::string, std::string>> counted;
    for (auto input : body.getOps<core::InputOp>()) {
      int64_t count = 0;
      if (auto file = input.getWeightFile()) {
        if (!counted.emplace(file->str(), input.getName().str()).second)
          continue;
        llvm::Expected<std::vector<int64_t>> shape =
            weights.shape(*file, input.getName());
        if (!shape)
          return shape.takeError();
        count = elementCount(*shape);
      } else if (auto value = input.getValue()) {
        count = cast<DenseElementsAttr>(*value).getNumElements();
      }
      rt::HostTensor tensor =
          hostTensor(input.getBuffer(), input.getName(), input.getType());
      bool halves = tensor.buffer >= 0 &&
                    size_t(tensor.buffer) < p.buffers.size() &&
                    p.buffers[tensor.buffer].dtype == rt::DType::F16;
      uint64_t size = uint64_t(std::max<int64_t>(count, 0));
      bytes = size > (UINT64_MAX - bytes) / 4 ? UINT64_MAX
                                              : bytes + size * (halves ? 2 : 4);
    }
    if (bytes <= maxValueBytes)
      return llvm::Error::success();
    return fail(llvm::formatv("no bundle: the model's values take {0} bytes, "
                              "more than a bundle can hold ({1} bytes, "
                              "FlatBuffers' limit); run the model file itself",
                              bytes, maxValueBytes));
  }

  core::ProgramOp program;
  bool loadWeights;
  uint64_t maxValueBytes;
  llvm::StringMap<int32_t> bufferIndex, channelIndex;
  WeightStore weights;
};

} // namespace

llvm::Expected<rt::Program> wafer::buildRuntimeProgram(ModuleOp module,
                                                       bool loadWeights,
                                                       uint64_t maxValueBytes) {
  auto programs = module.getOps<core::ProgramOp>();
  if (programs.empty())
    return fail("the module has no core.program (run the compile pipeline "
                "first)");
  if (std::next(programs.begin()) != programs.end())
    return fail("the module has more than one core.program");
  return ProgramEmitter(*programs.begin(), loadWeights, maxValueBytes).run();
}

void wafer::registerBundleTranslations() {
  TranslateRegistration emit(
      "emit-bundle", "Write the module's core.program as a program bundle",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr, raw_ostream &os,
         MLIRContext *context) -> LogicalResult {
        context->loadDialect<core::CoreDialect, mesh::MeshDialect,
                             tfm::TfmDialect, func::FuncDialect>();
        // MLIR's parser recurses per nesting level: bound it first.
        if (llvm::Error error = checkNestingDepth(
                *sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID()))) {
          llvm::errs() << "error: " << llvm::toString(std::move(error))
                       << "\n";
          return failure();
        }
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
        if (!module)
          return failure();
        // Relative weight files are the module's neighbours.
        StringRef modulePath =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID())
                ->getBufferIdentifier();
        module->walk([&](core::InputOp input) {
          if (std::optional<StringRef> file = input.getWeightFile())
            input.setWeightFile(resolveWeightSource(*file, modulePath));
        });
        llvm::Expected<rt::Program> program = buildRuntimeProgram(
            *module, /*loadWeights=*/true, rt::kMaxBundleBytes);
        if (!program)
          return module->emitError(llvm::toString(program.takeError()));
        llvm::Expected<std::vector<uint8_t>> bytes =
            rt::serializeBundle(*program);
        if (!bytes)
          return module->emitError(llvm::toString(bytes.takeError()));
        os.write(reinterpret_cast<const char *>(bytes->data()), bytes->size());
        return success();
      });
  TranslateRegistration dump(
      "dump-bundle", "Print a program bundle as text",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr, raw_ostream &os,
         MLIRContext *context) -> LogicalResult {
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        llvm::Expected<rt::Program> program = rt::deserializeBundle(
            buffer->getBuffer(), buffer->getBufferIdentifier());
        if (!program)
          return emitError(UnknownLoc::get(context))
                 << llvm::toString(program.takeError());
        rt::dumpProgram(*program, os);
        return success();
      });
}
