//===- CheckpointTokenizer.cpp - The tokenizer of a checkpoint ------------===//
#include "wafer/Import/CheckpointTokenizer.h"
#include "wafer/Support/RegularFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace wafer;

static Error vocabularyError(StringRef where, const Twine &what) {
  return createStringError(inconvertibleErrorCode(), where + ": " + what);
}

/// The array under `key` (nullptr when absent); an error when it is not an
/// array of `count` elements (count < 0: any length).
static Expected<const std::vector<GgufValue> *>
array(const Checkpoint &gguf, StringRef where, StringRef key, int64_t count) {
  const GgufValue *value = gguf.metadataValue(key);
  if (!value)
    return nullptr;
  const std::vector<GgufValue> *items = value->asArray();
  if (!items)
    return vocabularyError(where, key + " is not an array");
  if (count >= 0 && int64_t(items->size()) != count)
    return vocabularyError(where, formatv("{0} has {1} entries, "
                                          "tokenizer.ggml.tokens {2}",
                                          key, items->size(), count));
  return items;
}

Expected<Vocabulary> wafer::readGgufVocabulary(const Checkpoint &gguf,
                                               StringRef where) {
  Vocabulary v;
  const GgufValue *model = gguf.metadataValue("tokenizer.ggml.model");
  std::optional<StringRef> modelName = model ? model->asString() : std::nullopt;
  if (!modelName)
    return vocabularyError(where, "has no tokenizer vocabulary "
                                  "(tokenizer.ggml.model)");
  Expected<VocabularyKind> kind = parseVocabularyKind(*modelName);
  if (!kind)
    return vocabularyError(where, toString(kind.takeError()));
  v.kind = *kind;
  auto tokens = array(gguf, where, "tokenizer.ggml.tokens", -1);
  if (!tokens)
    return tokens.takeError();
  if (!*tokens || (*tokens)->empty())
    return vocabularyError(where, "has no tokenizer vocabulary "
                                  "(tokenizer.ggml.tokens)");
  int64_t n = int64_t((*tokens)->size());
  for (const GgufValue &token : **tokens) {
    std::optional<StringRef> text = token.asString();
    if (!text)
      return vocabularyError(where, "tokenizer.ggml.tokens holds a "
                                    "non-string");
    v.tokens.push_back(text->str());
  }
  auto scores = array(gguf, where, "tokenizer.ggml.scores", n);
  if (!scores)
    return scores.takeError();
  if (*scores)
    for (const GgufValue &score : **scores) {
      std::optional<double> value = score.asFloat();
      if (!value)
        return vocabularyError(where, "tokenizer.ggml.scores holds a "
                                      "non-number");
      v.scores.push_back(float(*value));
    }
  auto types = array(gguf, where, "tokenizer.ggml.token_type", n);
  if (!types)
    return types.takeError();
  if (*types)
    for (const GgufValue &type : **types) {
      std::optional<int64_t> value = type.asInt();
      if (!value || *value < 1 || *value > 6)
        return vocabularyError(where, "tokenizer.ggml.token_type holds a "
                                      "value that is not a token type (1-6)");
      v.types.push_back(int32_t(*value));
    }
  auto merges = array(gguf, where, "tokenizer.ggml.merges", -1);
  if (!merges)
    return merges.takeError();
  if (*merges)
    for (const GgufValue &merge : **merges) {
      std::optional<StringRef> text = merge.asString();
      if (!text)
        return vocabularyError(where, "tokenizer.ggml.merges holds a "
                                      "non-string");
      v.merges.push_back(text->str());
    }
  if (v.kind == VocabularyKind::ByteLevel && v.merges.empty())
    return vocabularyError(where, "a gpt2 vocabulary needs "
                                  "tokenizer.ggml.merges");
  for (auto [key, id] : {std::pair<StringRef, int64_t *>{
                             "tokenizer.ggml.bos_token_id", &v.bos},
                         {"tokenizer.ggml.eos_token_id", &v.eos},
                         {"tokenizer.ggml.unknown_token_id", &v.unk}})
    if (const GgufValue *value = gguf.metadataValue(key)) {
      std::optional<int64_t> number = value->asInt();
      if (!number || *number < 0 || *number >= n)
        return vocabularyError(where, formatv("{0} is not a token id (0 .. "
                                              "{1})",
                                              key, n - 1));
      *id = *number;
    }
  // llama.cpp starts SentencePiece prompts with BOS unless told otherwise.
  v.addBos = v.kind == VocabularyKind::SentencePiece;
  for (auto [key, flag] : {std::pair<StringRef, bool *>{
                               "tokenizer.ggml.add_bos_token", &v.addBos},
                           {"tokenizer.ggml.add_space_prefix",
                            &v.addSpacePrefix}})
    if (const GgufValue *value = gguf.metadataValue(key)) {
      const bool *b = std::get_if<bool>(&value->value);
      if (!b)
        return vocabularyError(where, key + " is not a bool");
      *flag = *b;
    }
  if (const GgufValue *pre = gguf.metadataValue("tokenizer.ggml.pre"))
    if (std::optional<StringRef> text = pre->asString())
      v.pre = text->str();
  return v;
}

Expected<std::unique_ptr<Tokenizer>>
wafer::loadCheckpointTokenizer(StringRef path) {
  if (sys::fs::is_directory(path) || path.ends_with(".safetensors") ||
      path.ends_with(".index.json")) {
    SmallString<256> dir(path);
    if (!sys::fs::is_directory(path))
      sys::path::remove_filename(dir);
    for (StringRef name : {"tokenizer.json", "tokenizer.model"}) {
      SmallString<256> file(dir);
      sys::path::append(file, name);
      if (sys::fs::exists(file))
        return loadTokenizerFile(file);
    }
    return vocabularyError(path, "has no tokenizer (looked for "
                                 "tokenizer.json and tokenizer.model)");
  }
  if (Error special = refuseSpecialFile(path))
    return std::move(special);
  auto file = MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
  if (file && (*file)->getBuffer().starts_with("GGUF")) {
    Expected<std::unique_ptr<Checkpoint>> gguf = Checkpoint::openGguf(path);
    if (!gguf)
      return gguf.takeError();
    Expected<Vocabulary> vocabulary = readGgufVocabulary(**gguf, path);
    if (!vocabulary)
      return vocabulary.takeError();
    return createTokenizer(*vocabulary, path);
  }
  return loadTokenizerFile(path);
}
