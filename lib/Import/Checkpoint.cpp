//===- Checkpoint.cpp - Shared checkpoint plumbing and decoding -----------===//
//
// Opening regular files as memory maps, the tensor index both formats fill,
// and decoding of every supported element type to float. The block formats
// (Q8_0, Q4_0) follow ggml: 32 values per block along the innermost
// dimension, an f16 scale d first, then the quants.
//
//===----------------------------------------------------------------------===//
#include "wafer/Import/Checkpoint.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace wafer;

llvm::Error wafer::checkpointError(llvm::StringRef path,
                                   const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

llvm::StringRef wafer::typeName(TensorType type) {
  switch (type) {
  case TensorType::F32:
    return "F32";
  case TensorType::F16:
    return "F16";
  case TensorType::BF16:
    return "BF16";
  case TensorType::Q8_0:
    return "Q8_0";
  case TensorType::Q4_0:
    return "Q4_0";
  }
  llvm_unreachable("unknown tensor type");
}

llvm::StringRef wafer::typeName(GgufType type) {
  static const char *names[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                "i32", "f32", "bool", "string", "array",
                                "u64", "i64", "f64"};
  return names[static_cast<uint32_t>(type)];
}

llvm::StringRef wafer::ropeOrderName(RopeOrder order) {
  return order == RopeOrder::RotateHalf ? "rotate-half" : "adjacent-pairs";
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<int64_t> GgufValue::asInt() const {
  if (auto *u = std::get_if<uint64_t>(&value))
    return *u <= uint64_t(INT64_MAX) ? std::optional<int64_t>(int64_t(*u))
                                     : std::nullopt;
  if (auto *i = std::get_if<int64_t>(&value))
    return *i;
  return std::nullopt;
}

std::optional<double> GgufValue::asFloat() const {
  if (auto *f = std::get_if<double>(&value))
    return *f;
  return std::nullopt;
}

std::optional<llvm::StringRef> GgufValue::asString() const {
  if (auto *s = std::get_if<llvm::StringRef>(&value))
    return *s;
  return std::nullopt;
}

const std::vector<GgufValue> *GgufValue::asArray() const {
  return std::get_if<std::vector<GgufValue>>(&value);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
wafer::mapRegularFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return checkpointError(path, "cannot open: " + ec.message());
  switch (status.type()) {
  case llvm::sys::fs::file_type::regular_file:
    break;
  case llvm::sys::fs::file_type::directory_file:
    return checkpointError(path, "is a directory, not a checkpoint file");
  case llvm::sys::fs::file_type::fifo_file:
    return checkpointError(path, "is a named pipe, not a regular file");
  default:
    return checkpointError(path, "is not a regular file (a device, socket "
                                 "or other special file)");
  }
  // IsVolatile=false and no terminator: large files are mmapped.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return checkpointError(path, "cannot open: " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Error Checkpoint::addTensor(TensorInfo info) {
  if (!index.try_emplace(info.name, infos.size()).second)
    return checkpointError(filePaths[info.file], "tensor '" +
                                                     printable(info.name) +
                                                     "' appears twice");
  infos.push_back(std::move(info));
  return llvm::Error::success();
}

const TensorInfo *Checkpoint::find(llvm::StringRef name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &infos[it->second];
}

const GgufValue *Checkpoint::metadataValue(llvm::StringRef key) const {
  auto it = metaIndex.find(key);
  return it == metaIndex.end() ? nullptr : &meta[it->second].second;
}

static uint16_t load16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }

float wafer::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  int exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -24); // zero and subnormals
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

static float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

llvm::Expected<WeightData> Checkpoint::read(llvm::StringRef name) const {
  const TensorInfo *info = find(name);
  if (!info)
    return checkpointError(filePath, "has no tensor '" + printable(name) + "'");
  // The parsers checked that [offset, offset + bytes) lies in the file and
  // that `bytes` is what the type and shape need.
  const uint8_t *p =
      reinterpret_cast<const uint8_t *>(files[info->file]->getBufferStart()) +
      info->offset;
  int64_t n = info->elements();
  WeightData out{info->shape, std::vector<float>(size_t(n))};
  float *dst = out.values.data();
  switch (info->type) {
  case TensorType::F32:
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 |
                      uint32_t(p[4 * i + 2]) << 16 |
                      uint32_t(p[4 * i + 3]) << 24;
      std::memcpy(dst + i, &bits, 4);
    }
    break;
  case TensorType::F16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = halfToFloat(load16(p + 2 * i));
    break;
  case TensorType::BF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16ToFloat(load16(p + 2 * i));
    break;
  case TensorType::Q8_0: // f16 d, int8 q[32]: x = d * q
    for (int64_t b = 0; b < n / 32; ++b, p += 34) {
      float d = halfToFloat(load16(p));
      for (int j = 0; j < 32; ++j)
        dst[32 * b + j] = d * float(int8_t(p[2 + j]));
    }
    break;
  case TensorType::Q4_0: // f16 d, 16 bytes: low nibbles are values 0..15,
                         // high nibbles 16..31, each stored as q + 8
    for (int64_t b = 0; b < n / 32; ++b, p += 18) {
      float d = halfToFloat(load16(p));
      for (int j = 0; j < 16; ++j) {
        dst[32 * b + j] = d * float(int(p[2 + j] & 0xf) - 8);
        dst[32 * b + j + 16] = d * float(int(p[2 + j] >> 4) - 8);
      }
    }
    break;
  }
  return out;
}

llvm::Expected<std::unique_ptr<Checkpoint>>
Checkpoint::open(llvm::StringRef path) {
  if (llvm::sys::fs::is_directory(path) || path.ends_with(".json") ||
      path.ends_with(".safetensors"))
    return openSafetensors(path);
  auto buffer = mapRegularFile(path);
  if (!buffer)
    return buffer.takeError();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.starts_with("GGUF"))
    return openGguf(path);
  // safetensors: an 8-byte length, then the JSON header.
  if (bytes.size() > 8 && bytes[8] == '{')
    return openSafetensors(path);
  return checkpointError(path, "neither GGUF (no 'GGUF' magic) nor "
                               "safetensors (no JSON header after 8 bytes)");
}
