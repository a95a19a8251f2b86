//===- BundleInternal.h - Shared by the bundle reader, checker, dumper ----===//
#ifndef WAFER_RUNTIME_BUNDLEINTERNAL_H
#define WAFER_RUNTIME_BUNDLEINTERNAL_H

#include "wafer/Runtime/Program.h"

#include "llvm/Support/Error.h"

#include <string>

namespace wafer::rt::detail {

/// "x=lo:hi:step y=lo:hi:step".
std::string coreSetText(const CoreSet &c);

/// Every buffer, channel and mark index of a freshly read bundle is in
/// range (before anything dereferences them).
llvm::Error checkIndices(const Program &program);

} // namespace wafer::rt::detail

#endif // WAFER_RUNTIME_BUNDLEINTERNAL_H
