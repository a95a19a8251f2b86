//===- Expr.h - Coordinate expressions of role programs ---------*- C++ -*-===//
#ifndef WAFER_RUNTIME_EXPR_H
#define WAFER_RUNTIME_EXPR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace wafer::rt {

/// Values an expression may read (see Instr in Program.h for the grammar).
struct ExprEnv {
  int64_t x = 0, y = 0, lx = 0, ly = 0, W = 1, H = 1;
  /// Iteration number (from 0) of the innermost enclosing repeat; 0 outside.
  int64_t i = 0;
  /// The run's decode position: tokens in the KV caches before the step.
  int64_t t = 0;
};

/// A parsed expression, evaluated many times.
class Expr {
public:
  static llvm::Expected<Expr> parse(llvm::StringRef text);
  /// Division or remainder by zero is an error naming the expression.
  llvm::Expected<int64_t> evaluate(const ExprEnv &env) const;
  const std::string &text() const;

  /// What the value can vary with, as a mask of the bits below: the
  /// column (x, lx), the row (y, ly), the loop iteration (i) and the decode
  /// position (t). W, H and literals are fixed for a program.
  enum Dependence : unsigned {
    Column = 1,
    Row = 2,
    Iteration = 4,
    Position = 8
  };
  unsigned dependences() const { return dependences_; }

  struct Node;
  Expr(const Expr &);
  Expr &operator=(const Expr &);
  Expr(Expr &&) noexcept;
  Expr &operator=(Expr &&) noexcept;
  ~Expr();

private:
  Expr(std::string text, std::shared_ptr<const Node> root);
  std::string text_;
  std::shared_ptr<const Node> root_;
  unsigned dependences_ = 0;
};

} // namespace wafer::rt

#endif // WAFER_RUNTIME_EXPR_H
