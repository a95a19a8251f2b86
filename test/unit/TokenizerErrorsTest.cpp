//===- TokenizerErrorsTest.cpp - Hand-built vocabularies and bad inputs ---===//
#include "wafer/Import/Tokenizer.h"

#include "TestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace wafer;
using wafer::rt::test::errorOf;

namespace {

/// A SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then
/// `pieces` with decreasing scores.
Vocabulary spmVocabulary(std::vector<std::string> pieces) {
  Vocabulary v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {2, 3, 3};
  for (int byte = 0; byte < 256; ++byte) {
    v.tokens.push_back(llvm::formatv("<0x{0:X2}>", byte).str());
    v.types.push_back(static_cast<int32_t>(TokenType::Byte));
  }
  for (std::string &piece : pieces) {
    v.tokens.push_back(std::move(piece));
    v.types.push_back(static_cast<int32_t>(TokenType::Normal));
  }
  for (size_t i = 0; i < v.tokens.size(); ++i)
    v.scores.push_back(i < 259 ? 0.0f : -static_cast<float>(i - 259));
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.addBos = true;
  return v;
}

int32_t idOf(const Vocabulary &v, llvm::StringRef token) {
  return std::find(v.tokens.begin(), v.tokens.end(), token) - v.tokens.begin();
}

void expectOneLine(const std::string &message) {
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(SentencePieceBpe, MergesByScoreLeftmostFirst) {
  // "▁ab" could merge as (▁a)(b) or (▁)(ab); "ab" scores higher.
  Vocabulary v = spmVocabulary(
      {"ab", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a"});
  auto tokenizer = llvm::cantFail(createTokenizer(v, "test"));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("ab", false)),
            (std::vector<int32_t>{idOf(v, "\xE2\x96\x81"), idOf(v, "ab")}));
  // Equal scores: the leftmost pair merges first ("aa" "a", not "a" "aa").
  Vocabulary tie = spmVocabulary({"\xE2\x96\x81", "a", "aa"});
  tie.addSpacePrefix = false;
  auto tieTokenizer = llvm::cantFail(createTokenizer(tie, "test"));
  EXPECT_EQ(llvm::cantFail(tieTokenizer->encode("aaa", false)),
            (std::vector<int32_t>{idOf(tie, "aa"), idOf(tie, "a")}));
}

TEST(SentencePieceBpe, EmptyTextIsJustBos) {
  auto tokenizer = llvm::cantFail(createTokenizer(spmVocabulary({}), "test"));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("", true)),
            (std::vector<int32_t>{1}));
  EXPECT_TRUE(llvm::cantFail(tokenizer->encode("", false)).empty());
  EXPECT_EQ(llvm::cantFail(tokenizer->encodePrompt("")),
            (std::vector<int32_t>{1}));
}

TEST(SentencePieceBpe, UserDefinedPiecesStayWhole) {
  Vocabulary v = spmVocabulary({"\xE2\x96\x81", "x", "<sep>", "<", "s",
                                "e", "p", ">", "<s", "ep"});
  v.types[idOf(v, "<sep>")] = static_cast<int32_t>(TokenType::UserDefined);
  auto tokenizer = llvm::cantFail(createTokenizer(v, "test"));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("x<sep>x", false)),
            (std::vector<int32_t>{idOf(v, "\xE2\x96\x81"), idOf(v, "x"),
                                  idOf(v, "<sep>"), idOf(v, "x")}));
}

TEST(SentencePieceBpe, UnusedPiecesSplitBack) {
  Vocabulary v = spmVocabulary({"\xE2\x96\x81", "a", "b", "ab"});
  v.types[idOf(v, "ab")] = static_cast<int32_t>(TokenType::Unused);
  v.addSpacePrefix = false;
  auto tokenizer = llvm::cantFail(createTokenizer(v, "test"));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("ab", false)),
            (std::vector<int32_t>{idOf(v, "a"), idOf(v, "b")}));
}

TEST(TokenizerErrors, NoVocabulary) {
  std::string message = errorOf(createTokenizer(Vocabulary(), "model.gguf"));
  EXPECT_EQ(message, "model.gguf: the tokenizer has no vocabulary");
  Vocabulary byteLevel;
  byteLevel.kind = VocabularyKind::ByteLevel;
  EXPECT_EQ(errorOf(createTokenizer(byteLevel, "m")),
            "m: the tokenizer has no vocabulary");
}

