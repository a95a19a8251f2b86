//===- SentencePieceShim.cpp - The module that links libsentencepiece -----===//
#include "SentencePieceShim.h"

#include <sentencepiece_processor.h>

#include <cstdlib>
#include <cstring>

namespace {

using sentencepiece::SentencePieceProcessor;

char *copy(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(out, text.data(), text.size() + 1);
  return out;
}

void *load(const char *path, char **error) {
  auto *processor = new SentencePieceProcessor();
  sentencepiece::util::Status status = processor->Load(path);
  if (status.ok())
    return processor;
  *error = copy(status.message());
  delete processor;
  return nullptr;
}

void destroy(void *processor) {
  delete static_cast<SentencePieceProcessor *>(processor);
}

int size(void *processor) {
  return static_cast<SentencePieceProcessor *>(processor)->GetPieceSize();
}

const char *piece(void *processor, int id, size_t *length, float *score,
                  int *type) {
  auto *p = static_cast<SentencePieceProcessor *>(processor);
  const std::string &text = p->IdToPiece(id);
  *length = text.size();
  *score = p->GetScore(id);
  *type = p->IsControl(id)   ? 3
          : p->IsUnknown(id) ? 2
          : p->IsUnused(id)  ? 5
          : p->IsByte(id)    ? 6
                             : 1;
  return text.c_str();
}

void specialIds(void *processor, int *bos, int *eos, int *unk) {
  auto *p = static_cast<SentencePieceProcessor *>(processor);
  *bos = p->bos_id();
  *eos = p->eos_id();
  *unk = p->unk_id();
}

int encode(void *processor, const char *text, size_t length, int **ids,
           size_t *count, char **error) {
  std::vector<int> out;
  sentencepiece::util::Status status =
      static_cast<SentencePieceProcessor *>(processor)->Encode(
          std::string_view(text, length), &out);
  if (!status.ok()) {
    *error = copy(status.message());
    return 0;
  }
  *count = out.size();
  *ids = static_cast<int *>(std::malloc(out.size() * sizeof(int) + 1));
  // An empty encoding has no data pointer to copy from.
  if (!out.empty())
    std::memcpy(*ids, out.data(), out.size() * sizeof(int));
  return 1;
}

int decode(void *processor, const int *ids, size_t count, char **text,
           size_t *length, char **error) {
  std::string out;
  sentencepiece::util::Status status =
      static_cast<SentencePieceProcessor *>(processor)->Decode(
          std::vector<int>(ids, ids + count), &out);
  if (!status.ok()) {
    *error = copy(status.message());
    return 0;
  }
  *length = out.size();
  *text = copy(out);
  return 1;
}

const WaferSentencePieceApi api = {load,       destroy, std::free, size, piece,
                                   specialIds, encode,  decode};

} // namespace

const WaferSentencePieceApi *wafer_sentencepiece_api() { return &api; }
