//===- Bundle.h - Program bundle file (FlatBuffers) -------------*- C++ -*-===//
#ifndef WAFER_RUNTIME_BUNDLE_H
#define WAFER_RUNTIME_BUNDLE_H

#include "wafer/Runtime/Program.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace wafer::rt {

/// FlatBuffers file identifier of a bundle (schema runtime/schema/bundle.fbs).
constexpr const char *kBundleIdentifier = "WAFB";

/// A bundle is the FlatBuffer followed by a 12-byte trailer: this tag, then
/// the xxh3-64 of the FlatBuffer's bytes (little endian), so that a changed
/// byte anywhere (a weight included) is an error, not a different answer.
constexpr const char *kBundleChecksumTag = "WSUM";
constexpr size_t kBundleTrailerBytes = 12;

/// The most bytes a FlatBuffer can address (its offsets are 32-bit).
constexpr uint64_t kMaxBundleBytes = (uint64_t(1) << 31) - 1;

/// Serializes a program to bundle bytes (FlatBuffer and trailer); an error
/// when its tensors' values would not fit in `maxBytes` (tests lower it).
llvm::Expected<std::vector<uint8_t>>
serializeBundle(const Program &program, uint64_t maxBytes = kMaxBundleBytes);

/// Appends the checksum trailer to FlatBuffer bytes (serializeBundle does;
/// tests and fuzzers that alter a FlatBuffer seal it again).
void sealBundle(std::vector<uint8_t> &flatbuffer);

/// True when the bytes start like a bundle (identifier check only).
bool looksLikeBundle(llvm::StringRef bytes);

/// Verifies (checksum, FlatBuffers verifier, version, every index in range)
/// and decodes bundle bytes. `origin` names the source in error messages.
/// Without `withWeights` the weights' values are not read (the program is
/// then weightsOmitted: it runs only in the timing mode). With the `file`
/// that holds `bytes`, the program keeps it and views the weights where
/// they lie instead of copying them; when the file is mapped, the pages
/// reading touched are given back, to be read again as they are used.
llvm::Expected<Program>
deserializeBundle(llvm::StringRef bytes, llvm::StringRef origin,
                  bool withWeights = true,
                  std::shared_ptr<const llvm::MemoryBuffer> file = nullptr);

/// Reads a bundle file.
llvm::Expected<Program> readBundleFile(llvm::StringRef path);

/// Writes a bundle file.
llvm::Error writeBundleFile(const Program &program, llvm::StringRef path);

/// Checks a program's internal consistency (indices, sizes, roles covering
/// the grid without overlap, colors within the target's budget, grid within
/// the fabric, expressions that parse). The error is one line.
llvm::Error validateProgram(const Program &program);

/// The lower-case name of an opcode ("gemm_tile", "send", ...), as dumps and
/// error messages spell it.
llvm::StringRef opcodeName(Opcode op);

/// A deterministic, line-oriented text form, for tests (--dump-bundle).
void dumpProgram(const Program &program, llvm::raw_ostream &os);

} // namespace wafer::rt

#endif // WAFER_RUNTIME_BUNDLE_H
