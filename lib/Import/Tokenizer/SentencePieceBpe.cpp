//===- SentencePieceBpe.cpp - SentencePiece BPE from a vocabulary ---------===//
//
// What llama.cpp's llm_tokenizer_spm and SentencePiece's bpe_model.cc do:
// spaces become U+2581, non-empty text gets one in front, the text splits
// into characters (user-defined pieces stay whole), and the adjacent pair
// whose concatenation is a piece with the highest score merges (ties: the
// leftmost) until none is. Characters no piece covers become <0xNN> byte
// tokens, or the unknown token when there are none.
//
//===----------------------------------------------------------------------===//
#include "TokenizerInternal.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"

#include <array>
#include <queue>

using namespace llvm;

namespace wafer {
namespace tokenizer {
namespace {

const char kSpaceSymbol[] = "\xE2\x96\x81"; // U+2581

class SentencePieceBpe : public TokenizerBase {
public:
  SentencePieceBpe(const Vocabulary &vocabulary, StringRef where);
  Expected<std::vector<int32_t>> encode(StringRef text,
                                        bool addBos) const override;
  TokenPiece piece(int32_t id) const override;

private:
  struct Symbol {
    int prev, next;
    size_t begin, length;
    bool frozen; // A user-defined piece: never merged.
  };
  struct Candidate {
    float score;
    int left, right;
    size_t length;
    bool operator<(const Candidate &other) const {
      // std::priority_queue pops the largest: highest score, then leftmost.
      if (score != other.score)
        return score < other.score;
      return left > other.left;
    }
  };

  size_t userDefinedPrefix(StringRef text) const;
  Error emit(StringRef symbol, const StringMap<std::pair<StringRef, StringRef>>
                                   &unmerge,
             std::vector<int32_t> &ids, bool &lastUnknown) const;

  Vocabulary vocabulary;
  /// Pieces merges may produce (normal, user-defined, unused), by text.
  StringMap<int32_t> mergeable;
  std::vector<StringRef> userDefined;
  std::array<int32_t, 256> byteIds;
  bool byteFallback = false;
};

SentencePieceBpe::SentencePieceBpe(const Vocabulary &vocabulary,
                                   StringRef where)
    : TokenizerBase(where, VocabularyKind::SentencePiece, vocabulary.tokens.size(), vocabulary.bos,
                    vocabulary.eos, vocabulary.addBos),
      vocabulary(vocabulary) {
  byteIds.fill(-1);
  const std::vector<std::string> &tokens = this->vocabulary.tokens;
  for (size_t id = 0; id < tokens.size(); ++id) {
    TokenType type = typeOf(vocabulary, id);
    if (type == TokenType::Normal || type == TokenType::UserDefined ||
        type == TokenType::Unused)
      mergeable.try_emplace(tokens[id], id);
    if (type == TokenType::UserDefined && !tokens[id].empty())
      userDefined.push_back(tokens[id]);
    unsigned byte;
    StringRef text = tokens[id];
    if (type == TokenType::Byte && text.size() == 6 &&
        text.consume_front("<0x") && text.consume_back(">") &&
        !text.getAsInteger(16, byte) && byte < 256) {
      byteIds[byte] = id;
      byteFallback = true;
    }
  }
}

size_t SentencePieceBpe::userDefinedPrefix(StringRef text) const {
  size_t longest = 0;
  for (StringRef piece : userDefined)
    if (piece.size() > longest && text.starts_with(piece))
      longest = piece.size();
  return longest;
}

Error SentencePieceBpe::emit(
    StringRef symbol,
    const StringMap<std::pair<StringRef, StringRef>> &unmerge,
    std::vector<int32_t> &ids, bool &lastUnknown) const {
  auto found = mergeable.find(symbol);
  if (found != mergeable.end()) {
    // An unused piece is not output: it splits back into what merged.
    auto parts = unmerge.find(symbol);
    if (typeOf(vocabulary, found->second) == TokenType::Unused &&
        parts != unmerge.end()) {
      if (Error error = emit(parts->second.first, unmerge, ids, lastUnknown))
        return error;
      return emit(parts->second.second, unmerge, ids, lastUnknown);
    }
    ids.push_back(found->second);
    lastUnknown = false;
    return Error::success();
  }
  if (byteFallback) {
    for (char c : symbol) {
      int32_t id = byteIds[static_cast<unsigned char>(c)];
      if (id < 0)
        id = vocabulary.unk;
      if (id < 0)
        return fail(where(), "no token for byte {0:x2} and no unknown token",
                    static_cast<unsigned char>(c));
      ids.push_back(id);
    }
    lastUnknown = false;
    return Error::success();
  }
  if (vocabulary.unk < 0)
    return fail(where(), "no token for '{0}' and no unknown token",
                printable(symbol));
  // SentencePiece merges a run of unknown characters into one token.
  if (!lastUnknown)
    ids.push_back(vocabulary.unk);
  lastUnknown = true;
  return Error::success();
}

Expected<std::vector<int32_t>>
SentencePieceBpe::encode(StringRef text, bool addBos) const {
  std::vector<int32_t> ids;
  if (addBos && bos() >= 0)
    ids.push_back(bos());
  if (text.empty())
    return ids;
  if (Error error = checkUtf8(text, where()))
    return std::move(error);

  std::string normalized = vocabulary.addSpacePrefix ? kSpaceSymbol : "";
  for (char c : text) {
    if (c == ' ')
      normalized += kSpaceSymbol;
    else
      normalized += c;
  }

  std::vector<Symbol> symbols;
  for (size_t at = 0; at < normalized.size();) {
    StringRef rest = StringRef(normalized).substr(at);
    size_t length = userDefinedPrefix(rest);
    bool frozen = length > 0;
    if (!frozen)
      length = scanUtf8(rest); // Valid: checked above.
    int index = symbols.size();
    symbols.push_back({index - 1, index + 1, at, length, frozen});
    at += length;
  }
  symbols.back().next = -1;

  auto textOf = [&](const Symbol &symbol) {
    return StringRef(normalized).substr(symbol.begin, symbol.length);
  };
  std::priority_queue<Candidate> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0 || symbols[left].frozen ||
        symbols[right].frozen)
      return;
    size_t length = symbols[left].length + symbols[right].length;
    auto found = mergeable.find(
        StringRef(normalized).substr(symbols[left].begin, length));
    if (found == mergeable.end())
      return;
    float score =
        vocabulary.scores.empty() ? 0.0f : vocabulary.scores[found->second];
    queue.push({score, left, right, length});
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    consider(i - 1, i);

