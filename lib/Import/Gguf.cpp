//===- Gguf.cpp - GGUF v2/v3 reader ---------------------------------------===//
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64
// metadata count; metadata as (string key, u32 type, value); tensor infos as
// (string name, u32 n_dims, u64 dims[n_dims] innermost first, u32 ggml type,
// u64 offset); padding to general.alignment (default 32); the data section,
// which tensor offsets are relative to. Strings are a u64 length and bytes.
// Every read is bounds-checked against the mapped file.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/Checkpoint.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <type_traits>

using namespace wafer;

namespace {

/// ggml's type numbers and names, so an unsupported type is named.
struct GgmlType {
  uint32_t id;
  const char *name;
  std::optional<TensorType> supported;
};
constexpr GgmlType kGgmlTypes[] = {
    {0, "F32", TensorType::F32},
    {1, "F16", TensorType::F16},
    {2, "Q4_0", TensorType::Q4_0},
    {3, "Q4_1", {}},
    {6, "Q5_0", {}},
    {7, "Q5_1", {}},
    {8, "Q8_0", TensorType::Q8_0},
    {9, "Q8_1", {}},
    {10, "Q2_K", {}},
    {11, "Q3_K", {}},
    {12, "Q4_K", {}},
    {13, "Q5_K", {}},
    {14, "Q6_K", {}},
    {15, "Q8_K", {}},
    {16, "IQ2_XXS", {}},
    {17, "IQ2_XS", {}},
    {18, "IQ3_XXS", {}},
    {19, "IQ1_S", {}},
    {20, "IQ4_NL", {}},
    {21, "IQ3_S", {}},
    {22, "IQ2_S", {}},
    {23, "IQ4_XS", {}},
    {24, "I8", {}},
    {25, "I16", {}},
    {26, "I32", {}},
    {27, "I64", {}},
    {28, "F64", {}},
    {29, "IQ1_M", {}},
    {30, "BF16", TensorType::BF16},
};

constexpr int kMaxDims = 4;       // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8; // nested arrays are legal; bound them
constexpr uint32_t kDefaultAlignment = 32;

} // namespace

namespace wafer {

class GgufParser {
public:
  GgufParser(Checkpoint &ckpt, llvm::StringRef bytes, llvm::StringRef path)
      : ckpt(ckpt), bytes(bytes), path(path) {}

  llvm::Error run();

private:
  llvm::Error truncated(const llvm::Twine &what) {
    return checkpointError(path, llvm::formatv("truncated: {0} at byte {1} "
                                               "runs past the end of the "
                                               "file ({2} bytes)",
                                               what, pos, bytes.size())
                                     .str());
  }
  llvm::Error need(uint64_t n, const llvm::Twine &what) {
    return n > bytes.size() - pos ? truncated(what) : llvm::Error::success();
  }
  template <typename T> llvm::Error read(T &out, const llvm::Twine &what) {
    out = 0;
    if (llvm::Error e = need(sizeof(T), what))
      return e;
    for (size_t i = 0; i < sizeof(T); ++i)
      out |= T(uint64_t(uint8_t(bytes[pos + i])) << (8 * i));
    pos += sizeof(T);
    return llvm::Error::success();
  }
  llvm::Error readString(llvm::StringRef &out, const llvm::Twine &what) {
    uint64_t length;
    if (llvm::Error e = read(length, what + " length"))
      return e;
    if (llvm::Error e = need(length, what))
      return e;
    out = bytes.substr(pos, length);
    pos += length;
    return llvm::Error::success();
  }
  /// An integer of U's width, sign-extended when `isSigned`.
  template <typename U>
  llvm::Error readInt(GgufValue &out, bool isSigned, const llvm::Twine &what) {
    U v;
    if (llvm::Error e = read(v, what))
      return e;
    if (isSigned)
      out.value = int64_t(std::make_signed_t<U>(v));
    else
      out.value = uint64_t(v);
    return llvm::Error::success();
  }
  llvm::Error readValue(GgufType type, GgufValue &out, llvm::StringRef key,
                        int depth);
  llvm::Error readTensorInfo(uint64_t index, uint64_t &relativeOffset);

  Checkpoint &ckpt;
  llvm::StringRef bytes, path;
  uint64_t pos = 0;
};

} // namespace wafer

