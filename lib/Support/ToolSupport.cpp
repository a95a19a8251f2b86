//===- ToolSupport.cpp - What wafer's command-line tools share ------------===//
#include "wafer/Support/ToolSupport.h"
// WAFER_COMMIT, written at every build (lib/Support/CMakeLists.txt).
#include "WaferCommit.h"
#include "wafer/Support/RegularFile.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace llvm;

void wafer::keepFreedMemory() {
#ifdef __GLIBC__
  // Both settings are needed: without the first, large blocks are still
  // mapped one by one; without the second, the heap's free top is returned.
  mallopt(M_MMAP_THRESHOLD, std::numeric_limits<int>::max());
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

/// Nesting depth of FreedMemoryKept scopes (compiles run on one thread).
static int keptScopes = 0;

wafer::FreedMemoryKept::FreedMemoryKept() {
  if (keptScopes++ == 0)
    keepFreedMemory();
}

wafer::FreedMemoryKept::~FreedMemoryKept() {
  if (--keptScopes != 0)
    return;
#ifdef __GLIBC__
  // glibc's defaults, as far as mallopt can restore them: its dynamic
  // mmap threshold tops out at 32 MB, the trim threshold at twice that.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  malloc_trim(0);
#endif
}

void wafer::hideForeignOptions(ArrayRef<const cl::OptionCategory *> keep) {
  cl::HideUnrelatedOptions(keep);
}

/// One line from LLVM's parser messages: "tool: Unknown command line
/// argument '--x'.  Try: 'tool --help'\ntool: Did you mean '--y'?" becomes
/// "unknown command line argument '--x'; did you mean '--y'?".
static std::string oneLine(StringRef text, StringRef tool) {
  SmallVector<StringRef> lines;
  std::vector<std::string> parts;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    line = line.trim();
    line.consume_front(tool);
    // Pass options report through a parser without a program name, so the
    // tool's prefix may be followed by an empty one (": : for the ...").
    while (line.consume_front(":"))
      line = line.ltrim();
    // Pointers to --help: the message already says what is wrong.
    line = line.split(".  Try:").first.split(": See:").first;
    line = line.split(" See:").first.trim();
    line = line.rtrim(".!");
    if (line.empty())
      continue;
    std::string part = line.str();
    part[0] = toLower(part[0]);
    parts.push_back(std::move(part));
  }
  if (parts.empty())
    return "bad command line";
  return join(parts, "; ");
}

Error wafer::flushOutput(raw_fd_ostream &os, StringRef path) {
  os.flush();
  if (!os.has_error())
    return Error::success();
  std::string message = os.error().message();
  os.clear_error();
  return createStringError(inconvertibleErrorCode(),
                           (path == "-" ? StringRef("<stdout>") : path) +
                               ": cannot write: " + message);
}

bool wafer::keepOutputFile(ToolOutputFile &file, StringRef path) {
  if (Error error = flushOutput(file.os(), path)) {
    errs() << "error: " << toString(std::move(error)) << "\n";
    return false;
  }
  file.keep();
  return true;
}

int wafer::exitStatusWithStdout(int status) {
  if (Error error = flushOutput(outs(), "-")) {
    errs() << "error: " << toString(std::move(error)) << "\n";
    return 1;
  }
  return status;
}

std::string wafer::captureStderr(function_ref<void()> action) {
  SmallString<128> path;
  int fd;
  if (sys::fs::createTemporaryFile("wafer", "err", fd, path)) {
    action();
    return "";
  }
  errs().flush();
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  action();
  errs().flush();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  auto captured = MemoryBuffer::getFile(path);
  sys::fs::remove(path);
  return captured ? (*captured)->getBuffer().str() : "";
}

json::Object wafer::toolProvenance(StringRef tool) {
  return json::Object{{"tool", tool},
                      {"version", WAFER_VERSION},
                      {"source", WAFER_COMMIT},
                      {"llvm", LLVM_VERSION_STRING}};
}

bool wafer::parseCommandLine(int argc, const char *const *argv,
                             StringRef overview) {
  std::string name = argc > 0 ? sys::path::filename(argv[0]).str() : "wafer";
  cl::SetVersionPrinter([name](raw_ostream &os) {
    os << name << " (wafer) " << WAFER_VERSION << ", source " << WAFER_COMMIT
       << "\nbuilt with LLVM and MLIR " << LLVM_VERSION_STRING << "\n";
  });
  // Some of the parser's messages go to the stream given, others (bad
  // option values) straight to stderr: catch both.
  std::string errors;
  raw_string_ostream os(errors);
  bool parsed = false;
  auto parse = [&] {
    parsed = cl::ParseCommandLineOptions(argc, argv, overview, &os);
  };
  // --help and --version print and exit inside the parser: not captured.
  bool informational = llvm::any_of(
      ArrayRef(argv + 1, argv + argc), [](const char *arg) {
        StringRef a = StringRef(arg).ltrim('-');
        return a.starts_with("help") || a == "version" || a == "h";
      });
  std::string direct;
  if (informational)
    parse();
  else
    direct = captureStderr(parse);
  errors = direct + errors;
  if (parsed && direct.empty())
    return true;
  StringRef tool = argc > 0 ? StringRef(argv[0]) : StringRef();
  tool = tool.substr(tool.find_last_of('/') + 1);
  errs() << "error: " << oneLine(errors, tool) << "\n";
  return false;
}

