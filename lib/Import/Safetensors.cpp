//===- Safetensors.cpp - safetensors files and sharded checkpoints --------===//
//
// A safetensors file is a u64 little-endian header length N, N bytes of JSON
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, optional
// "__metadata__"}), then the data that the offsets are relative to. Sharded
// Hugging Face checkpoints add model.safetensors.index.json, whose
// "weight_map" names the shard of every tensor.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/Checkpoint.h"
#include "wafer/Runtime/BoundedJson.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace wafer;

namespace wafer {

class SafetensorsParser {
public:
  explicit SafetensorsParser(Checkpoint &ckpt) : ckpt(ckpt) {}

  /// Maps `path` as file number ckpt.files.size() and adds its tensors.
  llvm::Error addFile(llvm::StringRef path);
  /// Reads an index and every shard it names.
  llvm::Error addIndex(llvm::StringRef path);
  /// Keeps config.json's text when `dir` has one.
  llvm::Error readConfig(llvm::StringRef dir);

private:
  llvm::Error addTensor(llvm::StringRef path, unsigned file,
                        llvm::StringRef name, const llvm::json::Value &entry,
                        uint64_t dataStart, uint64_t dataSize);
  Checkpoint &ckpt;
};

} // namespace wafer

static std::string shapeText(const std::vector<int64_t> &shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

llvm::Error SafetensorsParser::addTensor(llvm::StringRef path, unsigned file,
                                         llvm::StringRef name,
                                         const llvm::json::Value &entry,
                                         uint64_t dataStart,
                                         uint64_t dataSize) {
  std::string tensor = "tensor '" + printable(name) + "'";
  const llvm::json::Object *object = entry.getAsObject();
  const llvm::json::Array *shape = object ? object->getArray("shape") : nullptr;
  const llvm::json::Array *offsets =
      object ? object->getArray("data_offsets") : nullptr;
  std::optional<llvm::StringRef> dtype =
      object ? object->getString("dtype") : std::nullopt;
  if (!shape || !offsets || !dtype || offsets->size() != 2)
    return checkpointError(path, tensor + " needs \"dtype\" (a string), "
                                          "\"shape\" (an array) and "
                                          "\"data_offsets\" (two integers)");
  TensorInfo info;
  info.name = name.str();
  info.file = file;
  uint64_t size;
  if (*dtype == "F32")
    info.type = TensorType::F32, size = 4;
  else if (*dtype == "F16")
    info.type = TensorType::F16, size = 2;
  else if (*dtype == "BF16")
    info.type = TensorType::BF16, size = 2;
  else
    return checkpointError(path, tensor + " has dtype '" + printable(*dtype) +
                                     "', which is not supported (F32, F16, "
                                     "BF16)");
  uint64_t elements = 1;
  for (const llvm::json::Value &d : *shape) {
    std::optional<int64_t> dim = d.getAsInteger();
    if (!dim || *dim < 0 || *dim > (int64_t(1) << 40) ||
        __builtin_mul_overflow(elements, uint64_t(*dim), &elements) ||
        elements > (1ull << 48))
      return checkpointError(path, tensor + " has an invalid shape");
    info.shape.push_back(*dim);
  }
  std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
  std::optional<int64_t> end = (*offsets)[1].getAsInteger();
  if (!begin || !end || *begin < 0 || *end < *begin)
    return checkpointError(path, tensor + " has invalid data_offsets");
  if (uint64_t(*end) > dataSize)
    return checkpointError(
        path, llvm::formatv("{0} data_offsets [{1}, {2}) lie past the end of "
                            "the data ({3} bytes): tensor data short",
                            tensor, *begin, *end, dataSize)
                  .str());
  info.bytes = elements * size;
  if (uint64_t(*end - *begin) != info.bytes)
    return checkpointError(
        path, llvm::formatv("{0} data_offsets [{1}, {2}) hold {3} bytes, but "
                            "shape {4} of {5} needs {6}",
                            tensor, *begin, *end, *end - *begin,
                            shapeText(info.shape), *dtype, info.bytes)
                  .str());
  info.offset = dataStart + uint64_t(*begin);
  return ckpt.addTensor(std::move(info));
}

llvm::Error SafetensorsParser::addFile(llvm::StringRef path) {
  auto buffer = mapRegularFile(path);
  if (!buffer)
    return buffer.takeError();
  unsigned file = ckpt.files.size();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  ckpt.files.push_back(std::move(*buffer));
  ckpt.filePaths.push_back(path.str());
  if (bytes.size() < 8)
    return checkpointError(path, "truncated: " + llvm::Twine(bytes.size()) +
                                     " bytes, less than the 8-byte header "
                                     "length");
  uint64_t headerLength = 0;
  for (int i = 0; i < 8; ++i)
    headerLength |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  if (headerLength > bytes.size() - 8)
    return checkpointError(path, llvm::formatv("header length {0} runs past "
                                               "the end of the file ({1} "
                                               "bytes)",
                                               headerLength, bytes.size())
                                     .str());
  auto header = parseBoundedJson(bytes.substr(8, headerLength));
  if (!header)
    return checkpointError(path, "header is not valid JSON: " +
                                     llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  if (!object)
    return checkpointError(path, "header is not a JSON object");
  uint64_t dataStart = 8 + headerLength;
  uint64_t dataSize = bytes.size() - dataStart;
  // JSON objects are unordered: sort the names so tensors list stably.
  std::vector<llvm::StringRef> names;
  for (const auto &[key, value] : *object)
    if (key != "__metadata__")
      names.push_back(key);
  llvm::sort(names);
  size_t first = ckpt.infos.size();
  for (llvm::StringRef name : names)
    if (llvm::Error e = addTensor(path, file, name, *object->get(name),
                                  dataStart, dataSize))
      return e;
  // No two tensors of this file may share bytes.
  std::vector<const TensorInfo *> byOffset;
  for (size_t i = first; i < ckpt.infos.size(); ++i)
    if (ckpt.infos[i].bytes)
      byOffset.push_back(&ckpt.infos[i]);
  llvm::sort(byOffset, [](const TensorInfo *a, const TensorInfo *b) {
    return a->offset < b->offset;
  });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->offset < byOffset[i - 1]->offset + byOffset[i - 1]->bytes)
      return checkpointError(path, "tensor '" + printable(byOffset[i]->name) +
                                       "' overlaps tensor '" +
                                       printable(byOffset[i - 1]->name) + "'");
  return llvm::Error::success();
}

llvm::Error SafetensorsParser::addIndex(llvm::StringRef path) {
  auto buffer = mapRegularFile(path);
  if (!buffer)
    return buffer.takeError();
  auto index = parseBoundedJson((*buffer)->getBuffer());
  if (!index)
    return checkpointError(path, "not valid JSON: " +
                                     llvm::toString(index.takeError()));
  const llvm::json::Object *object = index->getAsObject();
  const llvm::json::Object *weightMap =
      object ? object->getObject("weight_map") : nullptr;
  if (!weightMap)
    return checkpointError(path, "has no \"weight_map\" object");
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  // Shards in name order; each tensor's shard checked after all are read.
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> entries;
  for (const auto &[name, shard] : *weightMap) {
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file)
      return checkpointError(path, "weight_map entry '" + printable(name) +
                                       "' is not a file name");
    if (file->empty() || file->contains('/') || file->contains('\\') ||
        *file == "." || *file == "..")
      return checkpointError(path, "shard '" + printable(*file) +
                                       "' must be a file name in the index's "
                                       "directory");
    entries.emplace_back(name, *file);
  }
  llvm::sort(entries);
  llvm::StringMap<unsigned> shardFile;
  std::vector<llvm::StringRef> shards;
  for (const auto &entry : entries)
    if (shardFile.try_emplace(entry.second, 0).second)
      shards.push_back(entry.second);
  llvm::sort(shards);
  for (llvm::StringRef shard : shards) {
    llvm::SmallString<256> shardPath(dir);
    llvm::sys::path::append(shardPath, shard);
    if (!llvm::sys::fs::exists(shardPath))
      return checkpointError(path, "shard '" + printable(shard) +
                                       "' named in weight_map is missing");
    shardFile[shard] = ckpt.files.size();
    if (llvm::Error e = addFile(shardPath))
      return e;
  }
  for (const auto &[name, shard] : entries) {
    const TensorInfo *info = ckpt.find(name);
    if (!info || info->file != shardFile[shard])
      return checkpointError(path, "tensor '" + printable(name) +
                                       "' is not in its shard '" +
                                       printable(shard) + "'");
  }
  return llvm::Error::success();
}

