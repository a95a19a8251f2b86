//===- TfmOps.cpp - Verifiers of the tfm ops ------------------------------===//
//
// Every op carries its result type explicitly (the importer computes it with
// the shape functions of TfmDialect.cpp); the verifiers recompute it so a
// hand-written or transformed module cannot disagree with itself.
//
//===----------------------------------------------------------------------===//
#include "wafer/Dialect/Tfm/TfmOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace wafer::tfm;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

static Type elementOf(Value v) { return tensorType(v).getElementType(); }

/// Checks that the op's result has `shape`, naming what it should be.
static LogicalResult expectShape(Operation *op, ArrayRef<int64_t> shape) {
  if (shapeOf(op->getResult(0)) == shape)
    return success();
  return op->emitOpError("result shape must be [")
         << llvm::make_range(shape.begin(), shape.end()) << "]";
}

static LogicalResult expectElement(Operation *op, Type element) {
  if (elementOf(op->getResult(0)) == element)
    return success();
  return op->emitOpError("result element type must be ") << element;
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult CastOp::verify() {
  if (shapeOf(getInput()) != shapeOf(getResult()))
    return emitOpError("changes the shape");
  return success();
}

template <typename BinaryOp>
static LogicalResult verifyBroadcastBinary(BinaryOp op) {
  auto lhs = tensorType(op.getLhs()), rhs = tensorType(op.getRhs());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op.emitOpError("operand shapes ")
           << lhs << " and " << rhs << " do not broadcast";
  if (failed(expectShape(op, *shape)))
    return failure();
  // Pow's exponent may be of another number type (ONNX allows it).
  if (!isa<PowOp>(op.getOperation()) &&
      lhs.getElementType() != rhs.getElementType())
    return op.emitOpError("operands have different element types");
  bool isLogical = isa<AndOp, OrOp>(op.getOperation());
  if (!isa<EqualOp>(op.getOperation()) &&
      isLogical != lhs.getElementType().isInteger(1))
    return op.emitOpError(isLogical ? "operands must be i1"
                                    : "operands must be numbers, not i1");
  bool isPredicate =
      isa<EqualOp, LessOp, LessOrEqualOp, GreaterOp, GreaterOrEqualOp, AndOp,
          OrOp>(op.getOperation());
  Builder builder(op.getContext());
  return expectElement(op, isPredicate ? builder.getI1Type()
                                       : lhs.getElementType());
}

#define WAFER_BINARY_VERIFIER(Op)                                              \
  LogicalResult Op::verify() { return verifyBroadcastBinary(*this); }
WAFER_BINARY_VERIFIER(AddOp)
WAFER_BINARY_VERIFIER(SubOp)
WAFER_BINARY_VERIFIER(MulOp)
WAFER_BINARY_VERIFIER(DivOp)
WAFER_BINARY_VERIFIER(PowOp)
WAFER_BINARY_VERIFIER(MaxOp)
WAFER_BINARY_VERIFIER(MinOp)
WAFER_BINARY_VERIFIER(ModOp)
WAFER_BINARY_VERIFIER(EqualOp)
WAFER_BINARY_VERIFIER(LessOp)
WAFER_BINARY_VERIFIER(LessOrEqualOp)
WAFER_BINARY_VERIFIER(GreaterOp)
WAFER_BINARY_VERIFIER(GreaterOrEqualOp)
WAFER_BINARY_VERIFIER(AndOp)
WAFER_BINARY_VERIFIER(OrOp)
#undef WAFER_BINARY_VERIFIER

LogicalResult WhereOp::verify() {
  auto both = broadcastShapes(shapeOf(getLhs()), shapeOf(getRhs()));
  if (failed(both))
    return emitOpError("value shapes do not broadcast");
  auto all = broadcastShapes(shapeOf(getCondition()), *both);
  if (failed(all))
    return emitOpError("condition shape does not broadcast with the values");
  if (elementOf(getLhs()) != elementOf(getRhs()))
    return emitOpError("values have different element types");
  if (failed(expectShape(*this, *all)))
    return failure();
  return expectElement(*this, elementOf(getLhs()));
}

LogicalResult MatMulOp::verify() {
  auto shape = matmulShape(shapeOf(getLhs()), shapeOf(getRhs()));
  if (failed(shape))
    return emitOpError("operand shapes ")
           << tensorType(getLhs()) << " and " << tensorType(getRhs())
           << " do not agree for a matrix product";
  return expectShape(*this, *shape);
}

/// Axes must be in range, sorted and unique.
static LogicalResult verifyAxes(Operation *op, ArrayRef<int64_t> axes,
                                int64_t rank) {
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis < 0 || axis >= rank || (i > 0 && axes[i - 1] >= axis))
      return op->emitOpError("axes must be sorted, unique and in [0, ")
             << rank << ")";
  return success();
}