llvm::Error GgufParser::readValue(GgufType type, GgufValue &out,
                                  llvm::StringRef key, int depth) {
  std::string what = "metadata '" + printable(key) + "'";
  out.type = type;
  switch (type) {
  case GgufType::U8:
    return readInt<uint8_t>(out, false, what);
  case GgufType::I8:
    return readInt<uint8_t>(out, true, what);
  case GgufType::U16:
    return readInt<uint16_t>(out, false, what);
  case GgufType::I16:
    return readInt<uint16_t>(out, true, what);
  case GgufType::U32:
    return readInt<uint32_t>(out, false, what);
  case GgufType::I32:
    return readInt<uint32_t>(out, true, what);
  case GgufType::U64:
    return readInt<uint64_t>(out, false, what);
  case GgufType::I64:
    return readInt<uint64_t>(out, true, what);
  case GgufType::F32: {
    uint32_t v;
    if (auto e = read(v, what))
      return e;
    out.value = double(llvm::bit_cast<float>(v));
    break;
  }
  case GgufType::F64: {
    uint64_t v;
    if (auto e = read(v, what))
      return e;
    out.value = llvm::bit_cast<double>(v);
    break;
  }
  case GgufType::Bool: {
    uint8_t v;
    if (auto e = read(v, what))
      return e;
    if (v > 1)
      return checkpointError(path, what + " is a bool of value " +
                                       llvm::Twine(v) + " (not 0 or 1)");
    out.value = v == 1;
    break;
  }
  case GgufType::String: {
    llvm::StringRef s;
    if (auto e = readString(s, what))
      return e;
    out.value = s;
    break;
  }
  case GgufType::Array: {
    if (depth >= kMaxArrayDepth)
      return checkpointError(path, what + " nests arrays deeper than " +
                                       llvm::Twine(kMaxArrayDepth));
    uint32_t elementType;
    uint64_t count;
    if (auto e = read(elementType, what + " element type"))
      return e;
    if (elementType > uint32_t(GgufType::F64))
      return checkpointError(path, what + " has arrays of unknown type " +
                                       llvm::Twine(elementType));
    if (auto e = read(count, what + " element count"))
      return e;
    // Every element takes at least one byte: a count past the file is
    // truncation, caught before reserving memory for it.
    if (auto e = need(count, what + " elements"))
      return e;
    out.elementType = GgufType(elementType);
    std::vector<GgufValue> elements(count);
    for (GgufValue &element : elements)
      if (auto e = readValue(out.elementType, element, key, depth + 1))
        return e;
    out.value = std::move(elements);
    break;
  }
  }
  return llvm::Error::success();
}

llvm::Error GgufParser::readTensorInfo(uint64_t index,
                                       uint64_t &relativeOffset) {
  std::string what = "tensor info " + std::to_string(index);
  llvm::StringRef name;
  if (auto e = readString(name, what + " name"))
    return e;
  std::string tensor = "tensor '" + printable(name) + "'";
  uint32_t nDims;
  if (auto e = read(nDims, tensor + " dimension count"))
    return e;
  if (nDims == 0 || nDims > kMaxDims)
    return checkpointError(path, tensor + " has " + llvm::Twine(nDims) +
                                     " dimensions (1 to 4 allowed)");
  TensorInfo info;
  info.name = name.str();
  uint64_t elements = 1;
  for (uint32_t d = 0; d < nDims; ++d) {
    uint64_t dim;
    if (auto e = read(dim, tensor + " dimensions"))
      return e;
    // Bounded by the file size once multiplied out, so int64 is plenty.
    if (dim == 0 || dim > (uint64_t(1) << 40) ||
        __builtin_mul_overflow(elements, dim, &elements) ||
        elements > (1ull << 48))
      return checkpointError(path, tensor + " has an invalid dimension " +
                                       llvm::Twine(dim));
    info.shape.insert(info.shape.begin(), int64_t(dim));
  }
  uint32_t type;
  if (auto e = read(type, tensor + " type"))
    return e;
  const GgmlType *known = llvm::find_if(
      kGgmlTypes, [&](const GgmlType &t) { return t.id == type; });
  if (known == std::end(kGgmlTypes))
    return checkpointError(path, tensor + " has unknown ggml type " +
                                     llvm::Twine(type));
  if (!known->supported)
    return checkpointError(path, tensor + " has type " + known->name +
                                     ", which is not supported (F32, F16, "
                                     "BF16, Q8_0, Q4_0)");
  info.type = *known->supported;
  switch (info.type) {
  case TensorType::F32:
    info.bytes = 4 * elements;
    break;
  case TensorType::F16:
  case TensorType::BF16:
    info.bytes = 2 * elements;
    break;
  case TensorType::Q8_0:
  case TensorType::Q4_0:
    if (info.shape.back() % 32)
      return checkpointError(path, tensor + " of type " + known->name +
                                       " has rows of " +
                                       llvm::Twine(info.shape.back()) +
                                       " values, not a multiple of 32");
    info.bytes = elements / 32 * (info.type == TensorType::Q8_0 ? 34 : 18);
    break;
  }
  if (auto e = read(relativeOffset, tensor + " offset"))
    return e;
  return ckpt.addTensor(std::move(info));
}

