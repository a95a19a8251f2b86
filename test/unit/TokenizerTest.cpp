//===- TokenizerTest.cpp - Tokenizers against their references -----------===//
//
// The fixtures (tokenizer_fixtures.py, run at build time) train a SentencePiece
// BPE with spm_train and a byte-level BPE in Python, and record the token ids
// and decoded text that python3-sentencepiece and a reference byte-level BPE
// (Python's regex module) give for tricky texts. Ids must match exactly.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/Tokenizer.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace wafer;

namespace {

std::string fixture(llvm::StringRef name) {
  return (llvm::Twine(WAFER_TOKENIZER_FIXTURES) + "/" + name).str();
}

struct Case {
  std::optional<std::string> text;
  std::vector<int32_t> ids;
  std::string decoded;
};

const llvm::json::Object &cases() {
  static llvm::json::Value root = [] {
    auto buffer = llvm::MemoryBuffer::getFile(fixture("cases.json"));
    if (!buffer)
      return llvm::json::Value(nullptr);
    return llvm::cantFail(llvm::json::parse((*buffer)->getBuffer()));
  }();
  static llvm::json::Object empty;
  const llvm::json::Object *object = root.getAsObject();
  return object ? *object : empty;
}

std::vector<Case> casesOf(llvm::StringRef set) {
  std::vector<Case> out;
  const llvm::json::Array *array = cases().getArray(set);
  if (!array)
    return out;
  for (const llvm::json::Value &entry : *array) {
    const llvm::json::Object &object = *entry.getAsObject();
    Case c;
    if (auto text = object.getString("text"))
      c.text = text->str();
    for (const llvm::json::Value &id : *object.getArray("ids"))
      c.ids.push_back(*id.getAsInteger());
    c.decoded = object.getString("decoded")->str();
    out.push_back(std::move(c));
  }
  return out;
}

std::unique_ptr<Tokenizer> handWrittenSpm(llvm::StringRef model) {
  Vocabulary vocabulary =
      llvm::cantFail(readSentencePieceVocabulary(fixture(model)));
  // libsentencepiece does not report user-defined pieces; the fixture knows
  // which it asked spm_train for.
  for (const llvm::json::Value &name : *cases().getArray("user_defined"))
    for (size_t id = 0; id < vocabulary.tokens.size(); ++id)
      if (vocabulary.tokens[id] == *name.getAsString())
        vocabulary.types[id] = static_cast<int32_t>(TokenType::UserDefined);
  return llvm::cantFail(createTokenizer(vocabulary, model));
}

/// Decodes token by token; every piece returned must be valid UTF-8.
std::string streamed(const Tokenizer &tokenizer,
                     llvm::ArrayRef<int32_t> ids) {
  TokenDecoder decoder(tokenizer);
  std::string text;
  for (int32_t id : ids) {
    std::string piece = llvm::cantFail(decoder.push(id));
    EXPECT_TRUE(llvm::json::isUTF8(piece));
    text += piece;
  }
  return text + decoder.finish();
}

std::string printable(const std::optional<std::string> &text) {
  return text ? llvm::json::Value(*text).getAsString()->str() : "(ids only)";
}

void expectEncodes(const Tokenizer &tokenizer, llvm::StringRef set,
                   bool withBos) {
  std::vector<Case> all = casesOf(set);
  ASSERT_FALSE(all.empty()) << "no cases for " << set.str();
  for (const Case &c : all) {
    if (!c.text)
      continue;
    std::vector<int32_t> expected = c.ids;
    if (withBos)
      expected.insert(expected.begin(), tokenizer.bos());
    EXPECT_EQ(llvm::cantFail(tokenizer.encode(*c.text, withBos)), expected)
        << set.str() << ": " << printable(c.text);
  }
}

void expectDecodes(const Tokenizer &tokenizer, llvm::StringRef set) {
  for (const Case &c : casesOf(set)) {
    EXPECT_EQ(streamed(tokenizer, c.ids), c.decoded)
        << set.str() << ": " << printable(c.text);
    std::vector<int64_t> ids(c.ids.begin(), c.ids.end());
    EXPECT_EQ(llvm::cantFail(tokenizer.decode(ids)), c.decoded)
        << set.str() << ": " << printable(c.text);
    // BOS shows nothing, and the dummy prefix space goes after it too.
    if (c.text && tokenizer.bos() >= 0) {
      std::vector<int32_t> withBos = c.ids;
      withBos.insert(withBos.begin(), tokenizer.bos());
      EXPECT_EQ(streamed(tokenizer, withBos), c.decoded)
          << set.str() << " after BOS: " << printable(c.text);
    }
  }
}

TEST(SentencePieceBpe, MatchesPythonSentencePiece) {
  std::unique_ptr<Tokenizer> tokenizer = handWrittenSpm("spm.model");
  expectEncodes(*tokenizer, "spm", false);
  expectEncodes(*tokenizer, "spm", true);
  expectDecodes(*tokenizer, "spm");
}

TEST(SentencePieceBpe, UnknownWithoutByteFallback) {
  std::unique_ptr<Tokenizer> tokenizer = handWrittenSpm("spm_nobyte.model");
  expectEncodes(*tokenizer, "spm_nobyte", false);
  expectDecodes(*tokenizer, "spm_nobyte");
}

TEST(SentencePieceBpe, LibSentencePieceAgrees) {
  for (llvm::StringRef set : {"spm", "spm_nobyte"}) {
    auto tokenizer =
        llvm::cantFail(loadTokenizerFile(fixture((set + ".model").str())));
    EXPECT_TRUE(tokenizer->addsBos());
    expectEncodes(*tokenizer, set, false);
    expectEncodes(*tokenizer, set, true);
    expectDecodes(*tokenizer, set);
  }
}

TEST(SentencePieceBpe, CharactersOutsideTheVocabularyBecomeBytes) {
  std::unique_ptr<Tokenizer> tokenizer = handWrittenSpm("spm.model");
  // U+9F98 (龘) is not in the corpus: three byte tokens.
  std::vector<int32_t> ids = llvm::cantFail(tokenizer->encode("龘", false));
  ASSERT_GE(ids.size(), 3u);
  for (int32_t id : llvm::ArrayRef(ids).take_back(3))
    EXPECT_EQ(tokenizer->piece(id).bytes.size(), 1u);
}

TEST(SentencePieceBpe, StreamHoldsBackIncompleteCharacters) {
  std::unique_ptr<Tokenizer> tokenizer = handWrittenSpm("spm.model");
  std::vector<int32_t> ids =
      llvm::cantFail(tokenizer->encode("a 龘 b", /*addBos=*/true));
  TokenDecoder decoder(*tokenizer);
  std::vector<std::string> pieces;
  for (int32_t id : ids)
    pieces.push_back(llvm::cantFail(decoder.push(id)));
  EXPECT_EQ(decoder.finish(), "");
  std::string joined;
  int empty = 0;
  for (const std::string &piece : pieces) {
    joined += piece;
    empty += piece.empty();
  }
  EXPECT_EQ(joined, "a 龘 b");
  // BOS and the first two bytes of 龘 show nothing yet.
  EXPECT_GE(empty, 3);
  // Continuing after a prompt keeps the space in front of a word.
  TokenDecoder continuing(*tokenizer, /*atStart=*/false);
  std::vector<int32_t> word = llvm::cantFail(tokenizer->encode("word", false));
  std::string text;
  for (int32_t id : word)
    text += llvm::cantFail(continuing.push(id));
  EXPECT_EQ(text, " word");
}

TEST(ByteLevelBpe, Llama3TokenizerJsonMatchesReference) {
  auto tokenizer = llvm::cantFail(loadTokenizerFile(fixture("llama3.json")));
  EXPECT_TRUE(tokenizer->addsBos());
  expectEncodes(*tokenizer, "llama3", false);
  expectEncodes(*tokenizer, "llama3", true);
  expectDecodes(*tokenizer, "llama3");
}

TEST(ByteLevelBpe, Gpt2TokenizerJsonMatchesReference) {
  auto tokenizer = llvm::cantFail(loadTokenizerFile(fixture("gpt2.json")));
  EXPECT_FALSE(tokenizer->addsBos());
  expectEncodes(*tokenizer, "gpt2", false);
  expectDecodes(*tokenizer, "gpt2");
}

TEST(ByteLevelBpe, GgufStyleVocabularyMatches) {
  // What a GGUF file gives: tokens, token types, "a b" merges and the
  // pre-tokenizer's name instead of its regex.
  for (auto [file, pre, set] :
       {std::tuple{"llama3.json", "llama-bpe", "llama3"},
        std::tuple{"gpt2.json", "gpt2", "gpt2"}}) {
    Vocabulary vocabulary = llvm::cantFail(readTokenizerJson(fixture(file)));
    vocabulary.preRegex.clear();
    vocabulary.pre = pre;
    vocabulary.ignoreMerges = vocabulary.pre == "llama-bpe";
    auto tokenizer = llvm::cantFail(createTokenizer(vocabulary, "gguf"));
    expectEncodes(*tokenizer, set, false);
    expectDecodes(*tokenizer, set);
  }
}

} // namespace
