//===- SentencePieceModel.cpp - tokenizer.model through libsentencepiece --===//
#include "TokenizerInternal.h"

#include "llvm/Support/FileSystem.h"

#include <sentencepiece_processor.h>

using namespace llvm;

namespace wafer {
namespace tokenizer {
namespace {

const char kSpaceSymbol[] = "\xE2\x96\x81"; // U+2581

Error loadProcessor(sentencepiece::SentencePieceProcessor &processor,
                    StringRef path) {
  // libsentencepiece's message for a missing file is only "No such file".
  if (!sys::fs::exists(path))
    return fail(path, "no such file");
  sentencepiece::util::Status status = processor.Load(std::string(path));
  if (!status.ok())
    return fail(path, "not a SentencePiece model: {0}",
                escaped(status.message()));
  if (processor.GetPieceSize() == 0)
    return fail(path, "the tokenizer has no vocabulary");
  return Error::success();
}

TokenType typeOf(const sentencepiece::SentencePieceProcessor &processor,
                 int id) {
  if (processor.IsControl(id))
    return TokenType::Control;
  if (processor.IsUnknown(id))
    return TokenType::Unknown;
  if (processor.IsUnused(id))
    return TokenType::Unused;
  if (processor.IsByte(id))
    return TokenType::Byte;
  return TokenType::Normal;
}

class SentencePieceModel : public TokenizerBase {
public:
  SentencePieceModel(StringRef path,
                     std::unique_ptr<sentencepiece::SentencePieceProcessor> p)
      : TokenizerBase(path, VocabularyKind::SentencePiece, p->GetPieceSize(), p->bos_id(), p->eos_id(),
                      /*addBos=*/true),
        processor(std::move(p)) {}

  Expected<std::vector<int32_t>> encode(StringRef text,
                                        bool addBos) const override {
    if (Error error = checkUtf8(text, where()))
      return std::move(error);
    std::vector<int> pieces;
    sentencepiece::util::Status status =
        processor->Encode(std::string_view(text.data(), text.size()), &pieces);
    if (!status.ok())
      return fail(where(), "encoding failed: {0}", escaped(status.message()));
    std::vector<int32_t> ids;
    if (addBos && bos() >= 0)
      ids.push_back(bos());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  TokenPiece piece(int32_t id) const override {
    TokenPiece piece;
    StringRef text = processor->IdToPiece(id);
    switch (typeOf(*processor, id)) {
    case TokenType::Control:
      return piece;
    case TokenType::Unknown:
      piece.bytes = " \xE2\x81\x87 "; // SentencePiece's " ⁇ ".
      return piece;
    case TokenType::Byte: {
      unsigned byte = 0;
      if (text.consume_front("<0x") && text.consume_back(">") &&
          !text.getAsInteger(16, byte) && byte < 256)
        piece.bytes.push_back(static_cast<char>(byte));
      return piece;
    }
    default:
      break;
    }
    piece.spaceIsPrefix = text.starts_with(kSpaceSymbol);
    piece.bytes = text.str();
    size_t at = 0;
    while ((at = piece.bytes.find(kSpaceSymbol, at)) != std::string::npos)
      piece.bytes.replace(at, 3, " ");
    return piece;
  }

  Expected<std::string> decode(ArrayRef<int64_t> ids) const override {
    std::vector<int> pieces;
    for (int64_t id : ids) {
      if (id < 0 || id >= size())
        return fail(where(),
                    "token id {0} is out of range (the vocabulary has {1} "
                    "tokens)", id, size());
      pieces.push_back(static_cast<int>(id));
    }
    std::string text;
    sentencepiece::util::Status status = processor->Decode(pieces, &text);
    if (!status.ok())
      return fail(where(), "decoding failed: {0}", escaped(status.message()));
    return text;
  }

private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor;
};

} // namespace

Expected<std::unique_ptr<Tokenizer>> loadSentencePieceModel(StringRef path) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  if (Error error = loadProcessor(*processor, path))
    return std::move(error);
  return std::make_unique<SentencePieceModel>(path, std::move(processor));
}

} // namespace tokenizer

using namespace tokenizer;

Expected<Vocabulary> readSentencePieceVocabulary(StringRef path) {
  sentencepiece::SentencePieceProcessor processor;
  if (Error error = loadProcessor(processor, path))
    return std::move(error);
  Vocabulary vocabulary;
  vocabulary.kind = VocabularyKind::SentencePiece;
  for (int id = 0; id < processor.GetPieceSize(); ++id) {
    vocabulary.tokens.push_back(processor.IdToPiece(id));
    vocabulary.scores.push_back(processor.GetScore(id));
    vocabulary.types.push_back(static_cast<int32_t>(typeOf(processor, id)));
  }
  vocabulary.bos = processor.bos_id();
  vocabulary.eos = processor.eos_id();
  vocabulary.unk = processor.unk_id();
  vocabulary.addBos = vocabulary.bos >= 0;
  return vocabulary;
}

} // namespace wafer
