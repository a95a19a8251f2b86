//===- Expr.cpp - Coordinate expressions of role programs -----------------===//
//
// A recursive-descent parser with C precedence (lowest first):
//   ||   &&   == !=   < <= > >=   + -   * / %   unary - !
// A result outside int64_t is an error, as division by zero is: a bundle's
// expressions come from a file, and a wrapped loop count or offset would be
// a silently wrong run.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/Expr.h"
#include "wafer/Support/Printable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace llvm;

namespace wafer::rt {

enum class Var : uint8_t { X, Y, LX, LY, W, H, I, T };

enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or
};

struct Expr::Node {
  enum class Kind : uint8_t { Literal, Variable, Neg, Not, Binary };
  Kind kind = Kind::Literal;
  Var var = Var::X;
  BinOp op = BinOp::Add;
  int64_t value = 0;
  std::unique_ptr<const Node> lhs, rhs;
};

namespace {

using Node = Expr::Node;
using NodePtr = std::unique_ptr<const Node>;

NodePtr makeBinary(BinOp op, NodePtr lhs, NodePtr rhs) {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::Binary;
  n->op = op;
  n->lhs = std::move(lhs);
  n->rhs = std::move(rhs);
  return n;
}

NodePtr makeUnary(Node::Kind kind, NodePtr operand) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->lhs = std::move(operand);
  return n;
}

class Parser {
public:
  explicit Parser(StringRef text) : text(text) {}

  Expected<NodePtr> parseAll() {
    // Bounds on length and nesting keep the recursive parser, evaluator and
    // destructor well within the stack for any input.
    if (text.size() > kMaxLength)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("expression '{0}...': longer than {1} characters",
                  printable(text.take_front(20)), kMaxLength));
    NodePtr root = parseBinary(0);
    if (root) {
      skipSpace();
      if (pos < text.size())
        fail(formatv("unexpected '{0}' after the expression",
                     printable(text.substr(pos, 1))));
    }
    if (!error.empty())
      return createStringError(inconvertibleErrorCode(),
                               formatv("expression '{0}': {1} at column {2}",
                                       printable(text), error, errorPos + 1));
    return std::move(root);
  }

private:
  struct OpInfo {
    StringRef spelling;
    BinOp op;
    int level;
  };
  // Longer spellings first so that "<=" is not read as "<".
  static constexpr OpInfo kOps[] = {
      {"||", BinOp::Or, 0}, {"&&", BinOp::And, 1}, {"==", BinOp::Eq, 2},
      {"!=", BinOp::Ne, 2}, {"<=", BinOp::Le, 3},  {">=", BinOp::Ge, 3},
      {"<", BinOp::Lt, 3},  {">", BinOp::Gt, 3},   {"+", BinOp::Add, 4},
      {"-", BinOp::Sub, 4}, {"*", BinOp::Mul, 5},  {"/", BinOp::Div, 5},
      {"%", BinOp::Rem, 5}};
  static constexpr int kUnaryLevel = 6;

  void skipSpace() {
    while (pos < text.size() && isSpace(text[pos]))
      ++pos;
  }

  void fail(const Twine &what) {
    if (error.empty()) {
      error = what.str();
      errorPos = pos;
    }
  }

  // Precedence climbing: every binary operator is left-associative.
  NodePtr parseBinary(int level) {
    if (level == kUnaryLevel)
      return parseUnary();
    NodePtr lhs = parseBinary(level + 1);
    while (lhs) {
      skipSpace();
      const OpInfo *found = nullptr;
      for (const OpInfo &info : kOps)
        if (text.substr(pos).starts_with(info.spelling)) {
          found = &info;
          break;
        }
      if (!found || found->level != level)
        return lhs;
      pos += found->spelling.size();
      NodePtr rhs = parseBinary(level + 1);
      if (!rhs)
        return nullptr;
      lhs = makeBinary(found->op, std::move(lhs), std::move(rhs));
    }
    return nullptr;
  }

  NodePtr parseUnary() {
    skipSpace();
    if (pos < text.size() && (text[pos] == '-' || text[pos] == '!')) {
      Node::Kind kind = text[pos] == '-' ? Node::Kind::Neg : Node::Kind::Not;
      if (!enter())
        return nullptr;
      ++pos;
      NodePtr operand = parseUnary();
      --depth;
      return operand ? makeUnary(kind, std::move(operand)) : nullptr;
    }
    return parsePrimary();
  }

  NodePtr parsePrimary() {
    skipSpace();
    if (pos >= text.size()) {
      fail("expected an operand");
      return nullptr;
    }
    char c = text[pos];
    if (c == '(') {
      if (!enter())
        return nullptr;
      ++pos;
      NodePtr inner = parseBinary(0);
      --depth;
      if (!inner)
        return nullptr;
      skipSpace();
      if (pos >= text.size() || text[pos] != ')') {
        fail("expected ')'");
        return nullptr;
      }
      ++pos;
      return inner;
    }
    if (isDigit(c)) {
      size_t start = pos;
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
      auto n = std::make_unique<Node>();
      if (text.slice(start, pos).getAsInteger(10, n->value)) {
        pos = start;
        fail("integer literal out of range");
        return nullptr;
      }
      return n;
    }
    if (isAlpha(c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() && (isAlnum(text[pos]) || text[pos] == '_'))
        ++pos;
      StringRef name = text.slice(start, pos);
      std::optional<Var> var = StringSwitch<std::optional<Var>>(name)
                                   .Case("x", Var::X)
                                   .Case("y", Var::Y)
                                   .Case("lx", Var::LX)
                                   .Case("ly", Var::LY)
                                   .Case("W", Var::W)
                                   .Case("H", Var::H)
                                   .Case("i", Var::I)
                                   .Case("t", Var::T)
                                   .Default(std::nullopt);
      if (!var) {
        pos = start;
        fail(formatv("unknown variable '{0}' (known: x y lx ly W H i t)", name));
        return nullptr;
      }
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Variable;
      n->var = *var;
      return n;
    }
    fail(formatv("unexpected '{0}'", printable(StringRef(&c, 1))));
    return nullptr;
  }

  /// Counts one more level of parentheses or prefix operators.
  bool enter() {
    if (++depth <= kMaxDepth)
      return true;
    fail(formatv("nested deeper than {0} levels", kMaxDepth));
    return false;
  }

  static constexpr size_t kMaxLength = 4096;
  static constexpr int kMaxDepth = 64;
  StringRef text;
  size_t pos = 0;
  int depth = 0;
  std::string error;
  size_t errorPos = 0;
};

