//===- Printable.h - Text from files, made fit for a one-line message -----===//
//
// Header-only and LLVM Support alone, so that the runtime, the importers
// and the tokenizers share it.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_PRINTABLE_H
#define WAFER_SUPPORT_PRINTABLE_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace wafer {

/// `text` with non-printable bytes (and backslashes and quotes) escaped:
/// names and expressions read from files stay one printable line.
inline std::string printable(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text, os);
  return out;
}

} // namespace wafer

#endif // WAFER_SUPPORT_PRINTABLE_H