template <typename ReduceOp>
static LogicalResult verifyReduce(ReduceOp op) {
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  if (failed(verifyAxes(op, op.getAxes(), shape.size())))
    return failure();
  if (failed(expectShape(op, reduceShape(shape, op.getAxes(),
                                         op.getKeepdims()))))
    return failure();
  return expectElement(op, elementOf(op.getInput()));
}

LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), tensorType(getInput()).getRank());
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != input.size())
    return emitOpError("permutation has ")
           << perm.size() << " entries for a rank-" << input.size()
           << " input";
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return emitOpError("permutation is not a permutation of 0..")
             << perm.size() - 1;
    seen[p] = true;
    expected.push_back(input[p]);
  }
  if (failed(expectShape(*this, expected)))
    return failure();
  return expectElement(*this, elementOf(getInput()));
}

LogicalResult ReshapeOp::verify() {
  auto input = tensorType(getInput()), result = tensorType(getResult());
  if (input.getNumElements() != result.getNumElements())
    return emitOpError("changes the number of elements from ")
           << input.getNumElements() << " to " << result.getNumElements();
  return expectElement(*this, input.getElementType());
}

LogicalResult ExpandOp::verify() {
  auto shape = broadcastShapes(shapeOf(getInput()), shapeOf(getResult()));
  if (failed(shape) || *shape != shapeOf(getResult()))
    return emitOpError("input ")
           << tensorType(getInput()) << " does not broadcast to the result";
  return expectElement(*this, elementOf(getInput()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  SmallVector<int64_t> shape(shapeOf(getInputs().front()));
  if (failed(verifyAxis(*this, getAxis(), shape.size())))
    return failure();
  for (Value input : getInputs().drop_front()) {
    ArrayRef<int64_t> other = shapeOf(input);
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      if (other.size() != shape.size() ||
          (d != int64_t(getAxis()) && other[d] != shape[d]))
        return emitOpError("inputs differ outside the concatenation axis");
    shape[getAxis()] += other[getAxis()];
    if (elementOf(input) != elementOf(getInputs().front()))
      return emitOpError("inputs have different element types");
  }
  if (failed(expectShape(*this, shape)))
    return failure();
  return expectElement(*this, elementOf(getInputs().front()));
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (getStarts().size() != input.size() || getEnds().size() != input.size() ||
      getSteps().size() != input.size())
    return emitOpError("needs one start, end and step per dimension");
  SmallVector<int64_t> expected;
  for (auto [d, size] : llvm::enumerate(input)) {
    int64_t start = getStarts()[d], end = getEnds()[d], step = getSteps()[d];
    if (step == 0)
      return emitOpError("step of dimension ") << d << " is zero";
    // Normalised as the evaluator reads them: a forward slice starts and
    // ends in [0, size], a backward one in [-1, size - 1].
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? size : size - 1;
    if (start < lo || start > hi || end < lo || end > hi)
      return emitOpError("start and end of dimension ")
             << d << " must be normalised into [" << lo << ", " << hi
             << "] for step " << step;
    expected.push_back(sliceLength(start, end, step));
  }
  if (failed(expectShape(*this, expected)))
    return failure();
  return expectElement(*this, elementOf(getInput()));
}

LogicalResult TriluOp::verify() {
  if (shapeOf(getInput()).size() < 2)
    return emitOpError("input must have rank 2 or more");
  return success();
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (failed(verifyAxis(*this, getAxis(), input.size())))
    return failure();
  if (failed(expectShape(
          *this, gatherShape(input, shapeOf(getIndices()), getAxis()))))
    return failure();
  return expectElement(*this, elementOf(getInput()));
}

LogicalResult ShapeOp::verify() {
  return expectShape(*this, {tensorType(getInput()).getRank()});
}

LogicalResult ConstantOfShapeOp::verify() {
  if (getValue().getType() != elementOf(getResult()))
    return emitOpError("value type ")
           << getValue().getType() << " differs from the result's elements";
  return success();
}

LogicalResult RangeOp::verify() {
  double start = getStart().convertToDouble();
  double limit = getLimit().convertToDouble();
  double delta = getDelta().convertToDouble();
  if (delta == 0)
    return emitOpError("delta is zero");
  std::optional<int64_t> length = rangeLength(start, limit, delta);
  if (!length)
    return emitOpError("has no finite length below 2^40");
  if (elementOf(getResult()).isInteger(64) &&
      (start != std::trunc(start) || delta != std::trunc(delta)))
    return emitOpError("start and delta of an integer range must be integers");
  return expectShape(*this, {*length});
}

//===----------------------------------------------------------------------===//
// Raised transformer ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  if (weight.size() != 2)
    return emitOpError("weight must be a matrix");
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t k = getTransposeWeight() ? weight[1] : weight[0];
  int64_t n = getTransposeWeight() ? weight[0] : weight[1];
  if (input.empty() || input.back() != k)
    return emitOpError("input's last dimension must be ") << k;
  SmallVector<int64_t> expected(input.drop_back());
  expected.push_back(n);
  return expectShape(*this, expected);
}

LogicalResult EmbedOp::verify() {
  if (shapeOf(getTable()).size() != 2)
    return emitOpError("table must be [vocab, dim]");
  return expectShape(*this, gatherShape(shapeOf(getTable()),
                                        shapeOf(getIds()), 0));
}

LogicalResult RmsNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.empty() || shapeOf(getWeight()) != input.take_back())
    return emitOpError("weight must have the input's last dimension");
  double epsilon = getEpsilon().convertToDouble();
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return emitOpError("epsilon must be finite and not negative");
  return expectShape(*this, input);
}

