//===- ExprFuzzer.cpp - Role program expressions ---------------------------===//
#include "FuzzSupport.h"

#include "wafer/Runtime/Expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<wafer::rt::Expr> expr = wafer::rt::Expr::parse(text);
  if (!expr) {
    llvm::consumeError(expr.takeError());
    return 0;
  }
  // Extreme values as well as ordinary ones: arithmetic wraps, division by
  // zero is an error.
  for (int64_t v : {int64_t(0), int64_t(3), int64_t(-1), INT64_MAX, INT64_MIN}) {
    wafer::rt::ExprEnv env{v, 1, v, 2, 7, 5};
    env.i = v;
    env.t = v;
    llvm::Expected<int64_t> value = expr->evaluate(env);
    wafer::fuzz::ignore(value);
  }
  return 0;
}
