//===- LocationName.cpp - The ONNX node a location names ------------------===//
#include "wafer/Support/LocationName.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Visitors.h"

std::string wafer::locationName(mlir::Location loc) {
  std::string name;
  loc->walk([&](mlir::Location inner) {
    if (auto named = llvm::dyn_cast<mlir::NameLoc>(inner)) {
      name = named.getName().str();
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return name;
}