TEST(TokenizerErrors, InconsistentVocabulary) {
  Vocabulary v = spmVocabulary({"a"});
  v.scores.pop_back();
  EXPECT_EQ(errorOf(createTokenizer(v, "m")), "m: 259 scores for 260 tokens");
  v = spmVocabulary({"a"});
  v.types[5] = 9;
  EXPECT_EQ(errorOf(createTokenizer(v, "m")),
            "m: token 5 has type 9, not a token type (1 to 6)");
  v = spmVocabulary({"a"});
  v.bos = 260;
  EXPECT_EQ(errorOf(createTokenizer(v, "m")),
            "m: the BOS token id 260 is out of range (the vocabulary has 260 "
            "tokens)");
  EXPECT_EQ(errorOf(parseVocabularyKind("bert")),
            "tokenizer.ggml.model: unsupported tokenizer model 'bert' "
            "(expected llama or gpt2)");
}

TEST(TokenizerErrors, DecodeOutOfRange) {
  auto tokenizer = llvm::cantFail(createTokenizer(spmVocabulary({"a"}), "m"));
  TokenDecoder decoder(*tokenizer);
  EXPECT_EQ(errorOf(decoder.push(260)),
            "m: token id 260 is out of range (the vocabulary has 260 tokens)");
  EXPECT_EQ(errorOf(tokenizer->decode({-1})),
            "m: token id -1 is out of range (the vocabulary has 260 tokens)");
}

TEST(TokenizerErrors, EmptyPromptWithoutBos) {
  Vocabulary v = spmVocabulary({"a"});
  v.addBos = false;
  auto tokenizer = llvm::cantFail(createTokenizer(v, "m"));
  EXPECT_EQ(errorOf(tokenizer->encodePrompt("")),
            "m: the prompt is empty and the tokenizer adds no BOS token");
}

TEST(TokenizerErrors, InvalidUtf8Text) {
  auto tokenizer = llvm::cantFail(createTokenizer(spmVocabulary({"a"}), "m"));
  EXPECT_EQ(errorOf(tokenizer->encode("a\xC3(", false)),
            "m: the text is not valid UTF-8 (byte 0xc3 at offset 1)");
}

TEST(TokenizerErrors, ByteLevelVocabulary) {
  Vocabulary v;
  v.kind = VocabularyKind::ByteLevel;
  v.tokens = {"a", "b", "ab"};
  v.merges = {"a b"};
  v.pre = "bloom";
  EXPECT_EQ(errorOf(createTokenizer(v, "m")),
            "m: unsupported pre-tokenizer 'bloom' (expected gpt2, default, "
            "llama-bpe or llama3)");
  v.pre = "gpt2";
  v.merges = {"ab"};
  EXPECT_EQ(errorOf(createTokenizer(v, "m")),
            "m: merge 0 'ab' is not two tokens separated by a space");
  v.merges = {"a c"};
  EXPECT_EQ(errorOf(createTokenizer(v, "m")),
            "m: merge 0 'a c' names a token the vocabulary does not have");
  v.merges = {"a b"};
  v.preRegex = "(unclosed";
  expectOneLine(errorOf(createTokenizer(v, "m")));
  v.preRegex.clear();
  auto tokenizer = llvm::cantFail(createTokenizer(v, "m"));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("ab", false)),
            (std::vector<int32_t>{2}));
  // "c" is not in this vocabulary and there is no unknown token.
  EXPECT_EQ(errorOf(tokenizer->encode("c", false)),
            "m: no token for 'c' and no unknown token");
}

