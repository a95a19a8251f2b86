//===- ExprTest.cpp - Coordinate expressions ------------------------------===//
#include "wafer/Runtime/Expr.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace wafer::rt;
using wafer::rt::test::errorOf;

namespace {

int64_t eval(llvm::StringRef text, ExprEnv env = {}) {
  llvm::Expected<Expr> e = Expr::parse(text);
  if (!e) {
    ADD_FAILURE() << llvm::toString(e.takeError());
    return 0;
  }
  llvm::Expected<int64_t> v = e->evaluate(env);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return 0;
  }
  return *v;
}

std::string parseError(llvm::StringRef text) {
  llvm::Expected<Expr> e = Expr::parse(text);
  if (e) {
    ADD_FAILURE() << "'" << text.str() << "' parsed";
    return "";
  }
  return llvm::toString(e.takeError());
}

TEST(Expr, CPrecedenceAndAssociativity) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("7 % 4 * 2"), 6);
  EXPECT_EQ(eval("1 + 2 < 4 == 1"), 1);
  EXPECT_EQ(eval("0 || 1 && 0"), 0);
  EXPECT_EQ(eval("1 || 0 && 0"), 1);
  EXPECT_EQ(eval("-3 * -2"), 6);
  EXPECT_EQ(eval("!0 + !5"), 1);
  EXPECT_EQ(eval("--4"), 4);
  EXPECT_EQ(eval("3 <= 3 && 4 >= 5 || 2 != 2"), 0);
}

TEST(Expr, TruncatingDivision) {
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("7 % -2"), 1);
}

TEST(Expr, Variables) {
  ExprEnv env{3, 4, 5, 6, 10, 20};
  EXPECT_EQ(eval("x + 10 * y", env), 43);
  EXPECT_EQ(eval("lx * 100 + ly", env), 506);
  EXPECT_EQ(eval("W * H", env), 200);
  EXPECT_EQ(eval("(lx + 1) % W == 6", env), 1);
}

TEST(Expr, DependencesNameTheVariablesRead) {
  auto deps = [](llvm::StringRef text) {
    return llvm::cantFail(Expr::parse(text)).dependences();
  };
  EXPECT_EQ(deps("W * H + 3"), 0u);
  EXPECT_EQ(deps("ly % 10 == 0 && ly + 10 < H"), unsigned(Expr::Row));
  EXPECT_EQ(deps("x + lx"), unsigned(Expr::Column));
  EXPECT_EQ(deps("x + y"), unsigned(Expr::Column | Expr::Row));
  EXPECT_EQ(deps("i == 0 || t / 96"),
            unsigned(Expr::Iteration | Expr::Position));
  EXPECT_EQ(deps("-(!y)"), unsigned(Expr::Row));
}

TEST(Expr, ShortCircuitAvoidsDivisionByZero) {
  EXPECT_EQ(eval("x != 0 && 10 / x > 1"), 0);
  EXPECT_EQ(eval("x == 0 || 10 / x"), 1);
}

TEST(Expr, DivisionByZeroIsAnError) {
  Expr e = llvm::cantFail(Expr::parse("W / x"));
  EXPECT_EQ(errorOf(e.evaluate({})), "expression 'W / x': division by zero");
  Expr r = llvm::cantFail(Expr::parse("1 % x"));
  EXPECT_NE(errorOf(r.evaluate({})), "");
}

TEST(Expr, OverflowIsAnError) {
  // A loop count that wrapped to 0 would skip the loop without a word.
  for (const char *text :
       {"4611686018427387904 * 4", "9223372036854775807 + 1",
        "0 - 9223372036854775807 - 2", "-(0 - 9223372036854775807 - 1)",
        "(0 - 9223372036854775807 - 1) / (0 - 1)"})
    EXPECT_EQ(errorOf(llvm::cantFail(Expr::parse(text)).evaluate({})),
              std::string("expression '") + text +
                  "': the value does not fit in 64 bits")
        << text;
  EXPECT_EQ(eval("(0 - 9223372036854775807 - 1) % (0 - 1)"), 0);
  EXPECT_EQ(eval("9223372036854775807 - 1 + 1"), 9223372036854775807);
}

TEST(Expr, ParseErrorsNameTheColumn) {
  EXPECT_EQ(parseError("1 +"),
            "expression '1 +': expected an operand at column 4");
  EXPECT_EQ(parseError("(x + 1"),
            "expression '(x + 1': expected ')' at column 7");
  EXPECT_EQ(parseError("x + z"),
            "expression 'x + z': unknown variable 'z' (known: x y lx ly W H i t) "
            "at column 5");
  EXPECT_EQ(
      parseError("x 1"),
      "expression 'x 1': unexpected '1' after the expression at column 3");
  EXPECT_EQ(parseError("x # 2"),
            "expression 'x # 2': unexpected '#' after the expression at "
            "column 3");
  EXPECT_EQ(parseError(""), "expression '': expected an operand at column 1");
  EXPECT_EQ(parseError("x & y"),
            "expression 'x & y': unexpected '&' after the expression at "
            "column 3");
  EXPECT_EQ(parseError("99999999999999999999"),
            "expression '99999999999999999999': integer literal out of range "
            "at column 1");
  // Control and non-ASCII bytes are escaped: the message stays one line.
  EXPECT_EQ(parseError("x\n+ \xc3\xa9"),
            "expression 'x\\0A+ \\C3\\A9': unexpected '\\C3' at column 5");
  EXPECT_EQ(parseError("\a"),
            "expression '\\07': unexpected '\\07' at column 1");
}

TEST(Expr, HostileInputIsBounded) {
  std::string deep(100, '(');
  EXPECT_EQ(parseError(deep + "1"), "expression '" + deep +
                                        "1': nested deeper than 64 levels at "
                                        "column 65");
  EXPECT_NE(parseError(std::string(3000, '-') + "1"), "");
  std::string chain = "1";
  for (int i = 0; i < 3000; ++i)
    chain += "+1";
  EXPECT_EQ(parseError(chain),
            "expression '1+1+1+1+1+1+1+1+1+1+...': longer than 4096 "
            "characters");
  EXPECT_EQ(eval(chain.substr(0, 4001)), 2001);
}

TEST(Expr, CopiesShareTheParsedTree) {
  Expr a = llvm::cantFail(Expr::parse("x * 2"));
  Expr b = a;
  EXPECT_EQ(b.text(), "x * 2");
  EXPECT_EQ(llvm::cantFail(b.evaluate({4, 0, 0, 0, 1, 1})), 8);
}

} // namespace
