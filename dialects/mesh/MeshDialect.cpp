//===- MeshDialect.cpp - Mesh dialect and its attributes ------------------===//
#include "wafer/Dialect/Mesh/MeshOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
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

/// A field's value as the attribute stores it: i64 or f64, by its kind.
static Attribute fieldValueAttr(MLIRContext *context,
                                const wafer::rt::TargetFieldInfo &field,
                                double value) {
  Builder b(context);
  if (field.isInteger)
    return b.getI64IntegerAttr(int64_t(value));
  return b.getF64FloatAttr(value);
}

static std::optional<double> fieldValue(const wafer::rt::TargetFieldInfo &field,
                                        Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr); i && field.isInteger)
    return double(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr); f && !field.isInteger)
    return f.getValueAsDouble();
  return std::nullopt;
}

/// The defects of a target as TargetAttr stores them (null when there are
/// none).
static std::pair<DenseI64ArrayAttr, DenseI64ArrayAttr>
defectAttrs(MLIRContext *context, const wafer::rt::Target &t) {
  wafer::rt::FlatDefects flat = wafer::rt::flattenDefects(t);
  auto attr = [&](ArrayRef<int64_t> values) {
    return values.empty() ? nullptr : DenseI64ArrayAttr::get(context, values);
  };
  return {attr(flat.cores), attr(flat.links)};
}

static bool readDefects(DenseI64ArrayAttr cores, DenseI64ArrayAttr links,
                        wafer::rt::Target &t) {
  return wafer::rt::unflattenDefects(cores ? cores.asArrayRef()
                                           : ArrayRef<int64_t>(),
                                     links ? links.asArrayRef()
                                           : ArrayRef<int64_t>(),
                                     t);
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, ArrayAttr values,
                                 DenseI64ArrayAttr deadCores,
                                 DenseI64ArrayAttr deadLinks) {
  ArrayRef<wafer::rt::TargetFieldInfo> fields = wafer::rt::targetFields();
  if (values.size() != fields.size())
    return emitError() << "target has " << values.size()
                       << " field values, expected " << fields.size();
  if (name.empty())
    return emitError() << "target field 'name' must be a non-empty string";
  for (auto [field, attr] : llvm::zip_equal(fields, values)) {
    std::optional<double> value = fieldValue(field, attr);
    if (!value)
      return emitError() << "target field '" << field.key << "' must be "
                         << (field.isInteger ? "an i64 integer" : "an f64");
    if (llvm::Error e = field.check(*value))
      return emitError() << llvm::toString(std::move(e));
  }
  wafer::rt::Target t;
  t.name = name.str();
  for (auto [field, attr] : llvm::zip_equal(fields, values))
    field.set(t, *fieldValue(field, attr));
  if (!readDefects(deadCores, deadLinks, t))
    return emitError() << "target defects must be [y, x] pairs and [y, x, "
                          "direction] triples";
  if (llvm::Error e = wafer::rt::validateTarget(t))
    return emitError() << llvm::toString(std::move(e));
  return success();
}

wafer::rt::Target TargetAttr::getValue() const {
  wafer::rt::Target t;
  t.name = getName().str();
  for (auto [field, attr] :
       llvm::zip_equal(wafer::rt::targetFields(), getValues()))
    field.set(t, *fieldValue(field, attr));
  readDefects(getDeadCores(), getDeadLinks(), t);
  return t;
}