/// GPT-2's byte characters: printable Latin-1 stands for itself, other bytes
/// for U+0100 onwards in byte order.
std::vector<std::string> byteCharacters() {
  std::vector<std::string> chars;
  unsigned next = 256;
  for (unsigned byte = 0; byte < 256; ++byte) {
    bool printable = (byte >= '!' && byte <= '~') ||
                     (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    unsigned codePoint = printable ? byte : next++;
    std::string utf8;
    if (codePoint < 0x80)
      utf8 += static_cast<char>(codePoint);
    else
      utf8 = {static_cast<char>(0xC0 | (codePoint >> 6)),
              static_cast<char>(0x80 | (codePoint & 0x3F))};
    chars.push_back(utf8);
  }
  return chars;
}

TEST(ByteLevelBpe, SplitsOnUnicodeWhiteSpace) {
  // \s means White_Space (with \v), as in Python's regex: with the merge
  // of " " and "\v", GPT-2's split of "x \vy" is x, " ", "\v", y (no merge
  // applies); were \v not a space it would be x, " \v" (one token), y.
  Vocabulary v;
  v.kind = VocabularyKind::ByteLevel;
  v.tokens = byteCharacters();
  std::string space = v.tokens[' '], vtab = v.tokens['\v'];
  v.tokens.push_back(space + vtab);
  v.merges = {space + " " + vtab};
  for (const char *pre : {"gpt2", "llama3"}) {
    v.pre = pre;
    auto tokenizer = llvm::cantFail(createTokenizer(v, "m"));
    EXPECT_EQ(llvm::cantFail(tokenizer->encode("x \vy", false)),
              (std::vector<int32_t>{'x', ' ', '\v', 'y'}))
        << pre;
    // At the end of the text " \\v" is one pre-token either way.
    EXPECT_EQ(llvm::cantFail(tokenizer->encode(" \v", false)),
              (std::vector<int32_t>{256}))
        << pre;
  }
}

class TokenizerFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wafer-tok", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string write(llvm::StringRef name, llvm::StringRef bytes) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec);
    os << bytes;
    return std::string(path);
  }

  llvm::SmallString<128> dir;
};

TEST_F(TokenizerFiles, MalformedTokenizerJson) {
  const char *vocab = R"("vocab": {"a": 0, "b": 1, "ab": 2})";
  const char *pre = R"("pre_tokenizer": {"type": "ByteLevel"})";
  struct {
    const char *text;
    const char *message;
  } bad[] = {
      {"{\"model\": ", "not valid JSON: "},
      {"[1, 2]", "no \"model\" object"},
      {R"({"model": {"type": "WordPiece"}})",
       "unsupported model type 'WordPiece' (expected BPE)"},
      {R"({"model": {"type": "BPE", "byte_fallback": true}})",
       "a SentencePiece-style BPE (byte_fallback); use its tokenizer.model"},
      {R"({"model": {"type": "BPE"}, "pre_tokenizer": {"type": "Metaspace"}})",
       "unsupported pre_tokenizer type 'Metaspace'"},
      {R"({"model": {"type": "BPE"}})",
       "not a byte-level BPE (no ByteLevel pre_tokenizer)"},
      {R"({"model": {"type": "BPE", "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})",
       "model has no \"vocab\" object"},
      {R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})",
       "the tokenizer has no vocabulary"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})",
       "no token has id 1 (ids must run from 0 to 2)"},
      {R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})",
       "token 'a' has no valid id"},
  };
  for (const auto &[text, message] : bad) {
    std::string path = write("tokenizer.json", text);
    std::string error = errorOf(loadTokenizerFile(path));
    expectOneLine(error);
    EXPECT_EQ(error.rfind(path + ": " + message, 0), 0u) << error;
  }
  std::string merges = write(
      "tokenizer.json", (llvm::Twine("{\"model\": {\"type\": \"BPE\", ") +
                         vocab + ", \"merges\": [[\"a\"]]}, " + pre + "}")
                            .str());
  EXPECT_EQ(errorOf(loadTokenizerFile(merges)),
            merges + ": merge 0 is neither \"a b\" nor [\"a\", \"b\"]");
  std::string good = write(
      "tokenizer.json", (llvm::Twine("{\"model\": {\"type\": \"BPE\", ") +
                         vocab + ", \"merges\": [[\"a\", \"b\"]]}, " + pre +
                         "}")
                            .str());
  auto tokenizer = llvm::cantFail(loadTokenizerFile(good));
  EXPECT_EQ(llvm::cantFail(tokenizer->encode("abba", false)),
            (std::vector<int32_t>{2, 1, 0}));
}

TEST_F(TokenizerFiles, BadSentencePieceModel) {
  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "absent.model");
  EXPECT_EQ(errorOf(loadTokenizerFile(missing)),
            std::string(missing) + ": no such file");
  std::string garbage = write("tokenizer.model", "not a \x01 model\n");
  std::string error = errorOf(loadTokenizerFile(garbage));
  expectOneLine(error);
  EXPECT_EQ(error.rfind(garbage + ": not a SentencePiece model", 0), 0u)
      << error;
  EXPECT_EQ(errorOf(readSentencePieceVocabulary(garbage)), error);
  std::string empty = write("empty.model", "");
  expectOneLine(errorOf(loadTokenizerFile(empty)));
}

} // namespace
