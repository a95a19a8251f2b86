//===- BoundedJson.h - JSON parsing with a nesting bound --------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level, so a file of 100,000
// '[' overflows the stack. Every JSON input wafer reads (targets, tokenizer
// files, safetensors headers and indexes, config.json) goes through
// parseBoundedJson, which counts the depth outside strings first (and
// refuses a key given twice in one object).
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_BOUNDEDJSON_H
#define WAFER_RUNTIME_BOUNDEDJSON_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace wafer {

/// Deeper nesting than any of wafer's formats needs by far.
constexpr int64_t kMaxJsonDepth = 256;

/// llvm::json::parse, after checking that arrays and objects nest at most
/// kMaxJsonDepth deep and that no object has a key twice (llvm::json keeps
/// one of them silently, so a file could say two things and be read as
/// one); an error naming the byte otherwise.
inline llvm::Expected<llvm::json::Value> parseBoundedJson(llvm::StringRef text) {
  auto fail = [&](const llvm::Twine &what, size_t at) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::formatv("{0} at byte {1}", what, at));
  };
  // The keys seen in each open object (none for an array). Keys are
  // compared as written: "\u0061" and "a" count as two, which no writer
  // of the formats wafer reads produces.
  llvm::SmallVector<std::optional<llvm::StringSet<>>, 8> open;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (open.empty() || !open.back())
        continue;
      // A string followed by ':' in an object is a key.
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (next == llvm::StringRef::npos || text[next] != ':')
        continue;
      llvm::StringRef key = text.slice(start, i);
      if (!open.back()->insert(key).second) {
        std::string shown;
        llvm::raw_string_ostream os(shown);
        llvm::printEscapedString(key, os);
        return fail("JSON object has the key \"" + shown + "\" twice", start);
      }
    } else if (c == '[' || c == '{') {
      if (open.size() >= size_t(kMaxJsonDepth))
        return fail(
            llvm::formatv("JSON nested deeper than {0} levels", kMaxJsonDepth),
            i);
      open.emplace_back();
      if (c == '{')
        open.back().emplace();
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
  }
  return llvm::json::parse(text);
}

} // namespace wafer

#endif // WAFER_RUNTIME_BOUNDEDJSON_H
