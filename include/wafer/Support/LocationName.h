//===- LocationName.h - The ONNX node a location names ----------*- C++ -*-===//
#ifndef WAFER_SUPPORT_LOCATIONNAME_H
#define WAFER_SUPPORT_LOCATIONNAME_H

#include "mlir/IR/Location.h"

#include <string>

namespace wafer {

/// The first NameLoc name inside `loc` (the importer names every op after
/// its ONNX node), or "" when there is none.
std::string locationName(mlir::Location loc);

} // namespace wafer

#endif // WAFER_SUPPORT_LOCATIONNAME_H