LogicalResult RopeOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.empty() || input.back() % 2 != 0)
    return emitOpError("last dimension must be even");
  for (Value table : {getCos(), getSin()}) {
    auto shape = broadcastShapes(input, shapeOf(table));
    if (failed(shape) || *shape != input)
      return emitOpError("cos and sin must broadcast to the input");
  }
  return expectShape(*this, input);
}

LogicalResult AttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (q.size() != 4 || k.size() != 4 || v != k)
    return emitOpError("needs q [B, H, Lq, D] and k, v [B, KVH, Lk, D]");
  if (q[0] != k[0] || q[3] != k[3])
    return emitOpError("q and k differ in batch or head dimension");
  if (int64_t(getNumHeads()) != q[1] || int64_t(getNumKvHeads()) != k[1])
    return emitOpError("num_heads and num_kv_heads must match the operands");
  if (k[1] <= 0 || q[1] % k[1] != 0)
    return emitOpError("num_heads must be a multiple of num_kv_heads");
  // NaN or infinite scores make every output NaN on the grid and the host
  // alike, which no comparison would catch.
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  return expectShape(*this, q);
}

std::string wafer::tfm::inputName(func::FuncOp function, unsigned index) {
  auto name = function.getArgAttrOfType<StringAttr>(index, "tfm.name");
  return name ? name.str() : "input" + std::to_string(index);
}

std::string wafer::tfm::outputName(func::FuncOp function, unsigned index) {
  auto names = function->getAttrOfType<ArrayAttr>("tfm.output_names");
  auto name = names && index < names.size() ? dyn_cast<StringAttr>(names[index])
                                            : StringAttr();
  return name ? name.str() : "output" + std::to_string(index);
}

#define GET_OP_CLASSES
#include "tfm/TfmOps.cpp.inc"
