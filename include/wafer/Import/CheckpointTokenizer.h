//===- CheckpointTokenizer.h - The tokenizer of a checkpoint ----*- C++ -*-===//
#ifndef WAFER_IMPORT_CHECKPOINTTOKENIZER_H
#define WAFER_IMPORT_CHECKPOINTTOKENIZER_H

#include "wafer/Import/Checkpoint.h"
#include "wafer/Import/Tokenizer.h"

namespace wafer {

/// The vocabulary a GGUF file's tokenizer.ggml.* metadata describes
/// (model "llama": SentencePiece BPE; "gpt2": byte-level BPE with its
/// merges). Missing or malformed keys are errors naming `where` and the key.
llvm::Expected<Vocabulary> readGgufVocabulary(const Checkpoint &gguf,
                                              llvm::StringRef where);

/// The tokenizer that comes with a checkpoint: a GGUF file's own
/// vocabulary; for a directory (or a .safetensors / *.index.json file, its
/// directory) `tokenizer.json`, else `tokenizer.model`; any other file
/// (tokenizer.json, tokenizer.model) is read by loadTokenizerFile.
llvm::Expected<std::unique_ptr<Tokenizer>>
loadCheckpointTokenizer(llvm::StringRef path);

} // namespace wafer

#endif // WAFER_IMPORT_CHECKPOINTTOKENIZER_H
