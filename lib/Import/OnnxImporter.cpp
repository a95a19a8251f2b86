//===- OnnxImporter.cpp - ONNX models to tfm ------------------------------===//
//
// Parses the model with protobuf's generated classes (libonnx) and builds a
// tfm function node by node. Weights stay in the file: the IR refers to them
// by initializer name.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

using namespace mlir;
using namespace wafer;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Reads and parses an ONNX file; the error starts with the path.
llvm::Expected<onnx::ModelProto> parseModel(llvm::StringRef path) {
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

llvm::Expected<std::vector<int64_t>> staticShape(llvm::StringRef path,
                                                 const onnx::ValueInfoProto &v) {
  if (!v.type().has_tensor_type())
    return fail(path + ": '" + v.name() + "' is not a tensor");
  const auto &tensor = v.type().tensor_type();
  if (tensor.elem_type() != onnx::TensorProto::FLOAT)
    return fail(path + ": '" + v.name() + "' has element type " +
                llvm::Twine(tensor.elem_type()) +
                "; only float32 (1) is supported");
  std::vector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value())
      return fail(path + ": '" + v.name() + "' has a dynamic dimension '" +
                  dim.dim_param() + "'");
    shape.push_back(dim.dim_value());
  }
  return shape;
}

/// The float values of an initializer, from raw_data or float_data.
llvm::Expected<WeightData> readTensor(llvm::StringRef path,
                                      const onnx::TensorProto &tensor) {
  WeightData data;
  data.shape.assign(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 1;
  for (int64_t d : data.shape)
    count *= d;
  if (tensor.data_type() != onnx::TensorProto::FLOAT)
    return fail(path + ": initializer '" + tensor.name() + "' has data type " +
                llvm::Twine(tensor.data_type()) +
                "; only float32 (1) is supported");
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return fail(path + ": initializer '" + tensor.name() +
                "' uses external data, which is not supported yet");
  data.values.resize(count);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (int64_t(raw.size()) != count * 4)
      return fail(path + ": initializer '" + tensor.name() + "' has " +
                  llvm::Twine(raw.size()) + " bytes of data, expected " +
                  llvm::Twine(count * 4));
    std::memcpy(data.values.data(), raw.data(), raw.size());
  } else {
    if (tensor.float_data_size() != count)
      return fail(path + ": initializer '" + tensor.name() + "' has " +
                  llvm::Twine(tensor.float_data_size()) +
                  " values, expected " + llvm::Twine(count));
    std::copy(tensor.float_data().begin(), tensor.float_data().end(),
              data.values.begin());
  }
  return data;
}

class GraphImporter {
public:
  GraphImporter(llvm::StringRef path, const onnx::GraphProto &graph,
                MLIRContext *context)
      : path(path), graph(graph), context(context), builder(context) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run() {
    Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
    llvm::StringSet<> initializers;
    for (const auto &init : graph.initializer())
      initializers.insert(init.name());

    SmallVector<Type> argTypes;
    SmallVector<std::string> argNames;
    for (const auto &input : graph.input()) {
      if (initializers.count(input.name()))
        continue;
      auto shape = staticShape(path, input);
      if (!shape)
        return shape.takeError();
      argTypes.push_back(tensorType(*shape));
      argNames.push_back(input.name());
    }
    SmallVector<Type> resultTypes;
    SmallVector<Attribute> outputNames;
    for (const auto &output : graph.output()) {
      auto shape = staticShape(path, output);
      if (!shape)
        return shape.takeError();
      resultTypes.push_back(tensorType(*shape));
      outputNames.push_back(builder.getStringAttr(output.name()));
    }
    builder.setInsertionPointToEnd(module->getBody());
    auto func = builder.create<func::FuncOp>(
        fileLoc, "main", builder.getFunctionType(argTypes, resultTypes));
    func->setAttr("tfm.output_names", builder.getArrayAttr(outputNames));
    Block *entry = func.addEntryBlock();
    for (auto [i, name] : llvm::enumerate(argNames)) {
      func.setArgAttr(i, "tfm.name", builder.getStringAttr(name));
      values[name] = entry->getArgument(i);
    }
    builder.setInsertionPointToStart(entry);
    for (const auto &init : graph.initializer()) {
      if (init.data_type() != onnx::TensorProto::FLOAT)
        return fail(path + ": initializer '" + init.name() +
                    "' has data type " + llvm::Twine(init.data_type()) +
                    "; only float32 (1) is supported");
      std::vector<int64_t> shape(init.dims().begin(), init.dims().end());
      values[init.name()] = builder.create<tfm::WeightOp>(
          NameLoc::get(builder.getStringAttr(init.name()), fileLoc),
          tensorType(shape), init.name(), path);
    }
    for (auto [index, node] : llvm::enumerate(graph.node()))
      if (llvm::Error error = importNode(node, index, fileLoc))
        return std::move(error);
    SmallVector<Value> results;
    for (auto [output, type] : llvm::zip(graph.output(), resultTypes)) {
      Value v = values.lookup(output.name());
      if (!v)
        return fail(path + ": graph output '" + output.name() +
                    "' is produced by no node");
      if (v.getType() != type)
        return fail(path + ": graph output '" + output.name() +
                    "' is declared with a shape that differs from the "
                    "computed one");
      results.push_back(v);
    }
    builder.create<func::ReturnOp>(fileLoc, results);
    return std::move(module);
  }

private:
  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  llvm::Error nodeError(const onnx::NodeProto &node, const llvm::Twine &what) {
    return fail(path + ": node '" + nodeName + "' (" + node.op_type() +
                "): " + what);
  }

