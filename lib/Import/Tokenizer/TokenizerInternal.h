//===- TokenizerInternal.h - Shared by the tokenizer sources ----*- C++ -*-===//
#ifndef WAFER_LIB_IMPORT_TOKENIZERINTERNAL_H
#define WAFER_LIB_IMPORT_TOKENIZERINTERNAL_H

#include "wafer/Import/Tokenizer.h"
#include "wafer/Support/Printable.h"

#include "llvm/Support/FormatVariadic.h"

namespace wafer {
namespace tokenizer {

/// An error "<where>: <message>".
template <typename... Ts>
llvm::Error fail(llvm::StringRef where, const char *format, Ts &&...values) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      where.str() + ": " +
          llvm::formatv(format, std::forward<Ts>(values)...).str());
}

/// Length of the UTF-8 sequence starting `text`: > 0 when complete and
/// valid, 0 when a valid but incomplete prefix, -n when its first n bytes
/// are a maximal invalid subpart.
int scanUtf8(llvm::StringRef text);

/// An error when `text` is not valid UTF-8, naming the first bad byte.
llvm::Error checkUtf8(llvm::StringRef text, llvm::StringRef where);

/// The type of token `id` (Normal when the vocabulary lists no types).
inline TokenType typeOf(const Vocabulary &vocabulary, size_t id) {
  return vocabulary.types.empty() ? TokenType::Normal
                                  : TokenType(vocabulary.types[id]);
}

/// The hand-written tokenizers; `vocabulary` has been checked.
std::unique_ptr<Tokenizer> createSentencePieceBpe(const Vocabulary &vocabulary,
                                                  llvm::StringRef where);
llvm::Expected<std::unique_ptr<Tokenizer>>
createByteLevelBpe(const Vocabulary &vocabulary, llvm::StringRef where);

/// libsentencepiece over a tokenizer.model.
llvm::Expected<std::unique_ptr<Tokenizer>>
loadSentencePieceModel(llvm::StringRef path);

/// Fills the protected fields every tokenizer shares.
class TokenizerBase : public Tokenizer {
protected:
  TokenizerBase(llvm::StringRef where, VocabularyKind kind, int64_t size,
                int64_t bos, int64_t eos, bool addBos) {
    source = where.str();
    this->kind = kind;
    numTokens = size;
    bosId = bos;
    eosId = eos;
    addBosByDefault = addBos;
  }
};

} // namespace tokenizer
} // namespace wafer

#endif // WAFER_LIB_IMPORT_TOKENIZERINTERNAL_H