llvm::Error SafetensorsParser::readConfig(llvm::StringRef dir) {
  llvm::SmallString<256> configPath(dir);
  llvm::sys::path::append(configPath, "config.json");
  if (!llvm::sys::fs::exists(configPath))
    return llvm::Error::success();
  auto buffer = mapRegularFile(configPath);
  if (!buffer)
    return buffer.takeError();
  ckpt.configText = (*buffer)->getBuffer().str();
  ckpt.configPath = configPath.str().str();
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Checkpoint>>
Checkpoint::openSafetensors(llvm::StringRef path) {
  auto ckpt = std::make_unique<Checkpoint>();
  ckpt->fmt = CheckpointFormat::Safetensors;
  ckpt->filePath = path.str();
  SafetensorsParser parser(*ckpt);
  llvm::SmallString<256> dir;
  llvm::Error error = llvm::Error::success();
  if (llvm::sys::fs::is_directory(path)) {
    dir = path;
    llvm::SmallString<256> index(dir), single(dir);
    llvm::sys::path::append(index, "model.safetensors.index.json");
    llvm::sys::path::append(single, "model.safetensors");
    if (llvm::sys::fs::exists(index))
      error = parser.addIndex(index);
    else if (llvm::sys::fs::exists(single))
      error = parser.addFile(single);
    else
      return checkpointError(path, "a directory with neither "
                                   "model.safetensors.index.json nor "
                                   "model.safetensors");
  } else {
    dir = llvm::sys::path::parent_path(path);
    error =
        path.ends_with(".json") ? parser.addIndex(path) : parser.addFile(path);
  }
  if (error)
    return std::move(error);
  if (llvm::Error e = parser.readConfig(dir.empty() ? "." : dir.str()))
    return std::move(e);
  return std::move(ckpt);
}