llvm::Error GgufParser::run() {
  uint32_t magic, version;
  if (auto e = read(magic, "the magic"))
    return e;
  if (magic != 0x46554747) // "GGUF"
    return checkpointError(path, "not a GGUF file (no 'GGUF' magic)");
  if (auto e = read(version, "the version"))
    return e;
  if (version != 2 && version != 3)
    return checkpointError(path, "GGUF version " + llvm::Twine(version) +
                                     " is not supported (2 or 3)");
  uint64_t tensorCount, metadataCount;
  if (auto e = read(tensorCount, "the tensor count"))
    return e;
  if (auto e = read(metadataCount, "the metadata count"))
    return e;
  for (uint64_t i = 0; i < metadataCount; ++i) {
    llvm::StringRef key;
    if (auto e = readString(key, "metadata key " + llvm::Twine(i)))
      return e;
    uint32_t type;
    if (auto e = read(type, "metadata '" + printable(key) + "' type"))
      return e;
    if (type > uint32_t(GgufType::F64))
      return checkpointError(path, "metadata '" + printable(key) +
                                       "' has unknown value type " +
                                       llvm::Twine(type));
    GgufValue value;
    if (auto e = readValue(GgufType(type), value, key, 0))
      return e;
    if (!ckpt.metaIndex.try_emplace(key, ckpt.meta.size()).second)
      return checkpointError(path,
                             "metadata '" + printable(key) + "' appears twice");
    ckpt.meta.emplace_back(key, std::move(value));
  }

  uint64_t alignment = kDefaultAlignment;
  if (const GgufValue *a = ckpt.metadataValue("general.alignment")) {
    std::optional<int64_t> v = a->asInt();
    if (a->type != GgufType::U32 || !v || *v == 0 || !llvm::isPowerOf2_64(*v))
      return checkpointError(path, "general.alignment must be a u32 power of "
                                   "two");
    alignment = uint64_t(*v);
  }

  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < tensorCount; ++i) {
    uint64_t offset;
    if (auto e = readTensorInfo(i, offset))
      return e;
    offsets.push_back(offset);
  }
  uint64_t dataStart = llvm::alignTo(pos, alignment);

  // Offsets: aligned, inside the file, not overlapping.
  std::vector<size_t> order(offsets.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order,
             [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  const TensorInfo *previous = nullptr;
  uint64_t previousEnd = 0;
  for (size_t i : order) {
    TensorInfo &info = ckpt.infos[i];
    std::string tensor = "tensor '" + printable(info.name) + "'";
    if (offsets[i] % alignment)
      return checkpointError(path, tensor + " offset " +
                                       llvm::Twine(offsets[i]) +
                                       " is not a multiple of the alignment " +
                                       llvm::Twine(alignment));
    uint64_t begin, end;
    if (__builtin_add_overflow(dataStart, offsets[i], &begin) ||
        __builtin_add_overflow(begin, info.bytes, &end) || end > bytes.size())
      return checkpointError(
          path, llvm::formatv("{0} data (offset {1}, {2} bytes) lies past "
                              "the end of the file ({3} bytes): tensor data "
                              "short",
                              tensor, offsets[i], info.bytes, bytes.size())
                    .str());
    if (previous && begin < previousEnd)
      return checkpointError(path, tensor + " overlaps tensor '" +
                                       printable(previous->name) + "'");
    info.offset = begin;
    previous = &info;
    previousEnd = end;
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Checkpoint>>
Checkpoint::openGguf(llvm::StringRef path) {
  auto buffer = mapRegularFile(path);
  if (!buffer)
    return buffer.takeError();
  auto ckpt = std::make_unique<Checkpoint>();
  ckpt->fmt = CheckpointFormat::Gguf;
  ckpt->filePath = path.str();
  ckpt->filePaths.push_back(path.str());
  ckpt->files.push_back(std::move(*buffer));
  GgufParser parser(*ckpt, ckpt->files[0]->getBuffer(), path);
  if (llvm::Error e = parser.run())
    return std::move(e);
  return std::move(ckpt);
}
