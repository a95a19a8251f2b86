//===- LocalTile.cpp - Sizes of a distributed value on one core -----------===//
#include "wafer/Support/LocalTile.h"
#include "wafer/Support/CheckedMath.h"

using namespace mlir;
using namespace wafer;

int64_t wafer::bufferBytes(int64_t elements, Type elementType) {
  int64_t bytes = saturatingMul(elements, elementType.isF16() ? 2 : 4);
  return saturatingAdd(bytes, 3) / 4 * 4;
}