/// Why an evaluation has no value.
enum class Fault { None, DivisionByZero, Overflow };

/// Evaluates without allocating; on a fault, returns false and says which.
bool eval(const Node &n, const ExprEnv &env, int64_t &out, Fault &fault) {
  switch (n.kind) {
  case Node::Kind::Literal:
    out = n.value;
    return true;
  case Node::Kind::Variable:
    switch (n.var) {
    case Var::X:
      out = env.x;
      break;
    case Var::Y:
      out = env.y;
      break;
    case Var::LX:
      out = env.lx;
      break;
    case Var::LY:
      out = env.ly;
      break;
    case Var::W:
      out = env.W;
      break;
    case Var::H:
      out = env.H;
      break;
    case Var::I:
      out = env.i;
      break;
    case Var::T:
      out = env.t;
      break;
    }
    return true;
  case Node::Kind::Neg:
    if (!eval(*n.lhs, env, out, fault))
      return false;
    if (__builtin_sub_overflow(int64_t(0), out, &out)) {
      fault = Fault::Overflow;
      return false;
    }
    return true;
  case Node::Kind::Not:
    if (!eval(*n.lhs, env, out, fault))
      return false;
    out = out == 0;
    return true;
  case Node::Kind::Binary:
    break;
  }
  int64_t a = 0, b = 0;
  if (!eval(*n.lhs, env, a, fault))
    return false;
  // && and || short-circuit as in C, so `d != 0 && n / d > 1` is safe.
  if (n.op == BinOp::And && a == 0) {
    out = 0;
    return true;
  }
  if (n.op == BinOp::Or && a != 0) {
    out = 1;
    return true;
  }
  if (!eval(*n.rhs, env, b, fault))
    return false;
  bool overflow = false;
  switch (n.op) {
  case BinOp::Add:
    overflow = __builtin_add_overflow(a, b, &out);
    break;
  case BinOp::Sub:
    overflow = __builtin_sub_overflow(a, b, &out);
    break;
  case BinOp::Mul:
    overflow = __builtin_mul_overflow(a, b, &out);
    break;
  case BinOp::Div:
  case BinOp::Rem:
    if (b == 0) {
      fault = Fault::DivisionByZero;
      return false;
    }
    // INT64_MIN / -1 is the one quotient outside int64_t (and C++ leaves
    // INT64_MIN % -1 undefined too).
    if (b == -1 && n.op == BinOp::Div)
      overflow = __builtin_sub_overflow(int64_t(0), a, &out);
    else if (b == -1)
      out = 0;
    else
      out = n.op == BinOp::Div ? a / b : a % b;
    break;
  case BinOp::Eq:
    out = a == b;
    break;
  case BinOp::Ne:
    out = a != b;
    break;
  case BinOp::Lt:
    out = a < b;
    break;
  case BinOp::Le:
    out = a <= b;
    break;
  case BinOp::Gt:
    out = a > b;
    break;
  case BinOp::Ge:
    out = a >= b;
    break;
  case BinOp::And:
  case BinOp::Or:
    out = b != 0;
    break;
  }
  if (overflow)
    fault = Fault::Overflow;
  return !overflow;
}

unsigned dependencesOf(const Node &n) {
  unsigned deps = 0;
  if (n.kind == Node::Kind::Variable) {
    switch (n.var) {
    case Var::X:
    case Var::LX:
      return Expr::Column;
    case Var::Y:
    case Var::LY:
      return Expr::Row;
    case Var::I:
      return Expr::Iteration;
    case Var::T:
      return Expr::Position;
    case Var::W:
    case Var::H:
      return 0;
    }
  }
  if (n.lhs)
    deps |= dependencesOf(*n.lhs);
  if (n.rhs)
    deps |= dependencesOf(*n.rhs);
  return deps;
}

} // namespace

Expected<Expr> Expr::parse(StringRef text) {
  Expected<NodePtr> root = Parser(text).parseAll();
  if (!root)
    return root.takeError();
  return Expr(text.str(), std::shared_ptr<const Node>(std::move(*root)));
}

Expected<int64_t> Expr::evaluate(const ExprEnv &env) const {
  int64_t value = 0;
  Fault fault = Fault::None;
  if (!eval(*root_, env, value, fault))
    return createStringError(inconvertibleErrorCode(),
                             "expression '" + printable(text_) + "': " +
                                 (fault == Fault::Overflow
                                      ? "the value does not fit in 64 bits"
                                      : "division by zero"));
  return value;
}

const std::string &Expr::text() const { return text_; }

Expr::Expr(std::string text, std::shared_ptr<const Node> root)
    : text_(std::move(text)), root_(std::move(root)),
      dependences_(dependencesOf(*root_)) {}
Expr::Expr(const Expr &) = default;
Expr &Expr::operator=(const Expr &) = default;
Expr::Expr(Expr &&) noexcept = default;
Expr &Expr::operator=(Expr &&) noexcept = default;
Expr::~Expr() = default;

} // namespace wafer::rt