/// `[[y, x], ...]` (dead_cores) or `[[y, x, "east" | "south"], ...]`
/// (dead_links), appended to `t` in the order given.
static ParseResult parseDefectList(AsmParser &parser, bool links,
                                   wafer::rt::Target &t) {
  auto parseEntry = [&]() -> ParseResult {
    int64_t y = 0, x = 0;
    if (parser.parseLSquare() || parser.parseInteger(y) ||
        parser.parseComma() || parser.parseInteger(x))
      return failure();
    if (!links) {
      t.deadCores.push_back({y, x});
      return parser.parseRSquare();
    }
    SMLoc loc = parser.getCurrentLocation();
    std::string dir;
    if (parser.parseComma() || parser.parseString(&dir))
      return failure();
    if (dir != "east" && dir != "south")
      return parser.emitError(loc, "a dead link goes \"east\" or \"south\" "
                                   "from its core");
    t.deadLinks.push_back({y, x, dir == "south"});
    return parser.parseRSquare();
  };
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        parseEntry);
}

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  ArrayRef<wafer::rt::TargetFieldInfo> fields = wafer::rt::targetFields();
  std::string name;
  SmallVector<double> values(fields.size(), 0.0);
  SmallVector<bool> given(fields.size(), false);
  bool hasBase = false;
  wafer::rt::Target defects;
  llvm::StringSet<> keys;
  auto parseField = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    std::string key;
    if (parser.parseKeywordOrString(&key) || parser.parseEqual())
      return failure();
    // The later would silently win (two bases mix their fields).
    if (!keys.insert(key).second)
      return parser.emitError(loc, "target field '" + key + "' is given twice");
    if (key == "dead_cores" || key == "dead_links")
      return parseDefectList(parser, key == "dead_links", defects);
    if (key == "name" || key == "base") {
      std::string text;
      if (parser.parseString(&text))
        return failure();
      if (key == "name") {
        name = text;
        return success();
      }
      llvm::Expected<wafer::rt::Target> preset =
          wafer::rt::getPresetTarget(text);
      if (!preset)
        return parser.emitError(loc, llvm::toString(preset.takeError()));
      if (name.empty())
        name = preset->name;
      for (auto [i, field] : llvm::enumerate(fields))
        if (!given[i])
          values[i] = field.get(*preset);
      hasBase = true;
      return success();
    }
    const wafer::rt::TargetFieldInfo *field = llvm::find_if(
        fields, [&](const wafer::rt::TargetFieldInfo &f) { return f.key == key; });
    if (field == fields.end())
      return parser.emitError(loc, "unknown target field '" + key + "'");
    size_t index = field - fields.begin();
    double value = 0;
    if (field->isInteger) {
      int64_t integer = 0;
      if (parser.parseInteger(integer))
        return failure();
      // Checked here, before the value becomes a double.
      if (llvm::Error e = field->checkInteger(integer))
        return parser.emitError(loc, llvm::toString(std::move(e)));
      value = double(integer);
    } else {
      // Reals accept integer literals too (clock_hz = 1000000000).
      int64_t integer = 0;
      OptionalParseResult asInteger = parser.parseOptionalInteger(integer);
      if (asInteger.has_value()) {
        if (failed(*asInteger))
          return failure();
        value = double(integer);
      } else if (parser.parseFloat(value)) {
        return failure();
      }
    }
    values[index] = value;
    given[index] = true;
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater,
                                     parseField))
    return {};
  if (!hasBase)
    for (auto [i, field] : llvm::enumerate(fields))
      if (!given[i]) {
        parser.emitError(parser.getNameLoc(),
                         "target field '" + field.key +
                             "' is missing (give every field, or start "
                             "from a preset with base = \"...\")");
        return {};
      }
  SmallVector<Attribute> attrs;
  for (auto [field, value] : llvm::zip_equal(fields, values))
    attrs.push_back(fieldValueAttr(parser.getContext(), field, value));
  llvm::sort(defects.deadCores);
  llvm::sort(defects.deadLinks);
  auto [deadCores, deadLinks] = defectAttrs(parser.getContext(), defects);
  return parser.getChecked<TargetAttr>(
      parser.getContext(), name, ArrayAttr::get(parser.getContext(), attrs),
      deadCores, deadLinks);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<name = ";
  printer.printString(getName());
  for (auto [field, attr] :
       llvm::zip_equal(wafer::rt::targetFields(), getValues())) {
    printer << ", " << field.key << " = ";
    double value = *fieldValue(field, attr);
    if (field.isInteger)
      printer << int64_t(value);
    else
      printer << value;
  }
  wafer::rt::Target t = getValue();
  if (!t.deadCores.empty()) {
    printer << ", dead_cores = [";
    llvm::interleaveComma(t.deadCores, printer, [&](auto c) {
      printer << "[" << c.y << ", " << c.x << "]";
    });
    printer << "]";
  }
  if (!t.deadLinks.empty()) {
    printer << ", dead_links = [";
    llvm::interleaveComma(t.deadLinks, printer, [&](auto l) {
      printer << "[" << l.y << ", " << l.x << ", \""
              << (l.south ? "south" : "east") << "\"]";
    });
    printer << "]";
  }
  printer << ">";
}

TargetAttr wafer::mesh::getTargetAttr(MLIRContext *context,
                                      const rt::Target &t) {
  SmallVector<Attribute> values;
  for (const wafer::rt::TargetFieldInfo &field : wafer::rt::targetFields())
    values.push_back(fieldValueAttr(context, field, field.get(t)));
  auto [deadCores, deadLinks] = defectAttrs(context, t);
  return TargetAttr::get(context, t.name, ArrayAttr::get(context, values),
                         deadCores, deadLinks);
}

