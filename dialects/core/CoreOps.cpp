//===- CoreOps.cpp - Core op verifiers ------------------------------------===//
#include "wafer/Dialect/Core/CoreOps.h"
#include "wafer/Runtime/FabricPlacement.h"
#include "wafer/Runtime/Expr.h"
#include "wafer/Runtime/Layout.h"
#include "wafer/Runtime/RowShapes.h"
#include "wafer/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <numeric>

using namespace mlir;
using namespace wafer;
using namespace wafer::core;

//===----------------------------------------------------------------------===//
// Symbol helpers
//===----------------------------------------------------------------------===//

static ProgramOp getProgram(Operation *op) {
  return op->getParentOfType<ProgramOp>();
}

/// The buffer `ref` names in op's program, or an error on op.
static FailureOr<BufferOp> lookupBuffer(Operation *op, FlatSymbolRefAttr ref,
                                        SymbolTableCollection &symbols) {
  ProgramOp program = getProgram(op);
  if (!program)
    return op->emitOpError("must be inside a core.program");
  auto buffer = symbols.lookupSymbolIn<BufferOp>(program, ref);
  if (!buffer)
    return op->emitOpError("names unknown buffer ") << ref;
  return buffer;
}

static LogicalResult lookupChannel(Operation *op, FlatSymbolRefAttr ref,
                                   SymbolTableCollection &symbols) {
  ProgramOp program = getProgram(op);
  if (!program)
    return op->emitOpError("must be inside a core.program");
  if (!symbols.lookupSymbolIn<ChannelOp>(program, ref))
    return op->emitOpError("names unknown channel ") << ref;
  return success();
}

/// Looks up every buffer in `refs`; fills `sizes` with their element counts.
static LogicalResult lookupBuffers(Operation *op,
                                   ArrayRef<FlatSymbolRefAttr> refs,
                                   SmallVectorImpl<int64_t> &sizes,
                                   SymbolTableCollection &symbols) {
  for (FlatSymbolRefAttr ref : refs) {
    FailureOr<BufferOp> buffer = lookupBuffer(op, ref, symbols);
    if (failed(buffer))
      return failure();
    sizes.push_back(buffer->getElements());
  }
  return success();
}

