//===- Tokenizer.cpp - Vocabulary checks, streamed decoding, loading ------===//
#include "TokenizerInternal.h"
#include "wafer/Support/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace wafer {
namespace tokenizer {

int scanUtf8(StringRef text) {
  auto lead = static_cast<unsigned char>(text[0]);
  if (lead < 0x80)
    return 1;
  // The second byte's range narrows for some leads (no overlong forms, no
  // surrogates, nothing past U+10FFFF): Unicode's table 3-7.
  int length;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return -1;
  }
  for (int i = 1; i < length; ++i) {
    if (static_cast<size_t>(i) >= text.size())
      return 0;
    auto next = static_cast<unsigned char>(text[i]);
    if (next < low || next > high)
      return -i;
    low = 0x80;
    high = 0xBF;
  }
  return length;
}

Error checkUtf8(StringRef text, StringRef where) {
  for (size_t i = 0; i < text.size();) {
    int length = scanUtf8(text.substr(i));
    if (length <= 0)
      return fail(where, "the text is not valid UTF-8 (byte {0:x2} at offset {1})",
                  static_cast<unsigned char>(text[i]), i);
    i += length;
  }
  return Error::success();
}

} // namespace tokenizer

using namespace tokenizer;

static const char kReplacement[] = "\xEF\xBF\xBD"; // U+FFFD

Expected<VocabularyKind> parseVocabularyKind(StringRef ggmlModel) {
  if (ggmlModel == "llama")
    return VocabularyKind::SentencePiece;
  if (ggmlModel == "gpt2")
    return VocabularyKind::ByteLevel;
  return fail("tokenizer.ggml.model",
              "unsupported tokenizer model '{0}' (expected llama or gpt2)",
              printable(ggmlModel));
}

Tokenizer::~Tokenizer() = default;

Expected<std::string> Tokenizer::decode(ArrayRef<int64_t> ids) const {
  TokenDecoder decoder(*this);
  std::string text;
  for (int64_t id : ids) {
    Expected<std::string> more = decoder.push(id);
    if (!more)
      return more.takeError();
    text += *more;
  }
  return text + decoder.finish();
}

Expected<std::vector<int32_t>>
Tokenizer::encodePrompt(StringRef text, std::optional<bool> addBos) const {
  Expected<std::vector<int32_t>> ids = encode(text, addBos.value_or(addsBos()));
  if (ids && ids->empty())
    return fail(where(), "the prompt is empty and the tokenizer adds no BOS "
                         "token");
  return ids;
}

TokenDecoder::TokenDecoder(const Tokenizer &tokenizer, bool atStart)
    : tokenizer(tokenizer), atStart(atStart) {}

Expected<std::string> TokenDecoder::push(int64_t id) {
  if (id < 0 || id >= tokenizer.size())
    return fail(tokenizer.where(),
                "token id {0} is out of range (the vocabulary has {1} tokens)",
                id, tokenizer.size());
  TokenPiece piece = tokenizer.piece(static_cast<int32_t>(id));
  StringRef bytes = piece.bytes;
  // SentencePiece drops one dummy-prefix space, on the first token that
  // shows anything (control tokens such as BOS show nothing).
  if (atStart && !bytes.empty()) {
    if (piece.spaceIsPrefix)
      bytes.consume_front(" ");
    atStart = false;
  }
  pending += bytes;
  std::string complete;
  size_t at = 0;
  while (at < pending.size()) {
    int length = scanUtf8(StringRef(pending).substr(at));
    if (length == 0)
      break; // Wait for the rest of the sequence.
    if (length > 0) {
      complete.append(pending, at, length);
      at += length;
    } else {
      for (int i = tokenizer.replacesEachInvalidByte() ? -length : 1; i > 0; --i)
        complete += kReplacement;
      at += -length;
    }
  }
  pending.erase(0, at);
  return complete;
}

std::string TokenDecoder::finish() {
  // What is left is one valid but incomplete sequence.
  std::string rest;
  size_t count = tokenizer.replacesEachInvalidByte() ? pending.size()
                                                      : !pending.empty();
  for (size_t i = 0; i < count; ++i)
    rest += kReplacement;
  pending.clear();
  return rest;
}

Expected<std::unique_ptr<Tokenizer>>
createTokenizer(const Vocabulary &vocabulary, StringRef where) {
  size_t size = vocabulary.tokens.size();
  if (size == 0)
    return fail(where, "the tokenizer has no vocabulary");
  if (size > static_cast<size_t>(INT32_MAX))
    return fail(where, "the vocabulary has {0} tokens, more than token ids "
                       "can number", size);
  if (!vocabulary.scores.empty() && vocabulary.scores.size() != size)
    return fail(where, "{0} scores for {1} tokens", vocabulary.scores.size(),
                size);
  if (!vocabulary.types.empty() && vocabulary.types.size() != size)
    return fail(where, "{0} token types for {1} tokens",
                vocabulary.types.size(), size);
  for (size_t i = 0; i < vocabulary.types.size(); ++i)
    if (vocabulary.types[i] < 1 || vocabulary.types[i] > 6)
      return fail(where, "token {0} has type {1}, not a token type (1 to 6)",
                  i, vocabulary.types[i]);
  for (auto [name, id] : {std::pair<const char *, int64_t>{"BOS", vocabulary.bos},
                          {"EOS", vocabulary.eos},
                          {"unknown", vocabulary.unk}})
    if (id < -1 || id >= static_cast<int64_t>(size))
      return fail(where, "the {0} token id {1} is out of range (the "
                         "vocabulary has {2} tokens)", name, id, size);
  if (vocabulary.kind == VocabularyKind::SentencePiece)
    return createSentencePieceBpe(vocabulary, where);
  return createByteLevelBpe(vocabulary, where);
}

Expected<std::vector<int64_t>> parseTokenIds(StringRef text) {
  if (text.trim().empty())
    return createStringError(inconvertibleErrorCode(),
                             "--tokens: give at least one token id");
  SmallVector<StringRef> items;
  text.split(items, ',');
  std::vector<int64_t> ids;
  for (StringRef item : items) {
    int64_t id;
    if (item.trim().getAsInteger(10, id))
      return createStringError(inconvertibleErrorCode(),
                               "--tokens: '" + printable(item) + "' in '" +
                                   printable(text) + "' is not a token id");
    ids.push_back(id);
  }
  return ids;
}

Expected<std::unique_ptr<Tokenizer>> loadTokenizerFile(StringRef path) {
  if (Error special = refuseSpecialFile(path))
    return std::move(special);
  if (path.ends_with(".json")) {
    Expected<Vocabulary> vocabulary = readTokenizerJson(path);
    if (!vocabulary)
      return vocabulary.takeError();
    return createTokenizer(*vocabulary, path);
  }
  return loadSentencePieceModel(path);
}

} // namespace wafer
