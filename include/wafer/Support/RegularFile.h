//===- RegularFile.h - Refusing what is not a file --------------*- C++ -*-===//
//
// Readers take whole files: /dev/zero never ends and a directory has no
// bytes. Each reader asks here first. A pipe is read to its end, as `cat`
// reads it (`--target <(...)` is one); one nothing writes to waits, as it
// would for `cat`.
//
// Header-only on LLVM Support, so that the MLIR-free readers can use it.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_REGULARFILE_H
#define WAFER_SUPPORT_REGULARFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

namespace wafer {

/// An error `path: is ...` when `path` exists and is neither a regular file
/// nor a pipe (a directory, a device, a socket). A missing path passes: the
/// reader's own open then says so in its words.
inline llvm::Error refuseSpecialFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return llvm::Error::success();
  const char *what = nullptr;
  switch (status.type()) {
  case llvm::sys::fs::file_type::regular_file:
  case llvm::sys::fs::file_type::fifo_file:
    return llvm::Error::success();
  case llvm::sys::fs::file_type::directory_file:
    what = "is a directory, not a file";
    break;
  default:
    what = "is not a regular file (a device, socket or other special file)";
    break;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + what);
}

} // namespace wafer

#endif // WAFER_SUPPORT_REGULARFILE_H
