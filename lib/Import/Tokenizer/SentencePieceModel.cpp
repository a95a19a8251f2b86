//===- SentencePieceModel.cpp - tokenizer.model through libsentencepiece --===//
#include "SentencePieceShim.h"
#include "TokenizerInternal.h"

#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>

#include <mutex>

using namespace llvm;

namespace wafer {
namespace tokenizer {
namespace {

const char kSpaceSymbol[] = "\xE2\x96\x81"; // U+2581

/// The shim module's table, loaded once (LLVM's DynamicLibrary cannot ask
/// for RTLD_DEEPBIND).
Expected<const WaferSentencePieceApi *> sentencePieceApi(StringRef where) {
  static const WaferSentencePieceApi *api = nullptr;
  static std::string loadError;
  static std::once_flag once;
  std::call_once(once, [] {
    // AddressSanitizer refuses RTLD_DEEPBIND (google/sanitizers#611); the
    // sanitizer build (tools/sanitize.sh) loads the shim without it.
#if defined(__SANITIZE_ADDRESS__)
    int flags = RTLD_NOW | RTLD_LOCAL;
#else
    int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
    void *module = dlopen(WAFER_SENTENCEPIECE_SHIM, flags);
    void *entry =
        module ? dlsym(module, "wafer_sentencepiece_api") : nullptr;
    if (!entry) {
      loadError = dlerror();
      return;
    }
    api = reinterpret_cast<const WaferSentencePieceApi *(*)()>(entry)();
  });
  if (!api)
    return fail(where, "cannot load libsentencepiece: {0}", loadError);
  return api;
}

/// A loaded SentencePieceProcessor.
class Processor {
public:
  static Expected<std::unique_ptr<Processor>> load(StringRef path) {
    // libsentencepiece's message for a missing file is only "No such file".
    if (!sys::fs::exists(path))
      return fail(path, "no such file");
    Expected<const WaferSentencePieceApi *> api = sentencePieceApi(path);
    if (!api)
      return api.takeError();
    char *error = nullptr;
    void *handle = (*api)->load(path.str().c_str(), &error);
    if (!handle) {
      std::string message = error ? error : "unknown error";
      (*api)->release(error);
      return fail(path, "not a SentencePiece model: {0}",
                  printable(StringRef(message).trim()));
    }
    auto processor = std::unique_ptr<Processor>(new Processor(*api, handle));
    if (processor->size() <= 0)
      return fail(path, "the tokenizer has no vocabulary");
    return processor;
  }
  ~Processor() { api->destroy(handle); }

  int size() const { return api->size(handle); }
  StringRef piece(int id, float &score, TokenType &type) const {
    size_t length;
    int typeNumber;
    const char *text = api->piece(handle, id, &length, &score, &typeNumber);
    type = TokenType(typeNumber);
    return StringRef(text, length);
  }
  void specialIds(int &bos, int &eos, int &unk) const {
    api->specialIds(handle, &bos, &eos, &unk);
  }
  Expected<std::vector<int32_t>> encode(StringRef text, StringRef where) const {
    int *ids = nullptr;
    size_t count = 0;
    char *error = nullptr;
    if (!api->encode(handle, text.data(), text.size(), &ids, &count, &error))
      return releaseError(error, where, "encoding failed");
    std::vector<int32_t> out(ids, ids + count);
    api->release(ids);
    return out;
  }
  Expected<std::string> decode(const std::vector<int> &ids,
                               StringRef where) const {
    char *text = nullptr, *error = nullptr;
    size_t length = 0;
    if (!api->decode(handle, ids.data(), ids.size(), &text, &length, &error))
      return releaseError(error, where, "decoding failed");
    std::string out(text, length);
    api->release(text);
    return out;
  }

private:
  Processor(const WaferSentencePieceApi *api, void *handle)
      : api(api), handle(handle) {}
  Error releaseError(char *error, StringRef where, StringRef what) const {
    std::string message = error ? error : "unknown error";
    api->release(error);
    return fail(where, "{0}: {1}", what, printable(StringRef(message).trim()));
  }

  const WaferSentencePieceApi *api;
  void *handle;
};

class SentencePieceModel : public TokenizerBase {
public:
  SentencePieceModel(StringRef path, std::unique_ptr<Processor> p, int bos,
                     int eos)
      : TokenizerBase(path, VocabularyKind::SentencePiece, p->size(), bos, eos,
                      /*addBos=*/true),
        processor(std::move(p)) {}

  Expected<std::vector<int32_t>> encode(StringRef text,
                                        bool addBos) const override {
    if (Error error = checkUtf8(text, where()))
      return std::move(error);
    Expected<std::vector<int32_t>> pieces = processor->encode(text, where());
    if (!pieces || !addBos || bos() < 0)
      return pieces;
    pieces->insert(pieces->begin(), bos());
    return pieces;
  }

  TokenPiece piece(int32_t id) const override {
    TokenPiece piece;
    float score;
    TokenType type;
    StringRef text = processor->piece(id, score, type);
    switch (type) {
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
    return processor->decode(pieces, where());
  }

private:
  std::unique_ptr<Processor> processor;
};

} // namespace

Expected<std::unique_ptr<Tokenizer>> loadSentencePieceModel(StringRef path) {
  Expected<std::unique_ptr<Processor>> processor = Processor::load(path);
  if (!processor)
    return processor.takeError();
  int bos, eos, unk;
  (*processor)->specialIds(bos, eos, unk);
  return std::make_unique<SentencePieceModel>(path, std::move(*processor), bos,
                                              eos);
}

} // namespace tokenizer

using namespace tokenizer;

Expected<Vocabulary> readSentencePieceVocabulary(StringRef path) {
  Expected<std::unique_ptr<Processor>> processor = Processor::load(path);
  if (!processor)
    return processor.takeError();
  Vocabulary vocabulary;
  vocabulary.kind = VocabularyKind::SentencePiece;
  for (int id = 0; id < (*processor)->size(); ++id) {
    float score;
    TokenType type;
    vocabulary.tokens.push_back((*processor)->piece(id, score, type).str());
    vocabulary.scores.push_back(score);
    vocabulary.types.push_back(static_cast<int32_t>(type));
  }
  int bos, eos, unk;
  (*processor)->specialIds(bos, eos, unk);
  vocabulary.bos = bos;
  vocabulary.eos = eos;
  vocabulary.unk = unk;
  vocabulary.addBos = bos >= 0;
  return vocabulary;
}

} // namespace wafer
