//===- TokenizerJson.cpp - Hugging Face tokenizer.json to a Vocabulary ----===//
//
// Reads byte-level BPE tokenizers (GPT-2, LLaMA 3): model.vocab, model.merges
// ("a b" strings or ["a", "b"] pairs), added_tokens (special ones become
// control tokens), the pre-tokenizer's split regex, and a BOS from a
// TemplateProcessing post-processor. SentencePiece-style tokenizer.json
// files (byte_fallback, Metaspace) are refused: their tokenizer.model serves.
//
//===----------------------------------------------------------------------===//
#include "TokenizerInternal.h"
#include "wafer/Runtime/BoundedJson.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace wafer {
namespace tokenizer {
namespace {

struct PreTokenizer {
  bool byteLevel = false;
  std::string regex;
};

/// Walks pre_tokenizer (possibly a Sequence) for ByteLevel and Split.
Error readPreTokenizer(const json::Object &object, PreTokenizer &pre,
                       StringRef where) {
  StringRef type = object.getString("type").value_or("");
  if (type == "Sequence") {
    const json::Array *steps = object.getArray("pretokenizers");
    if (!steps)
      return fail(where, "pre_tokenizer Sequence has no pretokenizers");
    for (const json::Value &step : *steps) {
      const json::Object *stepObject = step.getAsObject();
      if (!stepObject)
        return fail(where, "a pre_tokenizer step is not an object");
      if (Error error = readPreTokenizer(*stepObject, pre, where))
        return error;
    }
    return Error::success();
  }
  if (type == "ByteLevel") {
    pre.byteLevel = true;
    if (object.getBoolean("add_prefix_space").value_or(false))
      return fail(where, "ByteLevel add_prefix_space is not supported");
    // use_regex: the GPT-2 split, unless a Split step gives one.
    if (object.getBoolean("use_regex").value_or(true) && pre.regex.empty())
      pre.regex = "gpt2";
    return Error::success();
  }
  if (type == "Split") {
    const json::Object *pattern = object.getObject("pattern");
    std::optional<StringRef> regex =
        pattern ? pattern->getString("Regex") : std::nullopt;
    if (!regex)
      return fail(where, "pre_tokenizer Split has no pattern.Regex");
    if (object.getBoolean("invert").value_or(false) ||
        object.getString("behavior").value_or("Isolated") != "Isolated")
      return fail(where, "pre_tokenizer Split is supported only as Isolated "
                         "and not inverted");
    pre.regex = regex->str();
    return Error::success();
  }
  return fail(where, "unsupported pre_tokenizer type '{0}'", printable(type));
}

/// The token a TemplateProcessing post-processor puts first, if any.
std::optional<std::string> templateBos(const json::Object *processor) {
  if (!processor)
    return std::nullopt;
  StringRef type = processor->getString("type").value_or("");
  if (type == "Sequence") {
    if (const json::Array *steps = processor->getArray("processors"))
      for (const json::Value &step : *steps)
        if (auto bos = templateBos(step.getAsObject()))
          return bos;
    return std::nullopt;
  }
  const json::Array *single = processor->getArray("single");
  if (type != "TemplateProcessing" || !single || single->empty())
    return std::nullopt;
  const json::Object *first = (*single)[0].getAsObject();
  const json::Object *special = first ? first->getObject("SpecialToken") : nullptr;
  if (!special)
    return std::nullopt;
  if (auto id = special->getString("id"))
    return id->str();
  return std::nullopt;
}

} // namespace
} // namespace tokenizer

using namespace tokenizer;

