//===- CoreOps.h - Per-core programs ----------------------------*- C++ -*-===//
#ifndef WAFER_DIALECT_CORE_COREOPS_H
#define WAFER_DIALECT_CORE_COREOPS_H

#include "wafer/Dialect/Mesh/MeshOps.h"
#include "wafer/Runtime/Program.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/RegionKindInterface.h"

#include "core/CoreDialect.h.inc"
#include "core/CoreEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "core/CoreAttrs.h.inc"

#define GET_OP_CLASSES
#include "core/CoreOps.h.inc"

#endif // WAFER_DIALECT_CORE_COREOPS_H
