//===- ToolSupport.h - What wafer's command-line tools share ----*- C++ -*-===//
//
// Every user-facing error of the tools is one line `error: <where>: <what>`
// (or MLIR's `file:line:col: error: <what>`), including those that LLVM's
// command-line parser and MLIR's diagnostics would print over several lines,
// and `--help` lists wafer's options, not the hundreds LLVM's backends
// register.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_SUPPORT_TOOLSUPPORT_H
#define WAFER_SUPPORT_TOOLSUPPORT_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class ToolOutputFile;
} // namespace llvm

namespace wafer {

/// Keeps the memory of large freed blocks in the process (glibc's malloc
/// otherwise maps every block over 32 MB afresh and unmaps it when freed):
/// the raise and fold probes of a 4096-token model allocate and free
/// tensors of hundreds of MB many times over, and faulting their pages in
/// again each time cost LLaMA3-8B's compile 11 of its 14 seconds. For the
/// compiler tools, which do nothing else. A no-op with other C libraries.
void keepFreedMemory();

/// keepFreedMemory() for a scope: then glibc's own policy again, and the
/// free memory kept is returned. wafer-run compiles under it, and emulates
/// without: kept, the emulator's large blocks fragment the heap (the
/// llama3.2-1b check peaked at 14.5 GB instead of 12.3 GB).
class FreedMemoryKept {
public:
  FreedMemoryKept();
  ~FreedMemoryKept();
  FreedMemoryKept(const FreedMemoryKept &) = delete;
  FreedMemoryKept &operator=(const FreedMemoryKept &) = delete;
};

/// Hides every command-line option registered so far (LLVM's own) from
/// `--help`, except --help, --version and those of the `keep` categories;
/// options registered later stay visible.
void hideForeignOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> keep = {});

/// Which tool made a result: {"tool", "version", "source" (the commit),
/// "llvm"}, for the stats files to record.
llvm::json::Object toolProvenance(llvm::StringRef tool);

/// Parses the command line. On a bad option prints one line `error: ...`
/// (LLVM's parser prints several, without the prefix) and returns false.
bool parseCommandLine(int argc, const char *const *argv,
                      llvm::StringRef overview);

/// Runs `action` with stderr (the file descriptor, so LLVM's and MLIR's
/// direct writes too) going to a temporary file, and returns what it wrote:
/// for libraries that print multi-line messages where a tool wants one.
std::string captureStderr(llvm::function_ref<void()> action);

/// Flushes `os`. A write that failed (a full disk) becomes the Error
/// `path: cannot write: ...` and is cleared from the stream, which LLVM
/// would otherwise turn into a fatal error when the stream is destroyed.
llvm::Error flushOutput(llvm::raw_fd_ostream &os, llvm::StringRef path);

/// Keeps the written `file` (`path` on the command line) and returns true,
/// or prints flushOutput's error line and returns false (the file is then
/// removed).
bool keepOutputFile(llvm::ToolOutputFile &file, llvm::StringRef path);

/// A tool's exit status: `status`, or 1 after one error line when what it
/// wrote to stdout could not be written.
int exitStatusWithStdout(int status);

/// An error message when a file a tool writes (each a pair of how the
/// command line names it and its path; empty: not written) is another it
/// writes or one it reads: the later write would silently replace the
/// other's contents. Devices (/dev/null, stdout's "-") keep no contents.
std::optional<std::string> clashingFiles(
    llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> written,
    llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> read);

/// Opens `path` ("-" for stdin) as a whole: regular files and stdin only, so
/// that a FIFO or a directory is an error rather than a hang.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
openInputFile(llvm::StringRef path);

/// The deepest bracket nesting MLIR text may have. MLIR's parser recurses
/// per level and overflows the stack at some ten thousand; real modules stay
/// below twenty.
constexpr unsigned kMaxNestingDepth = 1000;

/// Fails with `file:line:col: ...` when the brackets of MLIR text
/// nest deeper than `limit` (counted outside strings and comments). MLIR
/// bytecode passes unchecked.
llvm::Error checkNestingDepth(llvm::MemoryBufferRef buffer,
                              unsigned limit = kMaxNestingDepth);

/// Prints the first error diagnostic of `context` as one line to stderr and
/// drops the rest (notes, the operation dump, further errors).
class OneLineDiagnostics : public mlir::ScopedDiagnosticHandler {
public:
  explicit OneLineDiagnostics(mlir::MLIRContext *context);
  bool reported() const { return printed; }

private:
  bool printed = false;
};

/// The one line a diagnostic becomes, as every other error of the tools:
/// `error: file:line:col: message` (`error: file: message` without a line,
/// `error: message` without a file), first line of the message only.
std::string formatDiagnostic(mlir::Diagnostic &diag);

} // namespace wafer

#endif // WAFER_SUPPORT_TOOLSUPPORT_H