Expected<Vocabulary> readTokenizerJson(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    return fail(path, "cannot read: {0}", file.getError().message());
  Expected<json::Value> root = parseBoundedJson((*file)->getBuffer());
  if (!root)
    return fail(path, "not valid JSON: {0}", toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  const json::Object *model = object ? object->getObject("model") : nullptr;
  if (!model)
    return fail(path, "no \"model\" object");
  StringRef modelType = model->getString("type").value_or("BPE");
  if (modelType != "BPE")
    return fail(path, "unsupported model type '{0}' (expected BPE)",
                printable(modelType));
  if (model->getBoolean("byte_fallback").value_or(false))
    return fail(path, "a SentencePiece-style BPE (byte_fallback); use its "
                      "tokenizer.model");

  PreTokenizer pre;
  if (const json::Object *preObject = object->getObject("pre_tokenizer"))
    if (Error error = readPreTokenizer(*preObject, pre, path))
      return std::move(error);
  if (!pre.byteLevel)
    return fail(path, "not a byte-level BPE (no ByteLevel pre_tokenizer)");

  Vocabulary vocabulary;
  vocabulary.kind = VocabularyKind::ByteLevel;
  if (pre.regex != "gpt2")
    vocabulary.preRegex = pre.regex;
  vocabulary.ignoreMerges = model->getBoolean("ignore_merges").value_or(false);

  // Ids of the vocabulary and of the added tokens must cover 0..N-1.
  std::vector<std::optional<std::string>> byId;
  auto place = [&](StringRef token, std::optional<int64_t> id) -> Error {
    if (!id || *id < 0 || *id >= INT32_MAX)
      return fail(path, "token '{0}' has no valid id", printable(token));
    if (static_cast<size_t>(*id) >= byId.size())
      byId.resize(*id + 1);
    byId[*id] = token.str();
    return Error::success();
  };
  const json::Object *vocab = model->getObject("vocab");
  if (!vocab)
    return fail(path, "model has no \"vocab\" object");
  for (const auto &[token, id] : *vocab)
    if (Error error = place(token, id.getAsInteger()))
      return std::move(error);

  std::vector<std::pair<int64_t, bool>> added; // id, special
  if (const json::Value *list = object->get("added_tokens")) {
    const json::Array *array = list->getAsArray();
    if (!array)
      return fail(path, "\"added_tokens\" is not an array");
    for (const json::Value &entry : *array) {
      const json::Object *token = entry.getAsObject();
      std::optional<StringRef> content =
          token ? token->getString("content") : std::nullopt;
      if (!content)
        return fail(path, "an added token has no \"content\"");
      std::optional<int64_t> id = token->getInteger("id");
      if (Error error = place(*content, id))
        return std::move(error);
      added.emplace_back(*id, token->getBoolean("special").value_or(false));
    }
  }
  if (byId.empty())
    return fail(path, "the tokenizer has no vocabulary");
  for (size_t id = 0; id < byId.size(); ++id) {
    if (!byId[id])
      return fail(path, "no token has id {0} (ids must run from 0 to {1})", id,
                  byId.size() - 1);
    vocabulary.tokens.push_back(std::move(*byId[id]));
  }
  vocabulary.types.assign(vocabulary.tokens.size(),
                          static_cast<int32_t>(TokenType::Normal));
  for (auto [id, special] : added)
    vocabulary.types[id] = static_cast<int32_t>(
        special ? TokenType::Control : TokenType::UserDefined);

  const json::Array *merges = model->getArray("merges");
  if (!merges)
    return fail(path, "model has no \"merges\" array");
  for (const json::Value &merge : *merges) {
    if (std::optional<StringRef> text = merge.getAsString()) {
      vocabulary.merges.push_back(text->str());
      continue;
    }
    const json::Array *pair = merge.getAsArray();
    std::optional<StringRef> left, right;
    if (pair && pair->size() == 2) {
      left = (*pair)[0].getAsString();
      right = (*pair)[1].getAsString();
    }
    if (!left || !right)
      return fail(path, "merge {0} is neither \"a b\" nor [\"a\", \"b\"]",
                  vocabulary.merges.size());
    vocabulary.merges.push_back((*left + " " + *right).str());
  }

  if (std::optional<StringRef> unk = model->getString("unk_token")) {
    auto it = std::find(vocabulary.tokens.begin(), vocabulary.tokens.end(), *unk);
    if (it == vocabulary.tokens.end())
      return fail(path, "unk_token '{0}' is not in the vocabulary",
                  printable(*unk));
    vocabulary.unk = it - vocabulary.tokens.begin();
  }
  if (auto bos = templateBos(object->getObject("post_processor"))) {
    auto it = std::find(vocabulary.tokens.begin(), vocabulary.tokens.end(), *bos);
    if (it == vocabulary.tokens.end())
      return fail(path, "the post_processor's '{0}' is not in the vocabulary",
                  printable(*bos));
    vocabulary.bos = it - vocabulary.tokens.begin();
    vocabulary.addBos = true;
  }
  return vocabulary;
}

} // namespace wafer