static LogicalResult verifyExpression(Operation *op, StringRef text) {
  llvm::Expected<rt::Expr> expr = rt::Expr::parse(text);
  if (!expr)
    return op->emitOpError() << llvm::toString(expr.takeError());
  return success();
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

/// Whether two arithmetic progressions share a value: scan one common period
/// from the larger start.
static bool progressionsIntersect(const rt::Range &a, const rt::Range &b) {
  int64_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
  int64_t period = std::lcm(a.step, b.step);
  for (int64_t v = lo; v <= hi && v < lo + period; ++v)
    if (a.contains(v) && b.contains(v))
      return true;
  return false;
}

LogicalResult ProgramOp::verify() {
  mesh::TargetAttr target = getTarget();
  mesh::GridAttr grid = getGrid();
  if (grid.getWidth() > target.getValue().fabricWidth ||
      grid.getHeight() > target.getValue().fabricHeight)
    return emitOpError() << "grid " << grid.getHeight() << "x"
                         << grid.getWidth() << " does not fit target '"
                         << target.getName() << "'";
  ArrayRef<int64_t> rows, cols;
  if (getFabricRows())
    rows = *getFabricRows();
  if (getFabricCols())
    cols = *getFabricCols();
  if (llvm::Error e = rt::checkFabricPlacement(
          target.getValue(), grid.getHeight(), grid.getWidth(), rows, cols))
    return emitOpError() << "fabric placement: " << llvm::toString(std::move(e));
  if (getPositionAttr() && getPositionAttr().getInt() < 0)
    return emitOpError() << "position " << getPositionAttr().getInt()
                         << " is negative";
  if (DictionaryAttr bound = getBoundInputsAttr())
    for (NamedAttribute entry : bound) {
      auto kind = dyn_cast<StringAttr>(entry.getValue());
      if (!kind ||
          (kind.getValue() != "positions" && kind.getValue() != "ones"))
        return emitOpError("bound input '")
               << entry.getName().getValue()
               << "' must be bound to \"positions\" or \"ones\"";
    }
  for (Attribute entry : getOps()) {
    auto names = dyn_cast<ArrayAttr>(entry);
    if (!names || names.size() != 3 ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return emitOpError("'ops' entries must be [name, kind, algorithm]");
  }
  if (std::optional<ArrayRef<int64_t>> estimates = getEstimatedCycles())
    if (estimates->size() != getOps().size() ||
        llvm::any_of(*estimates, [](int64_t c) { return c < 0; }))
      return emitOpError("'estimated_cycles' must hold one count of at "
                         "least 0 per entry of 'ops'");
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  mesh::GridAttr grid = getGrid();
  SmallVector<std::pair<RoleOp, rt::CoreSet>> roles;
  int64_t covered = 0;
  for (RoleOp role : getBody().getOps<RoleOp>()) {
    rt::CoreSet set = role.getCores().toRuntime();
    if (set.x.hi >= grid.getWidth() || set.y.hi >= grid.getHeight())
      return role.emitOpError("selects cores outside the ")
             << grid.getHeight() << "x" << grid.getWidth() << " grid";
    for (auto &[other, otherSet] : roles)
      if (progressionsIntersect(set.x, otherSet.x) &&
          progressionsIntersect(set.y, otherSet.y))
        return role.emitOpError("overlaps role @") << other.getSymName();
    covered += set.x.count() * set.y.count();
    roles.push_back({role, set});
  }
  if (covered != grid.getHeight() * grid.getWidth())
    return emitOpError("roles cover ")
           << covered << " of the grid's " << grid.getHeight() * grid.getWidth()
           << " cores";
  int64_t sram = 0;
  for (BufferOp buffer : getBody().getOps<BufferOp>())
    sram = std::max<int64_t>(sram, buffer.getOffset() + buffer.getSizeInBytes());
  if (sram > getTarget().getValue().sramBytes)
    return emitOpError("buffers need ")
           << sram << " bytes per core; target '" << getTarget().getName()
           << "' has " << getTarget().getValue().sramBytes;
  return success();
}

LogicalResult BufferOp::verify() {
  // I64Attr getters return unsigned values: compare them signed.
  if (int64_t(getElements()) < 1)
    return emitOpError("needs at least one element");
  if (int64_t(getOffset()) < 0 || getOffset() % 4 != 0)
    return emitOpError("offset must be a non-negative multiple of 4");
  if (!getElementType().isF32() && !getElementType().isF16())
    return emitOpError("supports f32 and f16 elements only");
  return success();
}

LogicalResult RouteOp::verify() {
  ProgramOp program = getProgram(*this);
  if (!program)
    return emitOpError("must be inside a core.program");
  int64_t budget = program.getTarget().getValue().routesPerCore;
  if (int32_t(getColor()) < 0 || int64_t(getColor()) >= budget)
    return emitOpError("color ")
           << getColor() << " is outside the target's " << budget
           << " routing colors";
  if (getOuts().empty())
    return emitOpError("needs at least one output port");
  for (int32_t out : getOuts()) {
    if (!symbolizeDir(out))
      return emitOpError("unknown output port ") << out;
    if (Dir(out) == getIn() && getIn() != Dir::ramp)
      return emitOpError("sends a message back where it came from");
  }
  mesh::GridAttr grid = program.getGrid();
  if (getCores().getXHi() >= grid.getWidth() ||
      getCores().getYHi() >= grid.getHeight())
    return emitOpError("selects cores outside the grid");
  return success();
}

/// Checks a host binding's buffer and placed type.
static LogicalResult verifyBinding(Operation *op, FlatSymbolRefAttr bufferRef,
                                   Type type, SymbolTableCollection &symbols) {
  FailureOr<BufferOp> buffer = lookupBuffer(op, bufferRef, symbols);
  if (failed(buffer))
    return failure();
  auto tensor = dyn_cast<RankedTensorType>(type);
  mesh::LayoutAttr layout = mesh::getLayout(type);
  if (!tensor || !layout ||
      int64_t(layout.getAxes().size()) != tensor.getRank())
    return op->emitOpError("type must be a ranked tensor with a matching "
                           "#mesh.layout");
  mesh::GridAttr grid = getProgram(op).getGrid();
  std::vector<int64_t> shape(tensor.getShape());
  int64_t local = rt::localElements(shape, layout.toRuntime(),
                                    grid.getHeight(), grid.getWidth());
  if (local != int64_t(buffer->getElements()))
    return op->emitOpError("needs ")
           << local << " elements per core but buffer " << bufferRef
           << " has " << buffer->getElements();
  return success();
}

LogicalResult InputOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyBinding(*this, getBufferAttr(), getType(), symbols);
}

LogicalResult InputOp::verify() {
  if (getWeightFile() && getValue())
    return emitOpError("takes its data from a weight file or a value, not both");
  if (getGatherIds() && !getWeightFile())
    return emitOpError("gathers rows of a weight: needs weight_file");
  if (bool(getIndexDim()) != bool(getIndexMap()))
    return emitOpError("index_dim and index_map go together");
  ArrayRef<int64_t> placed = cast<ShapedType>(getType()).getShape();
  if (std::optional<ArrayRef<int64_t>> view = getView()) {
    if (wafer::checkedElementCount(*view) != wafer::checkedElementCount(placed))
      return emitOpError("view must have the placed tensor's number of "
                         "elements");
    placed = *view;
  }
  ArrayRef<int64_t> source = getSourceShape();
  if (std::optional<ArrayRef<int64_t>> view = getSourceView()) {
    if (wafer::checkedElementCount(*view) != wafer::checkedElementCount(source))
      return emitOpError("source_view must have the source's number of "
                         "elements");
    source = *view;
  }
  if (getIndexDim() &&
      (source.size() != placed.size() || int64_t(*getIndexDim()) < 0 ||
       int64_t(*getIndexDim()) >= int64_t(source.size()) ||
       int64_t(getIndexMap()->size()) != placed[*getIndexDim()]))
    return emitOpError("index_map does not fit the placed tensor");
  if (getIndexDim()) {
    // The index dimension is the permuted source's.
    int64_t d = *getIndexDim();
    if (std::optional<ArrayRef<int64_t>> perm = getPermutation())
      d = d < int64_t(perm->size()) ? (*perm)[d] : -1;
    if (d < 0 || d >= int64_t(source.size()))
      return emitOpError("permutation does not fit the source");
    for (int64_t index : ArrayRef<int64_t>(*getIndexMap()))
      if (index < -1 || index >= source[d])
        return emitOpError("index_map entry ")
               << index << " is outside the source";
  }
  if (getValue()) {
    auto valueType = cast<ShapedType>(getValue()->getType());
    if (valueType.getShape() != getSourceShape())
      return emitOpError("value shape differs from source_shape");
  }
  return success();
}

LogicalResult OutputOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyBinding(*this, getBufferAttr(), getType(), symbols);
}