  const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                        llvm::StringRef name) {
    for (const auto &attr : node.attribute())
      if (attr.name() == name)
        return &attr;
    return nullptr;
  }

  Value scalar(Location loc, float value) {
    auto type = RankedTensorType::get({}, builder.getF32Type());
    return builder.create<tfm::ConstantOp>(
        loc, DenseElementsAttr::get(type, llvm::ArrayRef<float>(value)));
  }

  llvm::Expected<Value> binary(const onnx::NodeProto &node, Location loc,
                               Value lhs, Value rhs, bool isAdd) {
    auto shape = tfm::broadcastShapes(shapeOf(lhs), shapeOf(rhs));
    if (failed(shape))
      return nodeError(node, "operand shapes do not broadcast");
    Type type = tensorType(*shape);
    if (isAdd)
      return builder.create<tfm::AddOp>(loc, type, lhs, rhs).getResult();
    return builder.create<tfm::MulOp>(loc, type, lhs, rhs).getResult();
  }

  llvm::Expected<Value> matmul(const onnx::NodeProto &node, Location loc,
                               Value lhs, Value rhs) {
    ArrayRef<int64_t> a = shapeOf(lhs), b = shapeOf(rhs);
    if (a.size() != 2 || b.size() != 2)
      return nodeError(node, "only matrix x matrix is supported (ranks " +
                                 llvm::Twine(a.size()) + " and " +
                                 llvm::Twine(b.size()) + ")");
    if (a[1] != b[0])
      return nodeError(node, "contraction sizes differ (" + llvm::Twine(a[1]) +
                                 " vs " + llvm::Twine(b[0]) + ")");
    return builder
        .create<tfm::MatMulOp>(loc, tensorType({a[0], b[1]}), lhs, rhs)
        .getResult();
  }

  Value transposed(Location loc, Value v) {
    ArrayRef<int64_t> s = shapeOf(v);
    return builder.create<tfm::TransposeOp>(loc, tensorType({s[1], s[0]}), v,
                                            ArrayRef<int64_t>{1, 0});
  }

  llvm::Expected<Value> gemm(const onnx::NodeProto &node, Location loc,
                             ArrayRef<Value> inputs) {
    auto floatAttr = [&](StringRef name, float fallback) {
      const onnx::AttributeProto *a = attribute(node, name);
      return a ? a->f() : fallback;
    };
    auto intAttr = [&](StringRef name) {
      const onnx::AttributeProto *a = attribute(node, name);
      return a ? a->i() : 0;
    };
    Value a = inputs[0], b = inputs[1];
    if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
      return nodeError(node, "Gemm needs matrix operands");
    if (intAttr("transA"))
      a = transposed(loc, a);
    if (intAttr("transB"))
      b = transposed(loc, b);
    auto product = matmul(node, loc, a, b);
    if (!product)
      return product.takeError();
    Value y = *product;
    float alpha = floatAttr("alpha", 1.0f), beta = floatAttr("beta", 1.0f);
    bool hasBias = inputs.size() > 2 && inputs[2] && beta != 0.0f;
    // alpha*AB + beta*C = beta * ((alpha/beta)*AB + C): every op then has the
    // product as an operand, so the bias is only ever broadcast on the host.
    float productScale = hasBias ? alpha / beta : alpha;
    auto scale = [&](Value v, float factor) -> llvm::Expected<Value> {
      if (factor == 1.0f)
        return v;
      return binary(node, loc, v, scalar(loc, factor), /*isAdd=*/false);
    };
    auto scaled = scale(y, productScale);
    if (!scaled)
      return scaled.takeError();
    y = *scaled;
    if (hasBias) {
      auto sum = binary(node, loc, y, inputs[2], /*isAdd=*/true);
      if (!sum)
        return sum.takeError();
      if (shapeOf(*sum) != shapeOf(y))
        return nodeError(node, "bias C does not broadcast to the product");
      auto result = scale(*sum, beta);
      if (!result)
        return result.takeError();
      y = *result;
    }
    return y;
  }

  llvm::Error importNode(const onnx::NodeProto &node, size_t index,
                         Location fileLoc) {
    nodeName = node.name().empty()
                   ? node.op_type() + "_" + std::to_string(index)
                   : node.name();
    Location loc = NameLoc::get(builder.getStringAttr(nodeName), fileLoc);
    SmallVector<Value> inputs;
    for (const std::string &name : node.input()) {
      if (name.empty()) {
        inputs.push_back(Value());
        continue;
      }
      Value v = values.lookup(name);
      if (!v)
        return nodeError(node, "input '" + name + "' is not defined before it");
      inputs.push_back(v);
    }
    const std::string &op = node.op_type();
    auto expectInputs = [&](size_t lo, size_t hi) -> llvm::Error {
      if (inputs.size() < lo || inputs.size() > hi || !inputs[0] ||
          (lo > 1 && !inputs[1]))
        return nodeError(node, "expects " + llvm::Twine(lo) +
                                   (lo == hi ? "" : " to " + llvm::Twine(hi)) +
                                   " inputs");
      return llvm::Error::success();
    };
    llvm::Expected<Value> result = Value();
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return nodeError(node, "unsupported op (domain '" + node.domain() + "')");
    if (op == "MatMul") {
      if (llvm::Error e = expectInputs(2, 2))
        return e;
      result = matmul(node, loc, inputs[0], inputs[1]);
    } else if (op == "Gemm") {
      if (llvm::Error e = expectInputs(2, 3))
        return e;
      result = gemm(node, loc, inputs);
    } else if (op == "Add" || op == "Mul") {
      if (llvm::Error e = expectInputs(2, 2))
        return e;
      result = binary(node, loc, inputs[0], inputs[1], op == "Add");
    } else {
      return nodeError(node, "unsupported op");
    }
    if (!result)
      return result.takeError();
    if (node.output_size() != 1)
      return nodeError(node, "expects exactly one output");
    values[node.output(0)] = *result;
    return llvm::Error::success();
  }

  std::string path;
  const onnx::GraphProto &graph;
  MLIRContext *context;
  OpBuilder builder;
  llvm::StringMap<Value> values;
  std::string nodeName;
};

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>>
wafer::importOnnxFile(llvm::StringRef path, MLIRContext *context) {
  context->loadDialect<tfm::TfmDialect, func::FuncDialect>();
  llvm::Expected<onnx::ModelProto> model = parseModel(path);
  if (!model)
    return model.takeError();
  return GraphImporter(path, model->graph(), context).run();
}

struct OnnxWeightStore::Model {
  onnx::ModelProto proto;
};

OnnxWeightStore::OnnxWeightStore() = default;
OnnxWeightStore::~OnnxWeightStore() = default;

llvm::Expected<WeightData> OnnxWeightStore::load(llvm::StringRef path,
                                                 llvm::StringRef name) {
  auto &model = models[path];
  if (!model) {
    llvm::Expected<onnx::ModelProto> parsed = parseModel(path);
    if (!parsed)
      return parsed.takeError();
    model = std::make_unique<Model>(Model{std::move(*parsed)});
  }
  for (const auto &init : model->proto.graph().initializer())
    if (init.name() == name)
      return readTensor(path, init);
  return fail(path + ": has no initializer '" + name + "'");
}
