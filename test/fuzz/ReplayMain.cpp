//===- ReplayMain.cpp - Run a fuzz target over a corpus -------------------===//
//
//   fuzz-replay-<target> DIR|FILE...
//
// Feeds every file (directories: every file inside, not recursive) to the
// target's entry point once, as libFuzzer would, so the seed corpus and
// every reproducer of a past finding run in the ordinary test suite.
//
//===----------------------------------------------------------------------===//
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(llvm::StringRef path, int &count) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    llvm::errs() << "error: " << path << ": " << buffer.getError().message()
                 << "\n";
    return 1;
  }
  LLVMFuzzerTestOneInput(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      (*buffer)->getBufferSize());
  ++count;
  return 0;
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (!llvm::sys::fs::is_directory(arg)) {
      if (replay(arg, count))
        return 1;
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(arg, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()) &&
          replay(it->path(), count))
        return 1;
  }
  llvm::outs() << "replayed " << count << " inputs\n";
  return count ? 0 : 1;
}