LogicalResult OutputOp::verify() {
  ArrayRef<int64_t> viewed = cast<ShapedType>(getType()).getShape();
  if (std::optional<ArrayRef<int64_t>> view = getView()) {
    if (wafer::checkedElementCount(*view) != wafer::checkedElementCount(viewed))
      return emitOpError("view must have the tensor's number of elements");
    viewed = *view;
  }
  int64_t rank = viewed.size();
  if (bool(getIndexDim()) != bool(getIndexMap()))
    return emitOpError("index_dim and index_map go together");
  if (getIndexDim()) {
    int64_t d = *getIndexDim();
    if (d < 0 || d >= rank)
      return emitOpError("index_dim is not a dimension of the tensor");
    for (int64_t index : ArrayRef<int64_t>(*getIndexMap()))
      if (index < 0 || index >= viewed[d])
        return emitOpError("index_map entry ")
               << index << " is outside the tensor";
  }
  if (auto perm = getPermutation()) {
    SmallVector<bool> seen(rank, false);
    if (int64_t(perm->size()) != rank)
      return emitOpError("permutation needs one entry per dimension");
    for (int64_t p : *perm) {
      if (p < 0 || p >= rank || seen[p])
        return emitOpError("permutation is not a permutation");
      seen[p] = true;
    }
  }
  if (auto shape = getResultShape()) {
    auto elements = [](ArrayRef<int64_t> dims) {
      return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                             std::multiplies<int64_t>());
    };
    int64_t read = elements(viewed);
    if (getIndexDim() && getIndexMap() && int64_t(*getIndexDim()) >= 0 &&
        int64_t(*getIndexDim()) < rank)
      read = read / std::max<int64_t>(viewed[*getIndexDim()], 1) *
             int64_t(getIndexMap()->size());
    if (elements(*shape) != read)
      return emitOpError("result_shape must hold the tensor's elements");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

LogicalResult GemmTileOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, {getCAttr(), getAAttr(), getBAttr()}, sizes,
                           symbols)))
    return failure();
  int64_t m = getM(), k = getK(), n = getN();
  if (m < 1 || k < 1 || n < 1)
    return emitOpError("needs positive m, k, n");
  if (sizes[0] < m * n || sizes[1] < m * k || sizes[2] < k * n)
    return emitOpError("tiles ")
           << m << "x" << k << " * " << k << "x" << n
           << " do not fit the buffers";
  return success();
}