  StringMap<std::pair<StringRef, StringRef>> unmerge;
  while (!queue.empty()) {
    Candidate best = queue.top();
    queue.pop();
    Symbol &left = symbols[best.left];
    Symbol &right = symbols[best.right];
    // Skip pairs that an earlier merge changed.
    if (left.length == 0 || right.length == 0 ||
        left.length + right.length != best.length)
      continue;
    StringRef leftText = textOf(left), rightText = textOf(right);
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = best.left;
    StringRef merged = textOf(left);
    if (typeOf(vocabulary, mergeable.lookup(merged)) == TokenType::Unused)
      unmerge.try_emplace(merged, leftText, rightText);
    consider(left.prev, best.left);
    consider(best.left, left.next);
  }

  bool lastUnknown = false;
  for (int i = 0; i >= 0; i = symbols[i].next)
    if (Error error = emit(textOf(symbols[i]), unmerge, ids, lastUnknown))
      return std::move(error);
  return ids;
}

TokenPiece SentencePieceBpe::piece(int32_t id) const {
  TokenPiece piece;
  switch (typeOf(vocabulary, id)) {
  case TokenType::Control:
    return piece;
  case TokenType::Byte:
    for (size_t byte = 0; byte < byteIds.size(); ++byte)
      if (byteIds[byte] == id)
        piece.bytes.push_back(static_cast<char>(byte));
    return piece;
  case TokenType::Unknown:
    piece.bytes = " \xE2\x81\x87 "; // SentencePiece's " ⁇ ".
    return piece;
  default:
    break;
  }
  StringRef text = vocabulary.tokens[id];
  piece.spaceIsPrefix =
      vocabulary.addSpacePrefix && text.starts_with(kSpaceSymbol);
  piece.bytes = text.str();
  size_t at = 0;
  while ((at = piece.bytes.find(kSpaceSymbol, at)) != std::string::npos)
    piece.bytes.replace(at, 3, " ");
  return piece;
}

} // namespace

std::unique_ptr<Tokenizer> createSentencePieceBpe(const Vocabulary &vocabulary,
                                                  StringRef where) {
  return std::make_unique<SentencePieceBpe>(vocabulary, where);
}

} // namespace tokenizer
} // namespace wafer
