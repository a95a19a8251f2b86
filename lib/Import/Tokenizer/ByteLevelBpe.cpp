//===- ByteLevelBpe.cpp - GPT-2 style byte-level BPE ----------------------===//
//
// Added tokens (control and user-defined) are cut out of the text first; the
// rest splits into pre-tokens with the GPT-2 or LLaMA 3 regex (ICU's engine,
// which knows Unicode's letter and number categories); each pre-token's bytes
// map to printable characters (GPT-2's bytes_to_unicode) and merge pairwise
// by rank, lowest first, leftmost on ties.
//
//===----------------------------------------------------------------------===//
#include "TokenizerInternal.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <array>
#include <bitset>
#include <queue>

using namespace llvm;

namespace wafer {
namespace tokenizer {
namespace {

const char kGpt2Split[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char kLlama3Split[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

class ByteLevelBpe : public TokenizerBase {
public:
  ByteLevelBpe(const Vocabulary &vocabulary, StringRef where,
               std::unique_ptr<icu::RegexPattern> split);
  Error indexMerges();
  Expected<std::vector<int32_t>> encode(StringRef text,
                                        bool addBos) const override;
  TokenPiece piece(int32_t id) const override;

private:
  Error encodeWord(StringRef word, std::vector<int32_t> &ids) const;
  Error encodeChunk(StringRef chunk, std::vector<int32_t> &ids) const;

  Vocabulary vocabulary;
  StringMap<int32_t> ids;
  StringMap<int32_t> mergeRanks; // "left right" -> rank
  /// Tokens matched literally in the text, and their first bytes.
  std::vector<std::pair<StringRef, int32_t>> added;
  std::bitset<256> addedFirstBytes;
  std::unique_ptr<icu::RegexPattern> split;
  std::array<std::string, 256> byteChars;
  std::array<int16_t, 512> charBytes; // code point -> byte, or -1
};

ByteLevelBpe::ByteLevelBpe(const Vocabulary &vocabulary, StringRef where,
                           std::unique_ptr<icu::RegexPattern> split)
    : TokenizerBase(where, VocabularyKind::ByteLevel, vocabulary.tokens.size(), vocabulary.bos,
                    vocabulary.eos, vocabulary.addBos),
      vocabulary(vocabulary), split(std::move(split)) {
  // GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
  // the others for 256, 257, ... in byte order.
  charBytes.fill(-1);
  unsigned next = 256;
  for (unsigned byte = 0; byte < 256; ++byte) {
    bool printable = (byte >= '!' && byte <= '~') ||
                     (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    unsigned codePoint = printable ? byte : next++;
    char buffer[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char *end = buffer;
    ConvertCodePointToUTF8(codePoint, end);
    byteChars[byte].assign(buffer, end);
    charBytes[codePoint] = byte;
  }
  const std::vector<std::string> &tokens = this->vocabulary.tokens;
  for (size_t id = 0; id < tokens.size(); ++id) {
    ids.try_emplace(tokens[id], id);
    TokenType type = typeOf(vocabulary, id);
    if ((type == TokenType::Control || type == TokenType::UserDefined) &&
        !tokens[id].empty()) {
      added.emplace_back(tokens[id], id);
      addedFirstBytes.set(static_cast<unsigned char>(tokens[id][0]));
    }
  }
}

Error ByteLevelBpe::indexMerges() {
  for (size_t rank = 0; rank < vocabulary.merges.size(); ++rank) {
    StringRef merge = vocabulary.merges[rank];
    auto [left, right] = merge.split(' ');
    if (left.empty() || right.empty() || right.contains(' '))
      return fail(where(),
                  "merge {0} '{1}' is not two tokens separated by a "
                  "space",
                  rank, printable(merge));
    if (!ids.contains(left) || !ids.contains(right))
      return fail(where(),
                  "merge {0} '{1}' names a token the vocabulary "
                  "does not have",
                  rank, printable(merge));
    mergeRanks.try_emplace(merge, rank);
  }
  return Error::success();
}

Error ByteLevelBpe::encodeWord(StringRef word, std::vector<int32_t> &out) const {
  std::string mapped;
  for (char c : word)
    mapped += byteChars[static_cast<unsigned char>(c)];
  if (vocabulary.ignoreMerges) {
    auto whole = ids.find(mapped);
    if (whole != ids.end()) {
      out.push_back(whole->second);
      return Error::success();
    }
  }
  struct Symbol {
    int prev, next;
    size_t begin, length;
  };
  std::vector<Symbol> symbols;
  for (size_t at = 0; at < mapped.size();) {
    size_t length = scanUtf8(StringRef(mapped).substr(at));
    int index = symbols.size();
    symbols.push_back({index - 1, index + 1, at, length});
    at += length;
  }
  symbols.back().next = -1;
  auto textOf = [&](const Symbol &symbol) {
    return StringRef(mapped).substr(symbol.begin, symbol.length);
  };

  // Lowest rank first, then leftmost.
  using Candidate = std::tuple<int32_t, int, size_t>; // rank, left, length
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>>
      queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0)
      return;
    std::string key =
        (textOf(symbols[left]) + " " + textOf(symbols[right])).str();
    auto found = mergeRanks.find(key);
    if (found != mergeRanks.end())
      queue.emplace(found->second, left,
                    symbols[left].length + symbols[right].length);
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    consider(i - 1, i);
  while (!queue.empty()) {
    auto [rank, leftIndex, length] = queue.top();
    queue.pop();
    Symbol &left = symbols[leftIndex];
    if (left.length == 0 || left.next < 0 ||
        left.length + symbols[left.next].length != length)
      continue; // An earlier merge changed this pair.
    Symbol &right = symbols[left.next];
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = leftIndex;
    consider(left.prev, leftIndex);
    consider(leftIndex, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    StringRef text = textOf(symbols[i]);
    auto found = ids.find(text);
    if (found != ids.end())
      out.push_back(found->second);
    else if (vocabulary.unk >= 0)
      out.push_back(vocabulary.unk);
    else
      return fail(where(), "no token for '{0}' and no unknown token",
                  printable(text));
  }
  return Error::success();
}

Error ByteLevelBpe::encodeChunk(StringRef chunk,
                                std::vector<int32_t> &out) const {
  if (chunk.empty())
    return Error::success();
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(chunk.data(), static_cast<int32_t>(chunk.size())));
  std::unique_ptr<icu::RegexMatcher> matcher(split->matcher(text, status));
  auto emit = [&](int32_t begin, int32_t end) -> Error {
    if (begin >= end)
      return Error::success();
    std::string word;
    text.tempSubStringBetween(begin, end).toUTF8String(word);
    return encodeWord(word, out);
  };
  int32_t last = 0;
  // Text between matches is a pre-token too (the usual patterns leave none).
  while (U_SUCCESS(status) && matcher->find(status)) {
    int32_t begin = matcher->start(status), end = matcher->end(status);
    if (Error error = emit(last, begin))
      return error;
    if (Error error = emit(begin, end))
      return error;
    last = end;
  }
  if (U_FAILURE(status))
    return fail(where(), "pre-tokenizer regex failed: {0}",
                u_errorName(status));
  return emit(last, text.length());
}

Expected<std::vector<int32_t>> ByteLevelBpe::encode(StringRef text,
                                                    bool addBos) const {
  std::vector<int32_t> out;
  if (addBos && bos() >= 0)
    out.push_back(bos());
  if (Error error = checkUtf8(text, where()))
    return std::move(error);
  size_t chunkBegin = 0;
  for (size_t at = 0; at < text.size();) {
    size_t longest = 0;
    int32_t id = -1;
    if (addedFirstBytes.test(static_cast<unsigned char>(text[at])))
      for (auto [token, tokenId] : added)
        if (token.size() > longest && text.substr(at).starts_with(token)) {
          longest = token.size();
          id = tokenId;
        }
    if (longest == 0) {
      ++at;
      continue;
    }
    if (Error error = encodeChunk(text.slice(chunkBegin, at), out))
      return std::move(error);
    out.push_back(id);
    at += longest;
    chunkBegin = at;
  }
  if (Error error = encodeChunk(text.substr(chunkBegin), out))
    return std::move(error);
  return out;
}

TokenPiece ByteLevelBpe::piece(int32_t id) const {
  TokenPiece piece;
  if (typeOf(vocabulary, id) == TokenType::Control)
    return piece;
  // Characters of the byte map become their bytes; a token with any other
  // character (an added token) is its own text, as in Hugging Face's decoder.
  StringRef text = vocabulary.tokens[id];
  for (size_t at = 0; at < text.size();) {
    int length = scanUtf8(text.substr(at));
    UTF32 codePoint = 0;
    const UTF8 *source = reinterpret_cast<const UTF8 *>(text.data() + at);
    if (length <= 0 ||
        convertUTF8Sequence(&source, source + length, &codePoint,
                            strictConversion) != conversionOK ||
        codePoint >= charBytes.size() || charBytes[codePoint] < 0) {
      piece.bytes = text.str();
      return piece;
    }
    piece.bytes += static_cast<char>(charBytes[codePoint]);
    at += length;
  }
  return piece;
}

} // namespace

Expected<std::unique_ptr<Tokenizer>>
createByteLevelBpe(const Vocabulary &vocabulary, StringRef where) {
  std::string pattern = vocabulary.preRegex;
  if (pattern.empty()) {
    StringRef pre = vocabulary.pre;
    if (pre == "llama-bpe" || pre == "llama3")
      pattern = kLlama3Split;
    else if (pre.empty() || pre == "gpt2" || pre == "default")
      pattern = kGpt2Split;
    else
      return fail(where,
                  "unsupported pre-tokenizer '{0}' (expected gpt2, "
                  "default, llama-bpe or llama3)",
                  printable(pre));
  }
  // ICU's \s is Unicode's White_Space, as in Oniguruma and Python's regex,
  // for which these patterns were written.
  UErrorCode status = U_ZERO_ERROR;
  UParseError position;
  std::unique_ptr<icu::RegexPattern> split(icu::RegexPattern::compile(
      icu::UnicodeString::fromUTF8(pattern), 0, position,
      status));
  if (U_FAILURE(status))
    return fail(where, "the pre-tokenizer regex '{0}' does not compile: {1}",
                printable(pattern), u_errorName(status));
  auto tokenizer =
      std::make_unique<ByteLevelBpe>(vocabulary, where, std::move(split));
  if (Error error = tokenizer->indexMerges())
    return std::move(error);
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

} // namespace tokenizer
} // namespace wafer
