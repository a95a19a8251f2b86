//===- CoreDialect.cpp - Core dialect and its attributes ------------------===//
#include "wafer/Dialect/Core/CoreOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wafer::core;

#include "core/CoreDialect.cpp.inc"
#include "core/CoreEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "core/CoreAttrs.cpp.inc"

void CoreDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "core/CoreAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "core/CoreOps.cpp.inc"
      >();
}

/// Parses `name = lo:hi:step`.
static ParseResult parseProgression(AsmParser &parser, StringRef name,
                                    int64_t &lo, int64_t &hi, int64_t &step) {
  return failure(parser.parseKeyword(name) || parser.parseEqual() ||
                 parser.parseInteger(lo) || parser.parseColon() ||
                 parser.parseInteger(hi) || parser.parseColon() ||
                 parser.parseInteger(step));
}

Attribute CoreSetAttr::parse(AsmParser &parser, Type) {
  int64_t xLo, xHi, xStep, yLo, yHi, yStep;
  if (parser.parseLess() ||
      parseProgression(parser, "x", xLo, xHi, xStep) || parser.parseComma() ||
      parseProgression(parser, "y", yLo, yHi, yStep) || parser.parseGreater())
    return {};
  return parser.getChecked<CoreSetAttr>(parser.getContext(), xLo, xHi, xStep,
                                        yLo, yHi, yStep);
}

void CoreSetAttr::print(AsmPrinter &printer) const {
  printer << "<x = " << getXLo() << ":" << getXHi() << ":" << getXStep()
          << ", y = " << getYLo() << ":" << getYHi() << ":" << getYStep()
          << ">";
}

LogicalResult CoreSetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t xLo, int64_t xHi, int64_t xStep,
                                  int64_t yLo, int64_t yHi, int64_t yStep) {
  if (xLo < 0 || yLo < 0 || xHi < xLo || yHi < yLo || xStep < 1 || yStep < 1)
    return emitError() << "core set needs 0 <= lo <= hi and step >= 1 on "
                          "each axis";
  return success();
}

wafer::rt::CoreSet CoreSetAttr::toRuntime() const {
  return {{getXLo(), getXHi(), getXStep()}, {getYLo(), getYHi(), getYStep()}};
}

CoreSetAttr CoreSetAttr::get(MLIRContext *context, const rt::CoreSet &set) {
  return get(context, set.x.lo, set.x.hi, set.x.step, set.y.lo, set.y.hi,
             set.y.step);
}

//===----------------------------------------------------------------------===//
// RouteOp assembly: `color C at #core.cores<...> from IN to [OUT, ...]`
//===----------------------------------------------------------------------===//

ParseResult RouteOp::parse(OpAsmParser &parser, OperationState &result) {
  int32_t color = 0;
  CoreSetAttr cores;
  SmallVector<int32_t> outs;
  auto parseDir = [&](Dir &dir) -> ParseResult {
    StringRef name;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<Dir> parsed = symbolizeDir(name);
    if (!parsed)
      return parser.emitError(loc, "unknown router port '") << name << "'";
    dir = *parsed;
    return success();
  };
  Dir in;
  if (parser.parseKeyword("color") || parser.parseInteger(color) ||
      parser.parseKeyword("at") ||
      parser.parseCustomAttributeWithFallback(cores) ||
      parser.parseKeyword("from") || parseDir(in) || parser.parseKeyword("to") ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       Dir out;
                                       if (parseDir(out))
                                         return failure();
                                       outs.push_back(int32_t(out));
                                       return success();
                                     }) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute(getColorAttrName(result.name), b.getI32IntegerAttr(color));
  result.addAttribute(getCoresAttrName(result.name), cores);
  result.addAttribute(getInAttrName(result.name),
                      DirAttr::get(b.getContext(), in));
  result.addAttribute(getOutsAttrName(result.name),
                      b.getDenseI32ArrayAttr(outs));
  return success();
}

void RouteOp::print(OpAsmPrinter &p) {
  p << " color " << getColor() << " at ";
  p.printStrippedAttrOrType(getCores());
  p << " from " << stringifyDir(getIn()) << " to [";
  llvm::interleaveComma(getOuts(), p,
                        [&](int32_t out) { p << stringifyDir(Dir(out)); });
  p << "]";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getColorAttrName(), getCoresAttrName(),
                           getInAttrName(), getOutsAttrName()});
}