LogicalResult GemvTileOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, {getCAttr(), getAAttr(), getBAttr()}, sizes,
                           symbols)))
    return failure();
  int64_t k = getK(), n = getN();
  if (k < 1 || n < 1)
    return emitOpError("needs positive k, n");
  if (sizes[0] < n || sizes[1] < k || sizes[2] < k * n)
    return emitOpError("tiles do not fit the buffers");
  return success();
}

LogicalResult ElementwiseOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, {getOutAttr(), getAAttr(), getBAttr()}, sizes,
                           symbols)))
    return failure();
  if (sizes[0] != sizes[1] || sizes[0] != sizes[2])
    return emitOpError("buffers must have the same size");
  return success();
}

std::pair<rt::Opcode, int64_t> RowsOp::toRuntime() {
  switch (getKernel()) {
  case RowKernel::reduce_sum:
    return {rt::Opcode::Reduce, int64_t(rt::ReduceKind::Sum)};
  case RowKernel::reduce_sumsq:
    return {rt::Opcode::Reduce, int64_t(rt::ReduceKind::SumSquares)};
  case RowKernel::reduce_max:
    return {rt::Opcode::Reduce, int64_t(rt::ReduceKind::Max)};
  case RowKernel::rms_scale:
    return {rt::Opcode::RmsScale, getK()};
  case RowKernel::rope:
    return {rt::Opcode::Rope, getK()};
  case RowKernel::attn_scores:
    return {rt::Opcode::AttnScores, getK()};
  case RowKernel::softmax_exp:
    return {rt::Opcode::SoftmaxExp, getK()};
  case RowKernel::attn_values:
    return {rt::Opcode::AttnValues, getK()};
  case RowKernel::div_rows:
    return {rt::Opcode::DivRows, getK()};
  case RowKernel::regrid:
    return {rt::Opcode::Regrid, getK()};
  case RowKernel::flash_step:
    return {rt::Opcode::FlashStep, getK()};
  case RowKernel::lane_scores:
    return {rt::Opcode::LaneScores, getK()};
  case RowKernel::lane_values:
    return {rt::Opcode::LaneValues, getK()};
  case RowKernel::lane_flash_scores:
    return {rt::Opcode::LaneFlashScores, getK()};
  case RowKernel::flash_stats:
    return {rt::Opcode::FlashStats, getK()};
  case RowKernel::lane_flash_values:
    return {rt::Opcode::LaneFlashValues, getK()};
  case RowKernel::lane_div_rows:
    return {rt::Opcode::LaneDivRows, getK()};
  }
  llvm_unreachable("unknown row kernel");
}

LogicalResult RowsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<FlatSymbolRefAttr> refs;
  for (Attribute ref : getBuffers())
    refs.push_back(cast<FlatSymbolRefAttr>(ref));
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, refs, sizes, symbols)))
    return failure();
  auto [opcode, k] = toRuntime();
  llvm::Expected<std::vector<int64_t>> extents =
      rt::rowKernelExtents(opcode, getM(), getGroups(), k, getN());
  if (!extents)
    return emitOpError() << llvm::toString(extents.takeError());
  if (sizes.size() != extents->size())
    return emitOpError("needs ")
           << extents->size() << " buffers, has " << sizes.size();
  rt::raiseToBufferHeads(opcode, getGroups(), k, sizes, *extents);
  for (auto [ref, size, need] : llvm::zip(refs, sizes, *extents))
    if (size < need)
      return emitOpError("buffer ")
             << ref << " has " << size << " elements, needs " << need;
  RowKernel kernel = getKernel();
  int expressions = rt::rowKernelExpressions(opcode);
  bool twoExpressions = expressions == 2;
  if ((expressions >= 1) != bool(getValid()))
    return emitOpError(getValid() ? "this kernel takes no `valid`"
                                  : "this kernel needs `valid`");
  if (twoExpressions != bool(getPosition()))
    return emitOpError(getPosition() ? "this kernel takes no `position`"
                                     : "this kernel needs `position`");
  if (kernel == RowKernel::regrid &&
      (sizes[0] % (*extents)[0] != 0 || sizes[1] % (*extents)[1] != 0))
    return emitOpError("regrid buffers must hold whole slots");
  if (kernel != RowKernel::regrid && (getLength() != 0 || getParts() != 1))
    return emitOpError("only a regrid has a length and parts");
  if (kernel == RowKernel::regrid)
    if (llvm::Error e =
            rt::checkRegridLength(getM(), getGroups(), k, getN(), getLength(),
                                  getParts(), sizes[0], sizes[1]))
      return emitOpError() << llvm::toString(std::move(e));
  // Operands are distinct buffers; rope and rms_scale may work in place.
  bool inPlace = kernel == RowKernel::rope || kernel == RowKernel::rms_scale;
  for (size_t i = 0; i < refs.size(); ++i)
    for (size_t j = i + 1; j < refs.size(); ++j)
      if (refs[i] == refs[j] && !(inPlace && i == 0 && j == 1))
        return emitOpError("buffers ")
               << i << " and " << j << " must not alias";
  if (getValid() && failed(verifyExpression(*this, *getValid())))
    return failure();
  if (getPosition() && failed(verifyExpression(*this, *getPosition())))
    return failure();
  return success();
}

