//===- MeshDialect.cpp - Mesh dialect and its attributes ------------------===//
#include "wafer/Dialect/Mesh/MeshOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace wafer::mesh;

#include "mesh/MeshDialect.cpp.inc"
#include "mesh/MeshEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mesh/MeshAttrs.cpp.inc"

void MeshDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mesh/MeshAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mesh/MeshOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// GridAttr
//===----------------------------------------------------------------------===//

Attribute GridAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t, 2> dims;
  if (parser.parseLess() ||
      parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false) ||
      parser.parseGreater())
    return {};
  if (dims.size() != 2) {
    parser.emitError(parser.getNameLoc(), "grid must be HxW");
    return {};
  }
  return parser.getChecked<GridAttr>(parser.getContext(), dims[0], dims[1]);
}

void GridAttr::print(AsmPrinter &printer) const {
  printer << "<" << getHeight() << "x" << getWidth() << ">";
}

LogicalResult GridAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t height, int64_t width) {
  if (height < 1 || width < 1)
    return emitError() << "grid " << height << "x" << width
                       << " must have at least one core per axis";
  return success();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, int64_t fabricWidth,
                                 int64_t fabricHeight, int64_t clockHz,
                                 int64_t sramBytes, int64_t routesPerCore,
                                 int64_t hopCycles, int64_t rampCycles,
                                 int64_t relayCycles,
                                 int64_t linkWordsPerCycle, int64_t macsF32,
                                 int64_t macsF16, int64_t macsF16F32) {
  std::pair<StringRef, int64_t> positive[] = {
      {"fabric_width", fabricWidth},
      {"fabric_height", fabricHeight},
      {"clock_hz", clockHz},
      {"sram_bytes", sramBytes},
      {"routes_per_core", routesPerCore},
      {"link_words_per_cycle", linkWordsPerCycle},
      {"macs_f32", macsF32},
      {"macs_f16", macsF16},
      {"macs_f16_f32", macsF16F32}};
  for (auto [field, value] : positive)
    if (value <= 0)
      return emitError() << "target field '" << field
                         << "' must be positive, got " << value;
  std::pair<StringRef, int64_t> nonNegative[] = {{"hop_cycles", hopCycles},
                                                 {"ramp_cycles", rampCycles},
                                                 {"relay_cycles", relayCycles}};
  for (auto [field, value] : nonNegative)
    if (value < 0)
      return emitError() << "target field '" << field
                         << "' must not be negative, got " << value;
  return success();
}

TargetAttr wafer::mesh::getTargetAttr(MLIRContext *context,
                                      const rt::Target &t) {
  return TargetAttr::get(
      context, t.name, t.fabricWidth, t.fabricHeight, int64_t(t.clockHz),
      t.sramBytes, t.routesPerCore, t.hopCycles, t.rampCycles, t.relayCycles,
      t.linkWordsPerCycle, int64_t(t.macsPerCycleF32),
      int64_t(t.macsPerCycleF16), int64_t(t.macsPerCycleF16AccF32));
}

wafer::rt::Target wafer::mesh::getRuntimeTarget(TargetAttr attr) {
  rt::Target t;
  t.name = attr.getName().str();
  t.fabricWidth = attr.getFabricWidth();
  t.fabricHeight = attr.getFabricHeight();
  t.clockHz = double(attr.getClockHz());
  t.sramBytes = attr.getSramBytes();
  t.routesPerCore = attr.getRoutesPerCore();
  t.hopCycles = attr.getHopCycles();
  t.rampCycles = attr.getRampCycles();
  t.relayCycles = attr.getRelayCycles();
  t.linkWordsPerCycle = attr.getLinkWordsPerCycle();
  t.macsPerCycleF32 = double(attr.getMacsF32());
  t.macsPerCycleF16 = double(attr.getMacsF16());
  t.macsPerCycleF16AccF32 = double(attr.getMacsF16F32());
  return t;
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> axes, blocks;
  auto parseDim = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalStar())) {
      axes.push_back(kNone);
      blocks.push_back(1);
      return success();
    }
    StringRef axis;
    int64_t count = 0;
    if (parser.parseKeyword(&axis) || parser.parseColon() ||
        parser.parseInteger(count))
      return failure();
    if (axis != "x" && axis != "y")
      return parser.emitError(parser.getCurrentLocation(),
                              "expected '*', 'x:N' or 'y:N'");
    axes.push_back(axis == "x" ? kX : kY);
    blocks.push_back(count);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  bool interleave = false;
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("interleave"))
      return {};
    interleave = true;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(parser.getContext(), axes, blocks,
                                       interleave);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::zip(getAxes(), getBlocks()), printer,
                        [&](auto dim) {
                          auto [axis, count] = dim;
                          if (axis == kNone)
                            printer << "*";
                          else
                            printer << (axis == kX ? "x:" : "y:") << count;
                        });
  printer << "]";
  if (getInterleave())
    printer << ", interleave";
  printer << ">";
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> blocks, bool) {
  if (axes.size() != blocks.size())
    return emitError() << "layout has " << axes.size() << " axes but "
                       << blocks.size() << " block counts";
  bool usedX = false, usedY = false;
  for (auto [axis, count] : llvm::zip(axes, blocks)) {
    if (axis != kNone && axis != kX && axis != kY)
      return emitError() << "unknown layout axis code " << axis;
    if (count < 1)
      return emitError() << "layout block count must be positive";
    if (axis == kNone && count != 1)
      return emitError() << "an unsplit dimension has exactly 1 block";
    bool &used = axis == kX ? usedX : usedY;
    if (axis != kNone && used)
      return emitError() << "layout splits two dimensions along "
                         << (axis == kX ? "x" : "y");
    if (axis != kNone)
      used = true;
  }
  return success();
}

