//===- TokenizeTool.h - wafer-translate --tokenize / --detokenize -*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H
#define WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H

#include "llvm/Support/CommandLine.h"

namespace wafer {

/// The category of the tokenizer's options, for --help.
const llvm::cl::OptionCategory &tokenizerOptions();

/// Whether the parsed command line asks for --tokenize or --detokenize
/// (which read no input module, unlike the translations).
bool isTokenizerCommand();

/// Runs --tokenize (prints the prompt's token ids, comma-separated) or
/// --detokenize (prints the text of --tokens, streamed) with the parsed
/// options; returns the exit code.
int runTokenizerCommand();

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H
