//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// Tokenizers of LLaMA-family checkpoints: SentencePiece BPE (LLaMA 1/2,
// GGUF's "llama" vocabularies) and byte-level BPE (GPT-2, LLaMA 3; GGUF's
// "gpt2" vocabularies and Hugging Face tokenizer.json files). A Vocabulary
// holds what a GGUF file's tokenizer.ggml.* metadata gives; a tokenizer.model
// is served by libsentencepiece. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_IMPORT_TOKENIZER_H
#define WAFER_IMPORT_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wafer {

/// Token types, numbered as GGUF's tokenizer.ggml.token_type (and
/// SentencePiece's ModelProto) number them.
enum class TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

enum class VocabularyKind {
  /// SentencePiece BPE: U+2581 for spaces, merges by score, <0xNN> bytes.
  SentencePiece,
  /// Byte-level BPE: bytes mapped to printable characters, merges by rank.
  ByteLevel,
};

/// Maps GGUF's tokenizer.ggml.model ("llama", "gpt2") to a kind.
llvm::Expected<VocabularyKind> parseVocabularyKind(llvm::StringRef ggmlModel);

/// A tokenizer's vocabulary, as GGUF metadata arrays give it: entry i of
/// `scores` and `types` describes `tokens[i]`.
struct Vocabulary {
  VocabularyKind kind = VocabularyKind::SentencePiece;
  std::vector<std::string> tokens;
  /// Merge priority of SentencePiece pieces (higher merges first); empty
  /// means all zero.
  std::vector<float> scores;
  /// TokenType values; empty means all Normal.
  std::vector<int32_t> types;
  /// Byte-level merges "left right", highest priority first.
  std::vector<std::string> merges;
  int64_t bos = -1, eos = -1, unk = -1;
  /// Whether encoding a prompt starts with BOS (tokenizer.ggml.add_bos_token).
  bool addBos = false;
  /// SentencePiece: prepend U+2581 to non-empty text
  /// (tokenizer.ggml.add_space_prefix).
  bool addSpacePrefix = true;
  /// Byte-level: GGUF's tokenizer.ggml.pre, choosing the pre-tokenizer
  /// ("llama-bpe"/"llama3": LLaMA 3's split; "gpt2", "default" or empty:
  /// GPT-2's).
  std::string pre;
  /// Byte-level: when not empty, the split regex itself (tokenizer.json's),
  /// instead of the one `pre` names.
  std::string preRegex;
  /// Byte-level: a pre-token that is itself a token is not merged
  /// (tokenizer.json's ignore_merges; LLaMA 3).
  bool ignoreMerges = false;
};

/// What one token contributes to decoded text.
struct TokenPiece {
  /// Raw bytes; a byte token's byte may be part of a UTF-8 sequence that
  /// later tokens complete.
  std::string bytes;
  /// SentencePiece: a leading space here is the dummy prefix at the start
  /// of text, removed there.
  bool spaceIsPrefix = false;
};

class Tokenizer {
public:
  virtual ~Tokenizer();

  /// Token ids for `text` (valid UTF-8), BOS first when `addBos` and the
  /// vocabulary has one.
  virtual llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text,
                                                      bool addBos) const = 0;
  /// What token `id` (in range) decodes to; nothing for control tokens.
  virtual TokenPiece piece(int32_t id) const = 0;
  /// Whole-sequence decoding; the default runs a TokenDecoder.
  virtual llvm::Expected<std::string> decode(llvm::ArrayRef<int64_t> ids) const;

  int64_t size() const { return numTokens; }
  int64_t bos() const { return bosId; }
  int64_t eos() const { return eosId; }
  bool addsBos() const { return addBosByDefault && bosId >= 0; }
  /// The file (or other source) named in error messages.
  llvm::StringRef where() const { return source; }
  /// Whether each byte of invalid UTF-8 decodes to its own U+FFFD.
  bool replacesEachInvalidByte() const {
    return kind == VocabularyKind::SentencePiece;
  }

  /// encode for a prompt that must yield at least one token (an empty
  /// prompt without BOS is an error); BOS as the vocabulary says unless
  /// `addBos` is given.
  llvm::Expected<std::vector<int32_t>>
  encodePrompt(llvm::StringRef text,
               std::optional<bool> addBos = std::nullopt) const;

protected:
  std::string source;
  VocabularyKind kind = VocabularyKind::SentencePiece;
  int64_t numTokens = 0;
  int64_t bosId = -1, eosId = -1;
  bool addBosByDefault = false;
};

/// Streamed decoding: fed one token at a time, returns the text that became
/// complete. Incomplete UTF-8 from byte tokens is held back until the
/// sequence completes; invalid UTF-8 becomes U+FFFD, one per byte for
/// SentencePiece (as libsentencepiece), one per maximal invalid subpart for
/// byte-level BPE (as Hugging Face's and Python's errors="replace").
class TokenDecoder {
public:
  /// `atStart`: the tokens begin the text, so SentencePiece's dummy prefix
  /// space is removed (false when continuing after a prompt).
  explicit TokenDecoder(const Tokenizer &tokenizer, bool atStart = true);
  llvm::Expected<std::string> push(int64_t id);
  /// Whatever is still held back, as U+FFFD.
  std::string finish();

private:
  const Tokenizer &tokenizer;
  std::string pending;
  bool atStart;
};

/// A hand-written tokenizer over `vocabulary` (SentencePiece BPE as
/// llama.cpp's llm_tokenizer_spm, or byte-level BPE). `where` names the
/// source in errors.
llvm::Expected<std::unique_ptr<Tokenizer>>
createTokenizer(const Vocabulary &vocabulary, llvm::StringRef where);

/// The vocabulary of a SentencePiece tokenizer.model, read through
/// libsentencepiece (pieces, scores, types, BOS/EOS/UNK; BOS added).
/// libsentencepiece's API does not tell user-defined pieces from normal ones:
/// they come back Normal.
llvm::Expected<Vocabulary> readSentencePieceVocabulary(llvm::StringRef path);

/// The vocabulary of a Hugging Face tokenizer.json whose model is byte-level
/// BPE (GPT-2, LLaMA 3).
llvm::Expected<Vocabulary> readTokenizerJson(llvm::StringRef path);

/// A tokenizer from a file: tokenizer.json (byte-level BPE, hand-written)
/// or a SentencePiece model (libsentencepiece).
llvm::Expected<std::unique_ptr<Tokenizer>>
loadTokenizerFile(llvm::StringRef path);

/// The token ids of a `--tokens` list, "1,2,3": an empty list or item, or
/// an item that is not an integer, is an error quoting it. Whether the ids
/// are in the vocabulary is the caller's check.
llvm::Expected<std::vector<int64_t>> parseTokenIds(llvm::StringRef text);

} // namespace wafer

#endif // WAFER_IMPORT_TOKENIZER_H
