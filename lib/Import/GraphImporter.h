//===- GraphImporter.h - ONNX graph to tfm (private) ------------*- C++ -*-===//
//
// Shared between OnnxImporter.cpp (model, inputs, initializers, external
// data) and OnnxNodes.cpp (one function per ONNX op).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_LIB_IMPORT_GRAPHIMPORTER_H
#define WAFER_LIB_IMPORT_GRAPHIMPORTER_H

#include "wafer/Eval/Evaluator.h"
#include "wafer/Import/OnnxImporter.h"
#include "wafer/Support/Printable.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

namespace wafer::onnx_import {

llvm::Error fail(const llvm::Twine &message);

/// "[1, 8, 64]".
std::string shapeText(llvm::ArrayRef<int64_t> shape);

/// The tfm element type of an ONNX data type (int32 and double widen to i64
/// and f32), or an error naming `what`.
llvm::Expected<mlir::Type> elementType(mlir::Builder &builder, int dataType,
                                       const llvm::Twine &what);

/// Where a tensor's external data lies: its file, and the bytes' offset and
/// length in it.
struct ExternalData {
  std::string file;
  int64_t offset, length;
};

/// Where a tensor's external data lies, after checking that its location
/// stays inside `modelDir` and the file holds the `expectedBytes` its shape
/// needs; errors start with `where`.
llvm::Expected<ExternalData>
locateExternalData(const onnx::TensorProto &tensor, llvm::StringRef modelDir,
                   const llvm::Twine &where, int64_t expectedBytes);

/// The elements a tensor's dims call for and the bytes its data type stores
/// them in (each and all); an error naming `where` when they overflow 64
/// bits.
struct TensorSize {
  int64_t count, elementBytes, bytes;
};
llvm::Expected<TensorSize> tensorSize(const onnx::TensorProto &tensor,
                                      const llvm::Twine &where);

/// The values of a TensorProto in any storage form (typed fields, raw_data,
/// external data below `modelDir`).
llvm::Expected<eval::Tensor> readTensorProto(const onnx::TensorProto &tensor,
                                             llvm::StringRef modelDir,
                                             const llvm::Twine &where);

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

inline mlir::Type elementOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

class GraphImporter {
public:
  GraphImporter(llvm::StringRef path, const onnx::ModelProto &model,
                const OnnxImportOptions &options, mlir::MLIRContext *context);

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> run();

private:
  llvm::Error importInitializers(mlir::Location fileLoc);
  llvm::Error importNode(const onnx::NodeProto &node, size_t index,
                         mlir::Location fileLoc);
  llvm::Expected<llvm::SmallVector<mlir::Value>>
  importOp(const onnx::NodeProto &node, llvm::ArrayRef<mlir::Value> inputs);

  // Helpers for OnnxNodes.cpp.
  llvm::Error nodeError(const llvm::Twine &what);
  const onnx::AttributeProto *attribute(llvm::StringRef name);
  int64_t intAttr(llvm::StringRef name, int64_t fallback);
  llvm::Expected<llvm::SmallVector<int64_t>>
  intsFromAttrOrInput(llvm::StringRef name, llvm::ArrayRef<mlir::Value> inputs,
                      size_t index, bool &present);
  llvm::Expected<llvm::SmallVector<int64_t>> knownInts(mlir::Value v,
                                                       const llvm::Twine &what);
  llvm::Expected<double> knownScalar(mlir::Value v, const llvm::Twine &what);
  llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// The type of a node's result. A shape with a negative dimension or
  /// more than 2^63 elements is not a type: importNode then reports it as
  /// the node's error.
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type element);
  /// Builds a tfm op of `resultType` and records its value when every
  /// operand's value is known and the result is small.
  template <typename OpTy, typename... Args>
  mlir::Value create(mlir::Type resultType, Args &&...args);
  mlir::Value record(mlir::Operation *op);
  mlir::Value constant(const eval::Tensor &value, mlir::Type element);

  // One import function per ONNX op type (OnnxNodes.cpp), found through
  // opImporters() by type and opset.
  using Values = llvm::SmallVector<mlir::Value>;
  using ImportFunction =
      llvm::Expected<Values> (GraphImporter::*)(llvm::ArrayRef<mlir::Value>);
  struct OpImporter;
  static const llvm::StringMap<llvm::SmallVector<OpImporter, 1>> &
  opImporters();
  /// An import function of one result as one of a result list.
  template <llvm::Expected<mlir::Value> (GraphImporter::*Import)(
      llvm::ArrayRef<mlir::Value>)>
  llvm::Expected<Values> single(llvm::ArrayRef<mlir::Value> in) {
    llvm::Expected<mlir::Value> v = (this->*Import)(in);
    if (!v)
      return v.takeError();
    return Values{*v};
  }
  template <typename OpTy>
  llvm::Expected<Values> importUnary(llvm::ArrayRef<mlir::Value> in) {
    return Values{create<OpTy>(in[0].getType(), in[0])};
  }
  llvm::Expected<Values> importIdentity(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importCast(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importBinary(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importWhere(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importMatMulNode(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importMatMul(mlir::Value a, mlir::Value b);
  llvm::Expected<mlir::Value> importGemm(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importReduce(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importSoftmaxFlattening(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importSoftmax(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> softmax(mlir::Value x, int64_t axis);
  llvm::Expected<Values> importTranspose(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importReshape(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importSqueeze(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importFlatten(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importExpand(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importTile(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importConcat(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value>
  importSliceAttributes(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importSlice(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> slice(mlir::Value x,
                                    llvm::ArrayRef<int64_t> starts,
                                    llvm::ArrayRef<int64_t> ends,
                                    llvm::SmallVector<int64_t> axes,
                                    llvm::SmallVector<int64_t> steps);
  llvm::Expected<Values> importSplit(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importGather(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importShape(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importConstantOfShape(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importRange(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<Values> importTrilu(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value> importConstant(llvm::ArrayRef<mlir::Value> in);
  llvm::Expected<mlir::Value>
  sliceAxis(mlir::Value x, int64_t axis, int64_t start, int64_t end,
            int64_t step);

  std::string path, modelDir;
  /// `path` made absolute: what the module's weights name, so that they are
  /// found wherever the module is used from.
  std::string weightSource;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  const OnnxImportOptions &options;
  mlir::MLIRContext *context;
  mlir::OpBuilder builder;
  int64_t opset = 1;
  llvm::StringMap<mlir::Value> values;
  llvm::DenseMap<mlir::Value, eval::Tensor> known;
  const onnx::NodeProto *node = nullptr;
  std::string nodeName;
  /// What is wrong with the first shape tensorType was given that is not
  /// one.
  std::optional<std::string> badShape;
  mlir::Location loc;
};


template <typename OpTy, typename... Args>
mlir::Value GraphImporter::create(mlir::Type resultType,
                                                      Args &&...args) {
  return record(builder.create<OpTy>(loc, resultType,
                                     std::forward<Args>(args)...));
}

} // namespace wafer::onnx_import

#endif // WAFER_LIB_IMPORT_GRAPHIMPORTER_H
