//===- BoundedJson.h - JSON parsing with a nesting bound --------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level, so a file of 100,000
// '[' overflows the stack. Every JSON input wafer reads (targets, tokenizer
// files, safetensors headers and indexes, config.json) goes through
// parseBoundedJson, which counts the depth outside strings first.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_RUNTIME_BOUNDEDJSON_H
#define WAFER_RUNTIME_BOUNDEDJSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace wafer {

/// Deeper nesting than any of wafer's formats needs by far.
constexpr int64_t kMaxJsonDepth = 256;

/// llvm::json::parse, after checking that arrays and objects nest at most
/// kMaxJsonDepth deep (an error otherwise).
inline llvm::Expected<llvm::json::Value> parseBoundedJson(llvm::StringRef text) {
  int64_t depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("JSON nested deeper than {0} levels at byte {1}",
                          kMaxJsonDepth, i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

} // namespace wafer

#endif // WAFER_RUNTIME_BOUNDEDJSON_H
