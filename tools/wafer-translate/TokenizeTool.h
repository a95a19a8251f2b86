//===- TokenizeTool.h - wafer-translate --tokenize / --detokenize -*- C++ -*-===//
#ifndef WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H
#define WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H

namespace wafer {

/// Whether the command line asks for --tokenize or --detokenize (which read
/// no input module, unlike the translations).
bool isTokenizerCommand(int argc, char **argv);

/// Runs --tokenize (prints the prompt's token ids, comma-separated) or
/// --detokenize (prints the text of --tokens, streamed); returns the exit
/// code.
int runTokenizerCommand(int argc, char **argv);

} // namespace wafer

#endif // WAFER_TOOLS_WAFER_TRANSLATE_TOKENIZETOOL_H