std::vector<wafer::rt::LayoutDim> LayoutAttr::toRuntime() const {
  std::vector<rt::LayoutDim> dims;
  for (auto [axis, count] : llvm::zip(getAxes(), getBlocks()))
    dims.push_back({axis == kX   ? rt::Axis::X
                    : axis == kY ? rt::Axis::Y
                                 : rt::Axis::None,
                    count});
  return dims;
}

LayoutAttr LayoutAttr::withInterleave(bool interleave) const {
  return LayoutAttr::get(getContext(), getAxes(), getBlocks(), interleave);
}

//===----------------------------------------------------------------------===//
// AllreduceAttr
//===----------------------------------------------------------------------===//

LogicalResult
AllreduceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      AllreduceAlgorithm algorithm, int64_t k) {
  if (algorithm == AllreduceAlgorithm::ktree && k < 1)
    return emitError() << "K-tree needs K >= 1, got " << k;
  if (algorithm != AllreduceAlgorithm::ktree && k != 0)
    return emitError() << stringifyAllreduceAlgorithm(algorithm)
                       << " allreduce takes no K";
  return success();
}

int64_t AllreduceAttr::getTreeK() const {
  switch (getAlgorithm()) {
  case AllreduceAlgorithm::ktree:
    return getK();
  case AllreduceAlgorithm::pipeline:
    return 1;
  case AllreduceAlgorithm::ring:
    return 0;
  }
  llvm_unreachable("unknown allreduce algorithm");
}

//===----------------------------------------------------------------------===//
// Module-level attributes
//===----------------------------------------------------------------------===//

LogicalResult MeshDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError() << "'" << kTargetAttrName
                             << "' must be a #mesh.target";
    return success();
  }
  if (attr.getName() != kGridAttrName)
    return op->emitError() << "unknown mesh attribute '" << attr.getName()
                           << "'";
  auto grid = dyn_cast<GridAttr>(attr.getValue());
  if (!grid)
    return op->emitError() << "'" << kGridAttrName
                           << "' must be a #mesh.grid";
  if (auto target = op->getAttrOfType<TargetAttr>(kTargetAttrName))
    if (grid.getWidth() > target.getFabricWidth() ||
        grid.getHeight() > target.getFabricHeight())
      return op->emitError()
             << "grid " << grid.getHeight() << "x" << grid.getWidth()
             << " does not fit target '" << target.getName() << "' (fabric "
             << target.getFabricHeight() << "x" << target.getFabricWidth()
             << " cores, rows x columns)";
  return success();
}

GridAttr wafer::mesh::lookupGrid(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto grid = op->getAttrOfType<GridAttr>(MeshDialect::kGridAttrName))
      return grid;
  return {};
}

TargetAttr wafer::mesh::lookupTarget(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto target =
            op->getAttrOfType<TargetAttr>(MeshDialect::kTargetAttrName))
      return target;
  return {};
}

LayoutAttr wafer::mesh::getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<LayoutAttr>(tensor.getEncoding())
                : LayoutAttr();
}
