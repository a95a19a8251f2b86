//===- SentencePieceShim.h - libsentencepiece behind a C table --*- C++ -*-===//
//
// Debian's libsentencepiece carries its own protobuf 3.14 with exported
// symbols; in a process that also has libprotobuf.so (the ONNX importer) one
// of the two copies breaks. So libsentencepiece is only reached through a
// small module loaded with RTLD_DEEPBIND (its protobuf references bind to its
// own copy) and this table of plain functions.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_LIB_IMPORT_TOKENIZER_SENTENCEPIECESHIM_H
#define WAFER_LIB_IMPORT_TOKENIZER_SENTENCEPIECESHIM_H

#include <cstddef>

extern "C" {

/// Strings and arrays the module returns are malloc'ed: the caller frees
/// them with `release`. Failing calls return 0 / null and set *error.
struct WaferSentencePieceApi {
  void *(*load)(const char *path, char **error);
  void (*destroy)(void *processor);
  void (*release)(void *memory);
  int (*size)(void *processor);
  /// The piece's text (valid until `destroy`), score and type (GGUF's
  /// numbering: normal 1, unknown 2, control 3, unused 5, byte 6).
  const char *(*piece)(void *processor, int id, size_t *length, float *score,
                       int *type);
  void (*specialIds)(void *processor, int *bos, int *eos, int *unk);
  int (*encode)(void *processor, const char *text, size_t length, int **ids,
                size_t *count, char **error);
  int (*decode)(void *processor, const int *ids, size_t count, char **text,
                size_t *length, char **error);
};

/// The module's one exported symbol.
const WaferSentencePieceApi *wafer_sentencepiece_api();
}

#endif // WAFER_LIB_IMPORT_TOKENIZER_SENTENCEPIECESHIM_H
