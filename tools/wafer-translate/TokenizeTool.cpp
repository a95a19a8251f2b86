//===- TokenizeTool.cpp - wafer-translate --tokenize / --detokenize -------===//
#include "TokenizeTool.h"

#include "wafer/Import/CheckpointTokenizer.h"
#include "wafer/Import/Tokenizer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory tokenizerCategory("Tokenizer options");
static cl::opt<bool> tokenize("tokenize",
                              cl::desc("Print the token ids of --prompt"),
                              cl::cat(tokenizerCategory));
static cl::opt<bool> detokenize("detokenize",
                                cl::desc("Print the text of --tokens"),
                                cl::cat(tokenizerCategory));
static cl::opt<std::string>
    tokenizerFile("tokenizer",
                  cl::desc("A SentencePiece tokenizer.model, a Hugging "
                           "Face tokenizer.json, a GGUF file (its "
                           "vocabulary) or a checkpoint directory"),
                  cl::value_desc("file"), cl::cat(tokenizerCategory));
static cl::opt<std::string> prompt("prompt", cl::desc("Text to tokenize"),
                                   cl::cat(tokenizerCategory));
static cl::opt<std::string>
    tokenList("tokens",
              cl::desc("Comma-separated token ids to detokenize ('-': read "
                       "them from stdin)"),
              cl::cat(tokenizerCategory));
static cl::opt<cl::boolOrDefault>
    addBos("add-bos",
           cl::desc("Start with BOS (default: as the tokenizer does)"),
           cl::cat(tokenizerCategory));

static int fail(const Twine &message) {
  errs() << "error: " << message << "\n";
  return 1;
}

const cl::OptionCategory &wafer::tokenizerOptions() {
  return tokenizerCategory;
}

bool wafer::isTokenizerCommand() { return tokenize || detokenize; }

int wafer::runTokenizerCommand() {
  if (tokenize == detokenize)
    return fail("wafer-translate: give one of --tokenize and --detokenize");
  if (tokenizerFile.empty())
    return fail("wafer-translate: --tokenizer FILE is required");
  Expected<std::unique_ptr<wafer::Tokenizer>> tokenizer =
      wafer::loadCheckpointTokenizer(tokenizerFile);
  if (!tokenizer)
    return fail(toString(tokenizer.takeError()));

  if (tokenize) {
    if (!prompt.getNumOccurrences())
      return fail("wafer-translate: --tokenize needs --prompt TEXT");
    std::optional<bool> withBos;
    if (addBos != cl::BOU_UNSET)
      withBos = addBos == cl::BOU_TRUE;
    // As for generation, which needs at least one token.
    Expected<std::vector<int32_t>> ids =
        (*tokenizer)->encodePrompt(prompt, withBos);
    if (!ids)
      return fail(toString(ids.takeError()));
    outs() << join(map_range(*ids, [](int32_t id) { return itostr(id); }),
                   ",")
           << "\n";
    return 0;
  }

  std::string listText = tokenList;
  if (tokenList == "-") {
    ErrorOr<std::unique_ptr<MemoryBuffer>> input = MemoryBuffer::getSTDIN();
    if (!input)
      return fail("--tokens: cannot read stdin: " +
                  input.getError().message());
    listText = (*input)->getBuffer().trim().str();
  }
  Expected<std::vector<int64_t>> ids = wafer::parseTokenIds(listText);
  if (!ids)
    return fail(toString(ids.takeError()));
  wafer::TokenDecoder decoder(**tokenizer);
  for (int64_t id : *ids) {
    Expected<std::string> text = decoder.push(id);
    if (!text)
      return fail(toString(text.takeError()));
    outs() << *text;
    outs().flush();
  }
  outs() << decoder.finish();
  return 0;
}