wafer::rt::Target wafer::mesh::getRuntimeTarget(TargetAttr attr) {
  return attr.getValue();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> axes, blocks;
  SmallVector<bool> balanced;
  SmallVector<int64_t> parts;
  auto parseDim = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalStar())) {
      axes.push_back(kNone);
      blocks.push_back(1);
    } else {
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
    }
    // The verifier refuses a balanced unsplit dimension.
    balanced.push_back(succeeded(parser.parseOptionalKeyword("balanced")));
    parts.push_back(1);
    if (balanced.back() && succeeded(parser.parseOptionalKeyword("in")) &&
        parser.parseInteger(parts.back()))
      return failure();
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
  if (llvm::none_of(balanced, [](bool b) { return b; }))
    balanced.clear();
  if (llvm::all_of(parts, [](int64_t n) { return n == 1; }))
    parts.clear();
  return parser.getChecked<LayoutAttr>(parser.getContext(), axes, blocks,
                                       interleave, balanced, parts);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::enumerate(llvm::zip(getAxes(), getBlocks())),
                        printer, [&](auto dim) {
                          auto [axis, count] = dim.value();
                          if (axis == kNone)
                            printer << "*";
                          else
                            printer << (axis == kX ? "x:" : "y:") << count;
                          if (isBalanced(dim.index()))
                            printer << " balanced";
                          if (getPartCount(dim.index()) != 1)
                            printer << " in " << getPartCount(dim.index());
                        });
  printer << "]";
  if (getInterleave())
    printer << ", interleave";
  printer << ">";
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> blocks, bool,
                                 ArrayRef<bool> balanced,
                                 ArrayRef<int64_t> parts) {
  if (axes.size() != blocks.size())
    return emitError() << "layout has " << axes.size() << " axes but "
                       << blocks.size() << " block counts";
  if (!balanced.empty() && balanced.size() != axes.size())
    return emitError() << "layout has " << axes.size() << " axes but "
                       << balanced.size() << " balanced flags";
  for (auto [axis, flag] : llvm::zip(axes, balanced))
    if (flag && axis == kNone)
      return emitError() << "an unsplit dimension has no blocks to balance";
  if (!parts.empty() && parts.size() != axes.size())
    return emitError() << "layout has " << axes.size() << " axes but "
                       << parts.size() << " part counts";
  for (auto [d, count] : llvm::enumerate(parts)) {
    bool flag = d < balanced.size() && balanced[d];
    if (count != 1 && (!flag || count < 1 || blocks[d] % count != 0))
      return emitError() << "dimension " << d << " in " << count
                         << " parts needs balanced blocks that many parts "
                            "divide";
  }
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
  for (auto [d, axis, count] : llvm::enumerate(getAxes(), getBlocks()))
    dims.push_back({axis == kX   ? rt::Axis::X
                    : axis == kY ? rt::Axis::Y
                                 : rt::Axis::None,
                    count, isBalanced(d), getPartCount(d)});
  return dims;
}

LayoutAttr LayoutAttr::withBalanced(size_t d, bool balanced,
                                    int64_t parts) const {
  SmallVector<bool> flags(getAxes().size(), false);
  llvm::copy(getBalanced(), flags.begin());
  flags[d] = balanced;
  SmallVector<int64_t> counts(getAxes().size(), 1);
  llvm::copy(getParts(), counts.begin());
  counts[d] = balanced ? parts : 1;
  return LayoutAttr::get(getContext(), getAxes(), getBlocks(), getInterleave(),
                         flags, counts);
}

LayoutAttr LayoutAttr::withInterleave(bool interleave) const {
  return LayoutAttr::get(getContext(), getAxes(), getBlocks(), interleave,
                         getBalanced(), getParts());
}

//===----------------------------------------------------------------------===//
// AllreduceAttr
//===----------------------------------------------------------------------===//

LogicalResult
AllreduceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      AllreduceAlgorithm algorithm, int64_t k) {
  if (algorithm == AllreduceAlgorithm::ktree && k < 0)
    return emitError() << "K-tree needs K >= 1 (or none: chosen later), got "
                       << k;
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
  if (auto target = op->getAttrOfType<TargetAttr>(kTargetAttrName)) {
    wafer::rt::Target value = target.getValue();
    if (grid.getWidth() > value.fabricWidth ||
        grid.getHeight() > value.fabricHeight)
      return op->emitError()
             << "grid " << grid.getHeight() << "x" << grid.getWidth()
             << " does not fit target '" << target.getName() << "' (fabric "
             << value.fabricHeight << "x" << value.fabricWidth
             << " cores, rows x columns)";
  }
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

bool wafer::mesh::sameBlocks(Type a, size_t da, Type b, size_t db) {
  auto evenly = [](Type type, size_t d) {
    return cast<RankedTensorType>(type).getDimSize(d) %
               getLayout(type).getBlocks()[d] ==
           0;
  };
  return evenly(a, da) || evenly(b, db) ||
         (getLayout(a).isBalanced(da) == getLayout(b).isBalanced(db) &&
          getLayout(a).getPartCount(da) == getLayout(b).getPartCount(db));
}

void wafer::mesh::placeInterleaved(Operation *root) {
  root->walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      LayoutAttr layout = getLayout(type);
      if (!layout || layout.getInterleave())
        continue;
      result.setType(RankedTensorType::get(
          type.getShape(), type.getElementType(), layout.withInterleave(true)));
    }
  });
}

bool wafer::mesh::isInterleaved(Operation *root) {
  return root
      ->walk([&](Operation *op) {
        for (Value result : op->getResults())
          if (LayoutAttr layout = getLayout(result.getType());
              layout && layout.getInterleave())
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}