LogicalResult ZeroOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return lookupBuffer(*this, getBufferAttr(), symbols);
}

LogicalResult SwapOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, {getAAttr(), getBAttr()}, sizes, symbols)))
    return failure();
  if (sizes[0] != sizes[1])
    return emitOpError("buffers must have the same size");
  return success();
}

LogicalResult RotateSlotsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<BufferOp> buffer = lookupBuffer(*this, getBufferAttr(), symbols);
  if (failed(buffer))
    return failure();
  if (getSlot() < 1 || buffer->getElements() % getSlot() != 0)
    return emitOpError("slot size ")
           << getSlot() << " does not divide the buffer's "
           << buffer->getElements() << " elements";
  return success();
}

LogicalResult CopyOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(
          lookupBuffers(*this, {getDstAttr(), getSrcAttr()}, sizes, symbols)))
    return failure();
  for (int64_t elements : sizes)
    if (getSize() < 1 || elements % getSize() != 0)
      return emitOpError("slot size ")
             << getSize() << " does not divide a buffer's " << elements
             << " elements";
  if (failed(verifyExpression(*this, getDstSlot())))
    return failure();
  return verifyExpression(*this, getSrcSlot());
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(lookupBuffer(*this, getBufferAttr(), symbols)))
    return failure();
  return lookupChannel(*this, getChannelAttr(), symbols);
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(lookupBuffer(*this, getBufferAttr(), symbols)))
    return failure();
  return lookupChannel(*this, getChannelAttr(), symbols);
}

LogicalResult RelayOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(lookupBuffer(*this, getBufferAttr(), symbols)) ||
      failed(lookupChannel(*this, getFromAttr(), symbols)) ||
      failed(lookupChannel(*this, getToAttr(), symbols)))
    return failure();
  if (getFrom() == getTo())
    return emitOpError("must relay between two different channels");
  return success();
}

LogicalResult CombineRelayOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<int64_t> sizes;
  if (failed(lookupBuffers(*this, {getSumAttr(), getPartialAttr()}, sizes,
                           symbols)) ||
      failed(lookupChannel(*this, getChannelAttr(), symbols)))
    return failure();
  if (getKind() == ElementwiseKind::swiglu)
    return emitOpError("combines with add, mul or max, not swiglu");
  if (getSum() == getPartial() || sizes[0] != sizes[1])
    return emitOpError("needs two distinct buffers of the same size");
  return success();
}

LogicalResult RepeatOp::verify() { return verifyExpression(*this, getCount()); }

LogicalResult WhenOp::verify() {
  return verifyExpression(*this, getCondition());
}

LogicalResult MarkOp::verify() {
  ProgramOp program = getProgram(*this);
  if (!program)
    return emitOpError("must be inside a core.program");
  if (int64_t(getOpIndex()) < 0 ||
      int64_t(getOpIndex()) >= int64_t(program.getOps().size()))
    return emitOpError("op index ")
           << getOpIndex() << " is outside the program's "
           << program.getOps().size() << " ops";
  return success();
}

#define GET_OP_CLASSES
#include "core/CoreOps.cpp.inc"
