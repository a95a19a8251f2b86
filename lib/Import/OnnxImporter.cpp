//===- OnnxImporter.cpp - ONNX models to tfm ------------------------------===//
//
// Parses the model with protobuf's generated classes (libonnx), runs the
// ONNX checker, and builds a tfm function node by node (OnnxNodes.cpp).
// Large weights stay in their file, external data included: the IR refers to
// them by initializer name and nothing reads them during import.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "OnnxChecker.h"
#include "wafer/Dialect/Tfm/TfmOps.h"
#include "wafer/Import/WeightStore.h"
#include "wafer/Support/CheckedMath.h"
#include "wafer/Support/RegularFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace wafer;
using namespace wafer::onnx_import;

/// Initializers up to this many elements become tfm.constant (their values
/// are needed for shapes and folding); larger ones are weight references.
static constexpr int64_t kConstantInitializerLimit = 256;

/// The newest default-domain opset the importer knows. Opsets 19 to 21 add
/// only element types (float8, int4) and attributes of them, which the
/// importer rejects by type; newer ones may change semantics it has not seen.
static constexpr int64_t kNewestOpset = 21;

llvm::Error onnx_import::fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string onnx_import::shapeText(ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(shape,
                                    [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// Reads and parses an ONNX file; the error starts with the path.
static llvm::Expected<onnx::ModelProto> parseModel(llvm::StringRef path) {
  if (llvm::Error special = wafer::refuseSpecialFile(path))
    return std::move(special);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(path + ": cannot open: " + file.getError().message());
  onnx::ModelProto model;
  llvm::StringRef bytes = (*file)->getBuffer();
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    return fail(path + ": not a valid ONNX model (protobuf parsing failed; "
                       "truncated or not ONNX?)");
  if (!model.has_graph() || model.graph().node_size() == 0)
    return fail(path + ": not a valid ONNX model (no graph nodes)");
  return model;
}

llvm::Error wafer::parseInputShape(llvm::StringRef text,
                                   OnnxImportOptions &options) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return fail("--input-shape '" + text + "': expected NAME=D0xD1x...");
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t d;
    // 0 is a size as any other (an empty past KV cache), as in --inputs.
    if (part.getAsInteger(10, d) || d < 0)
      return fail("--input-shape '" + text + "': dimension '" + part +
                  "' is not a non-negative integer");
    shape.push_back(d);
  }
  if (!options.inputShapes.try_emplace(name.str(), shape).second)
    return fail("--input-shape " + name + " is given twice");
  return llvm::Error::success();
}

llvm::Error wafer::parseDimParam(llvm::StringRef text,
                                 OnnxImportOptions &options) {
  auto [name, value] = text.split('=');
  int64_t n;
  if (name.empty() || value.empty())
    return fail("--dim-param '" + text + "': expected NAME=N");
  if (value.getAsInteger(10, n) || n < 0)
    return fail("--dim-param '" + text + "': '" + value +
                "' is not a non-negative integer");
  auto [it, fresh] = options.dimParams.try_emplace(name.str(), n);
  if (!fresh && it->second != n)
    return fail("--dim-param " + name + " is given twice, as " +
                llvm::Twine(it->second) + " and " + llvm::Twine(n));
  if (!fresh)
    return fail("--dim-param " + name + " is given twice");
  return llvm::Error::success();
}

GraphImporter::GraphImporter(llvm::StringRef path,
                             const onnx::ModelProto &model,
                             const OnnxImportOptions &options,
                             MLIRContext *context)
    : path(path), modelDir(llvm::sys::path::parent_path(path)),
      weightSource(absolutePath(path)), model(model), graph(model.graph()),
      options(options), context(context), builder(context),
      loc(UnknownLoc::get(context)) {
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = import.version();
}

/// "[1, 2, 8]".
static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(shape,
                                    [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

/// The input's static shape: declared dimensions, with dynamic ones bound by
/// --input-shape (which wins over the --inputs arrays), --dim-param or the
/// shape of the array the model will run on. A --dim-param that disagrees
/// with either of the others is an error naming the input and dimension.
static llvm::Expected<SmallVector<int64_t>>
inputShape(llvm::StringRef path, const onnx::ValueInfoProto &input,
           const OnnxImportOptions &options) {
  const auto &dims = input.type().tensor_type().shape().dim();
  // The value --dim-param gives dimension i, if any.
  auto named = [&](int i) -> std::optional<int64_t> {
    const auto &dim = dims[i];
    if (dim.has_dim_value() || dim.dim_param().empty())
      return std::nullopt;
    auto it = options.dimParams.find(dim.dim_param());
    if (it == options.dimParams.end())
      return std::nullopt;
    return it->second;
  };
  auto conflict = [&](llvm::StringRef source, int i, int64_t value) {
    return fail(path + ": input '" + input.name() + "' dimension " +
                llvm::Twine(i) + " ('" + dims[i].dim_param() + "') is " +
                llvm::Twine(value) + " by " + source + " but " +
                llvm::Twine(*named(i)) + " by --dim-param " +
                dims[i].dim_param() + "=" + llvm::Twine(*named(i)));
  };
  auto bound = options.inputShapes.find(input.name());
  if (bound != options.inputShapes.end()) {
    const std::vector<int64_t> &shape = bound->second;
    if (int64_t(shape.size()) != dims.size())
      return fail(path + ": --input-shape " + input.name() + " has rank " +
                  llvm::Twine(shape.size()) + ", the input has rank " +
                  llvm::Twine(dims.size()));
    for (auto [i, dim] : llvm::enumerate(dims)) {
      if (dim.has_dim_value() && dim.dim_value() != shape[i])
        return fail(path + ": --input-shape " + input.name() + " sets dimension " +
                    llvm::Twine(i) + " to " + llvm::Twine(shape[i]) +
                    ", the model fixes it to " + llvm::Twine(dim.dim_value()));
      if (named(i) && *named(i) != shape[i])
        return conflict("--input-shape", i, shape[i]);
    }
    return SmallVector<int64_t>(shape.begin(), shape.end());
  }
  SmallVector<int64_t> shape;
  bool unbound = false;
  for (int i = 0; i < dims.size(); ++i) {
    std::optional<int64_t> value = named(i);
    if (dims[i].has_dim_value())
      value = dims[i].dim_value();
    unbound |= !value;
    shape.push_back(value.value_or(-1));
  }
  auto hint = options.shapeHints.find(input.name());
  bool dynamic = llvm::any_of(dims, [](const auto &d) { return !d.has_dim_value(); });
  if (dynamic && hint != options.shapeHints.end()) {
    const std::vector<int64_t> &given = hint->second;
    bool agrees = int64_t(given.size()) == dims.size();
    for (auto [i, dim] : llvm::enumerate(dims))
      agrees = agrees && (!dim.has_dim_value() || dim.dim_value() == given[i]);
    if (!agrees)
      return fail(path + ": input '" + input.name() + "' is given with shape " +
                  formatShape(given) +
                  ", which does not fit the model's declared shape");
    for (int i = 0; i < dims.size(); ++i)
      if (named(i) && *named(i) != given[i])
        return conflict("the --inputs array of shape " + formatShape(given), i,
                        given[i]);
    return SmallVector<int64_t>(given.begin(), given.end());
  }
  if (unbound)
    for (int i = 0; i < dims.size(); ++i)
      if (shape[i] < 0)
        return fail(path + ": input '" + input.name() +
                    "' has a dynamic dimension '" + dims[i].dim_param() +
                    "'; bind it with --input-shape " + input.name() + "=..." +
                    (dims[i].dim_param().empty()
                         ? std::string()
                         : " or --dim-param " + dims[i].dim_param() + "=N"));
  return shape;
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run() {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  llvm::StringSet<> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  for (const auto &[name, shape] : options.inputShapes)
    if (llvm::none_of(graph.input(), [&](const onnx::ValueInfoProto &input) {
          return input.name() == name && !initializers.count(name);
        }))
      return fail(path + ": --input-shape names '" + name +
                  "', which is not a graph input");
  // Every --dim-param must name a dynamic dimension of some graph input.
  std::set<std::string> dimNames;
  for (const auto &input : graph.input())
    if (!initializers.count(input.name()))
      for (const auto &dim : input.type().tensor_type().shape().dim())
        if (!dim.has_dim_value() && !dim.dim_param().empty())
          dimNames.insert(dim.dim_param());
  for (const auto &[name, value] : options.dimParams)
    if (!dimNames.count(name))
      return fail(path + ": --dim-param " + name +
                  " names no dimension of the graph's inputs (" +
                  (dimNames.empty()
                       ? std::string("they have no named dimensions")
                       : "named: " + llvm::join(dimNames, ", ")) +
                  ")");

  if (opset > kNewestOpset || opset < 1)
    return fail(path + ": opset " + llvm::Twine(opset) +
                " of the default ONNX domain is not supported (1 to " +
                llvm::Twine(kNewestOpset) + ")");

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    if (!input.type().has_tensor_type())
      return fail(path + ": input '" + input.name() + "' is not a tensor");
    if (!input.type().tensor_type().has_shape())
      return fail(path + ": input '" + input.name() +
                  "' declares no shape (not even its rank); the importer "
                  "needs one");
    auto element = elementType(builder, input.type().tensor_type().elem_type(),
                               path + ": input '" + input.name() + "'");
    if (!element)
      return element.takeError();
    auto shape = inputShape(path, input, options);
    if (!shape)
      return shape.takeError();
    if (!checkedElementCount(*shape))
      return fail(path + ": input '" + input.name() + "' of shape " +
                  formatShape(*shape) + " holds more than 2^63 elements");
    argTypes.push_back(tensorType(*shape, *element));
    argNames.push_back(input.name());
  }
  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, "main", builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "tfm.name", builder.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }
  builder.setInsertionPointToStart(entry);
  if (llvm::Error error = importInitializers(fileLoc))
    return std::move(error);
  for (auto [index, n] : llvm::enumerate(graph.node()))
    if (llvm::Error error = importNode(n, index, fileLoc))
      return std::move(error);

  // Nothing to compute: every run would succeed and say nothing.
  if (graph.output_size() == 0)
    return fail(path + ": the graph has no outputs");
  SmallVector<Value> results;
  SmallVector<Attribute> outputNames;
  for (const auto &output : graph.output()) {
    Value v = values.lookup(output.name());
    if (!v)
      return fail(path + ": graph output '" + output.name() +
                  "' is produced by no node");
    ArrayRef<int64_t> computed = cast<RankedTensorType>(v.getType()).getShape();
    const auto &dims = output.type().tensor_type().shape().dim();
    bool agrees = !output.type().tensor_type().has_shape() ||
                  int64_t(computed.size()) == dims.size();
    for (int i = 0; agrees && i < dims.size(); ++i)
      agrees = !dims[i].has_dim_value() || dims[i].dim_value() == computed[i];
    if (!agrees)
      return fail(path + ": graph output '" + output.name() +
                  "' is declared with a shape that differs from the computed " +
                  shapeText(computed));
    results.push_back(v);
    outputNames.push_back(builder.getStringAttr(output.name()));
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func->setAttr("tfm.output_names", builder.getArrayAttr(outputNames));
  return std::move(module);
}

llvm::Error GraphImporter::importInitializers(Location fileLoc) {
  for (const auto &init : graph.initializer()) {
    loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
    std::string where = path + ": initializer '" + init.name() + "'";
    auto element = elementType(builder, init.data_type(), where);
    if (!element)
      return element.takeError();
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return fail(where + " has a negative dimension");
    bool isFloat = element->isF32();
    llvm::Expected<TensorSize> size = tensorSize(init, where);
    if (!size)
      return size.takeError();
    if (isFloat && size->count > kConstantInitializerLimit) {
      // Checked now, read later: a bad location or size fails the import.
      if (init.data_location() == onnx::TensorProto::EXTERNAL) {
        auto data = locateExternalData(init, modelDir, where, size->bytes);
        if (!data)
          return data.takeError();
      } else if (init.has_raw_data() &&
                 int64_t(init.raw_data().size()) != size->bytes) {
        return fail(where + " has " + llvm::Twine(init.raw_data().size()) +
                    " bytes of data, its shape needs " +
                    llvm::Twine(size->bytes));
      }
      values[init.name()] = builder.create<tfm::WeightOp>(
          loc, tensorType(shape, *element), init.name(), weightSource);
      continue;
    }
    auto tensor = readTensorProto(init, modelDir, where);
    if (!tensor)
      return tensor.takeError();
    values[init.name()] = constant(*tensor, *element);
  }
  return llvm::Error::success();
}

llvm::Error GraphImporter::importNode(const onnx::NodeProto &n, size_t index,
                                      Location fileLoc) {
  node = &n;
  nodeName = n.name().empty() ? n.op_type() + "_" + std::to_string(index)
                              : n.name();
  loc = NameLoc::get(builder.getStringAttr(nodeName), fileLoc);
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return nodeError("unsupported op (domain '" + n.domain() + "')");
  // ONNX keeps booleans in int attributes; anything but 0 and 1 is a
  // corrupt or mistyped model, not "true".
  for (llvm::StringRef name :
       {"transA", "transB", "upper", "keepdims", "noop_with_empty_axes"})
    if (const onnx::AttributeProto *a = attribute(name);
        a && a->i() != 0 && a->i() != 1)
      return nodeError("boolean attribute '" + name + "' is " +
                       llvm::Twine(a->i()) + "; it must be 0 or 1");
  SmallVector<Value> inputs;
  for (const std::string &name : n.input()) {
    Value v = name.empty() ? Value() : values.lookup(name);
    if (!name.empty() && !v)
      return nodeError("input '" + name + "' is not defined before it");
    inputs.push_back(v);
  }
  auto results = importOp(n, inputs);
  if (badShape) {
    llvm::consumeError(results.takeError());
    std::string what = std::move(*badShape);
    badShape.reset();
    return nodeError(what);
  }
  if (!results)
    return results.takeError();
  if (int64_t(results->size()) < n.output_size() - (n.op_type() == "Dropout"))
    return nodeError("produces " + llvm::Twine(results->size()) +
                     " outputs, the node names " +
                     llvm::Twine(n.output_size()));
  for (auto [name, value] : llvm::zip(n.output(), *results))
    if (!name.empty())
      values[name] = value;
  return llvm::Error::success();
}

llvm::Error GraphImporter::nodeError(const llvm::Twine &what) {
  return fail(path + ": node '" + nodeName + "' (" + node->op_type() +
              "): " + what);
}

RankedTensorType GraphImporter::tensorType(ArrayRef<int64_t> shape,
                                           Type element) {
  if (checkedElementCount(shape))
    return RankedTensorType::get(shape, element);
  bool negative = llvm::any_of(shape, [](int64_t d) { return d < 0; });
  if (!badShape)
    badShape = "its result shape " + formatShape(shape) +
               (negative ? " has a negative dimension"
                         : " holds more than 2^63 elements");
  // A stand-in until importNode reports it: a negative size (MLIR's dynamic
  // marker among them) is no static type.
  SmallVector<int64_t> clamped(shape);
  for (int64_t &d : clamped)
    d = std::max<int64_t>(d, 0);
  return RankedTensorType::get(clamped, element);
}

/// Results larger than this are not evaluated during import: only shape
/// computations need values there.
static constexpr int64_t kKnownValueLimit = 1 << 16;

Value GraphImporter::record(Operation *op) {
  Value result = op->getResult(0);
  if (checkedElementCount(cast<RankedTensorType>(result.getType()).getShape())
          .value_or(kKnownValueLimit + 1) > kKnownValueLimit)
    return result;
  SmallVector<const eval::Tensor *> operands;
  // A shape is known from the type alone, whatever the tensor holds.
  for (Value operand : op->getOperands()) {
    if (isa<tfm::ShapeOp>(op)) {
      operands.push_back(nullptr);
      continue;
    }
    auto it = known.find(operand);
    if (it == known.end())
      return result;
    operands.push_back(&it->second);
  }
  FailureOr<eval::Tensor> value = eval::evaluateOp(op, operands);
  if (succeeded(value))
    known[result] = std::move(*value);
  return result;
}

Value GraphImporter::constant(const eval::Tensor &value, Type element) {
  auto type = tensorType(value.shape, element);
  return record(builder.create<tfm::ConstantOp>(
      loc, eval::attrFromTensor(value, type)));
}

llvm::Expected<SmallVector<int64_t>>
GraphImporter::knownInts(Value v, const llvm::Twine &what) {
  auto it = known.find(v);
  if (it == known.end())
    return nodeError(what + " must be computable from constants and shapes "
                            "(bind dynamic inputs with --input-shape)");
  SmallVector<int64_t> ints;
  for (double d : it->second.data)
    ints.push_back(eval::toIndex(d));
  return ints;
}

llvm::Expected<double> GraphImporter::knownScalar(Value v,
                                                  const llvm::Twine &what) {
  auto it = known.find(v);
  if (it == known.end() || it->second.size() != 1)
    return nodeError(what + " must be a scalar computable from constants and "
                            "shapes");
  return it->second.data[0];
}

llvm::Expected<int64_t> GraphImporter::normalizeAxis(int64_t axis,
                                                     int64_t rank) {
  if (axis < -rank || axis >= rank)
    return nodeError("axis " + llvm::Twine(axis) + " is out of range for rank " +
                     llvm::Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

const onnx::AttributeProto *GraphImporter::attribute(llvm::StringRef name) {
  for (const auto &attr : node->attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t GraphImporter::intAttr(llvm::StringRef name, int64_t fallback) {
  const onnx::AttributeProto *a = attribute(name);
  return a ? a->i() : fallback;
}

llvm::Expected<SmallVector<int64_t>>
GraphImporter::intsFromAttrOrInput(llvm::StringRef name,
                                   ArrayRef<Value> inputs, size_t index,
                                   bool &present) {
  if (const onnx::AttributeProto *a = attribute(name)) {
    present = true;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  present = index < inputs.size() && inputs[index];
  if (!present)
    return SmallVector<int64_t>();
  return knownInts(inputs[index], "'" + name + "'");
}

llvm::Expected<OwningOpRef<ModuleOp>>
wafer::importOnnxFile(llvm::StringRef path, MLIRContext *context,
                      const OnnxImportOptions &options) {
  context->loadDialect<tfm::TfmDialect, func::FuncDialect>();
  llvm::Expected<onnx::ModelProto> model = parseModel(path);
  if (!model)
    return model.takeError();
  // Our own checks first (they name the node and op), then the checker's.
  auto module = GraphImporter(path, *model, options, context).run();
  if (!module)
    return module.takeError();
  // The ops' verifiers (operand types, for one) have the last word for
  // every caller, not only for wafer-translate: eval evaluates what it
  // imports.
  std::string invalid;
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (invalid.empty() && diag.getSeverity() == DiagnosticSeverity::Error) {
        auto node = dyn_cast<NameLoc>(diag.getLocation());
        invalid = (node ? "node '" + node.getName().str() + "': " : "") +
                  llvm::StringRef(diag.str()).split('\n').first.str();
      }
      return success();
    });
    if (failed(verify(**module)))
      return fail(path + ": " + invalid);
  }
  if (std::optional<std::string> problem = checkModel(path.str()))
    return fail(path + ": " + *problem);
  return module;
}

struct OnnxWeightStore::Model {
  onnx::ModelProto proto;
  llvm::StringMap<const onnx::TensorProto *> initializers;
};

OnnxWeightStore::OnnxWeightStore() = default;
OnnxWeightStore::~OnnxWeightStore() = default;

llvm::Expected<const onnx::TensorProto *>
OnnxWeightStore::initializer(llvm::StringRef path, llvm::StringRef name) {
  auto &model = models[path];
  if (!model) {
    llvm::Expected<onnx::ModelProto> parsed = parseModel(path);
    if (!parsed)
      return parsed.takeError();
    model = std::make_unique<Model>();
    model->proto = std::move(*parsed);
    for (const auto &init : model->proto.graph().initializer())
      model->initializers[init.name()] = &init;
  }
  const onnx::TensorProto *init = model->initializers.lookup(name);
  if (!init)
    return fail(path + ": has no initializer '" + name + "'");
  return init;
}

llvm::Expected<std::vector<int64_t>>
OnnxWeightStore::shape(llvm::StringRef path, llvm::StringRef name) {
  llvm::Expected<const onnx::TensorProto *> init = initializer(path, name);
  if (!init)
    return init.takeError();
  return std::vector<int64_t>((*init)->dims().begin(), (*init)->dims().end());
}

llvm::Expected<WeightData> OnnxWeightStore::load(llvm::StringRef path,
                                                 llvm::StringRef name) {
  llvm::Expected<const onnx::TensorProto *> init = initializer(path, name);
  if (!init)
    return init.takeError();
  auto tensor = readTensorProto(**init, llvm::sys::path::parent_path(path),
                                path + ": initializer '" + name + "'");
  if (!tensor)
    return tensor.takeError();
  return WeightData{tensor->shape,
                    std::vector<float>(tensor->data.begin(), tensor->data.end())};
}