Expected<std::unique_ptr<MemoryBuffer>>
wafer::openInputFile(StringRef path) {
  auto fail = [&](const Twine &what) {
    return createStringError(inconvertibleErrorCode(), path + ": " + what);
  };
  if (path != "-")
    if (Error special = refuseSpecialFile(path))
      return std::move(special);
  auto buffer = MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/true);
  if (!buffer)
    return fail("cannot open: " + buffer.getError().message());
  return std::move(*buffer);
}

Error wafer::checkNestingDepth(MemoryBufferRef buffer, unsigned limit) {
  StringRef text = buffer.getBuffer();
  if (text.starts_with("ML\xefR"))
    return Error::success();
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      // Strings end at an unescaped quote (or the line: MLIR strings do not
      // span lines, so an unterminated one cannot hide the rest).
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < text.size() && text[i] == '\n')
        --i;
      break;
    case '/':
      if (next == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '-': // "->" is an arrow, not a closing bracket.
      if (next == '>')
        ++i;
      break;
    case '<':
      if (next == '=') // "<=" in affine constraints
        break;
      [[fallthrough]];
    case '(':
    case '[':
    case '{':
      if (++depth > limit)
        return createStringError(
            inconvertibleErrorCode(),
            buffer.getBufferIdentifier() + ":" + Twine(line) + ":" +
                Twine(i - lineStart + 1) +
                ": brackets nest deeper than " + Twine(limit) +
                " levels");
      break;
    case '>':
      if (next == '=') // ">=" in affine constraints
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return Error::success();
}

std::string wafer::formatDiagnostic(mlir::Diagnostic &diag) {
  std::string message = diag.str();
  message = StringRef(message).split('\n').first.rtrim().str();
  std::string where;
  diag.getLocation()->walk([&](mlir::Location loc) {
    if (auto file = dyn_cast<mlir::FileLineColLoc>(loc)) {
      where = file.getFilename().str();
      if (file.getLine() > 0)
        where += ":" + std::to_string(file.getLine()) + ":" +
                 std::to_string(file.getColumn());
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (where.empty())
    return "error: " + message;
  return "error: " + where + ": " + message;
}

wafer::OneLineDiagnostics::OneLineDiagnostics(mlir::MLIRContext *context)
    : ScopedDiagnosticHandler(context) {
  context->printOpOnDiagnostic(false);
  setHandler([this](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && !printed) {
      errs() << formatDiagnostic(diag) << "\n";
      printed = true;
    }
    return mlir::success();
  });
}

/// `path` made absolute and without `.` and `..`, to compare with another.
/// A symbolic link to a file not yet written is followed (`equivalent`
/// cannot compare files that do not exist), and the directory is resolved.
static std::string comparablePath(StringRef path) {
  SmallString<256> full(path);
  (void)sys::fs::make_absolute(full);
  sys::path::remove_dots(full, /*remove_dot_dot=*/true);
  // As many links as the kernel follows (MAXSYMLINKS).
  for (int links = 0; links < 40; ++links) {
    char target[4096];
    ssize_t length = ::readlink(full.c_str(), target, sizeof(target));
    if (length <= 0 || size_t(length) >= sizeof(target))
      break;
    SmallString<256> next(sys::path::parent_path(full));
    if (sys::path::is_absolute(StringRef(target, length)))
      next.clear();
    sys::path::append(next, StringRef(target, length));
    sys::path::remove_dots(next, /*remove_dot_dot=*/true);
    full = next;
  }
  SmallString<256> directory;
  if (sys::fs::real_path(sys::path::parent_path(full), directory))
    return full.str().str();
  sys::path::append(directory, sys::path::filename(full));
  return directory.str().str();
}

std::optional<std::string>
wafer::clashingFiles(ArrayRef<std::pair<StringRef, StringRef>> written,
                     ArrayRef<std::pair<StringRef, StringRef>> read) {
  for (size_t i = 0; i < written.size(); ++i) {
    sys::fs::file_status status;
    if (written[i].second.empty() ||
        (!sys::fs::status(written[i].second, status) &&
         status.type() != sys::fs::file_type::regular_file))
      continue;
    std::string path = comparablePath(written[i].second);
    auto clash = [&](std::pair<StringRef, StringRef> other) {
      return !other.second.empty() &&
             (comparablePath(other.second) == path ||
              sys::fs::equivalent(written[i].second, other.second));
    };
    for (size_t j = i + 1; j < written.size(); ++j)
      if (clash(written[j]))
        return (written[i].first + " and " + written[j].first +
                " name the same file '" + written[i].second + "'")
            .str();
    for (auto other : read)
      if (clash(other))
        return (written[i].first + " would overwrite " + other.first + " '" +
                other.second + "'")
            .str();
  }
  return std::nullopt;
}
