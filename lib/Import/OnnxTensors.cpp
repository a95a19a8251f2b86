//===- OnnxTensors.cpp - The values of ONNX tensors -----------------------===//
//
// Element types, and the values of a TensorProto in any of its storage
// forms: typed fields, raw_data, or external data, which must stay inside
// the model's folder and is mapped (paged in by the OS), not read.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "wafer/Import/Checkpoint.h"
#include "wafer/Support/CheckedMath.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace wafer;
using namespace wafer::onnx_import;

llvm::Expected<Type> onnx_import::elementType(Builder &builder, int dataType,
                                              const llvm::Twine &what) {
  switch (dataType) {
  // float16 and double values are held as f32 (float16 exactly); the
  // precision the grid computes in is --dtype's.
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::DOUBLE:
    return builder.getF32Type();
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
    return builder.getI64Type();
  case onnx::TensorProto::BOOL:
    return builder.getI1Type();
  default:
    return fail(what + " has ONNX data type " + llvm::Twine(dataType) +
                "; supported: float (1), float16 (10), double (11), int64 (7), "
                "int32 (6), bool (9)");
  }
}

llvm::Expected<ExternalData>
onnx_import::locateExternalData(const onnx::TensorProto &tensor,
                                llvm::StringRef modelDir,
                                const llvm::Twine &where,
                                int64_t expectedBytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value;
      if (llvm::StringRef(entry.value()).getAsInteger(10, value) || value < 0)
        return fail(where + ": external data " + entry.key() + " '" +
                    entry.value() + "' is not a non-negative integer");
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty())
    return fail(where + ": external data has no location");
  // A NUL would end the path the OS sees early: "w.bin\0junk" is not w.bin.
  if (location.find('\0') != std::string::npos)
    return fail(where + ": external data location '" + printable(location) +
                "' contains a NUL byte");
  if (llvm::sys::path::is_absolute(location))
    return fail(where + ": external data location '" + location +
                "' is absolute; it must be relative to the model");
  for (llvm::StringRef part : llvm::make_range(
           llvm::sys::path::begin(location), llvm::sys::path::end(location)))
    if (part == "..")
      return fail(where + ": external data location '" + location +
                  "' contains '..'");
  llvm::SmallString<256> file(modelDir);
  for (llvm::StringRef part : llvm::make_range(
           llvm::sys::path::begin(location), llvm::sys::path::end(location))) {
    llvm::sys::path::append(file, part);
    if (llvm::sys::fs::is_symlink_file(file))
      return fail(where + ": external data location '" + location +
                  "' resolves through a symlink");
  }
  // Regular files only: opening a FIFO blocks, a directory has no bytes.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(file, status))
    return fail(where + ": external data file '" + file.str() +
                "': " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return fail(where + ": external data file '" + file.str() +
                "' is not a regular file");
  uint64_t fileSize = status.getSize();
  if (length < 0)
    length = expectedBytes;
  if (length != expectedBytes)
    return fail(where + ": external data length " + llvm::Twine(length) +
                " differs from the " + llvm::Twine(expectedBytes) +
                " bytes its shape needs");
  std::optional<int64_t> end = checkedAdd(offset, length);
  if (!end || uint64_t(*end) > fileSize)
    return fail(where + ": external data at offset " + llvm::Twine(offset) +
                " with " + llvm::Twine(length) + " bytes lies beyond the end "
                "of '" + file.str() + "' (" + llvm::Twine(fileSize) +
                " bytes)");
  return ExternalData{file.str().str(), offset, length};
}

/// Maps a tensor's external data (lazily paged in by the OS).
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mapExternalData(const onnx::TensorProto &tensor, llvm::StringRef modelDir,
                const llvm::Twine &where, int64_t expectedBytes) {
  auto data = locateExternalData(tensor, modelDir, where, expectedBytes);
  if (!data)
    return data.takeError();
  auto buffer =
      llvm::MemoryBuffer::getFileSlice(data->file, data->length, data->offset);
  if (!buffer)
    return fail(where + ": cannot map '" + data->file +
                "': " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<TensorSize>
onnx_import::tensorSize(const onnx::TensorProto &tensor,
                        const llvm::Twine &where) {
  int type = tensor.data_type();
  int64_t width =
      type == onnx::TensorProto::BOOL      ? 1
      : type == onnx::TensorProto::FLOAT16 ? 2
      : (type == onnx::TensorProto::INT32 || type == onnx::TensorProto::FLOAT)
          ? 4
          : 8;
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> count = checkedElementCount(dims);
  std::optional<int64_t> bytes =
      count ? checkedByteSize(*count, width) : std::nullopt;
  if (!bytes)
    return fail(where + " has shape " + shapeText(dims) +
                ", whose size overflows 64 bits");
  return TensorSize{*count, width, *bytes};
}

llvm::Expected<eval::Tensor>
onnx_import::readTensorProto(const onnx::TensorProto &tensor,
                             llvm::StringRef modelDir,
                             const llvm::Twine &where) {
  int type = tensor.data_type();
  eval::ElementKind kind =
      type == onnx::TensorProto::BOOL ? eval::ElementKind::Bool
      : (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32)
          ? eval::ElementKind::I64
          : eval::ElementKind::F32;
  if (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16 &&
      type != onnx::TensorProto::DOUBLE && type != onnx::TensorProto::INT64 &&
      type != onnx::TensorProto::INT32 && type != onnx::TensorProto::BOOL)
    return fail(where + " has ONNX data type " + llvm::Twine(type) +
                "; supported: float (1), float16 (10), double (11), int64 (7), "
                "int32 (6), bool (9)");
  for (int64_t d : tensor.dims())
    if (d < 0)
      return fail(where + " has a negative dimension");
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  // The data's size is checked against the shape before anything of the
  // shape's size is allocated.
  llvm::Expected<TensorSize> size = tensorSize(tensor, where);
  if (!size)
    return size.takeError();
  int64_t available = -1;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    available = size->bytes; // checked against the file when it is mapped
  else if (tensor.has_raw_data())
    available = int64_t(tensor.raw_data().size());
  else
    available = type == onnx::TensorProto::FLOAT    ? tensor.float_data_size()
                : type == onnx::TensorProto::DOUBLE ? tensor.double_data_size()
                : type == onnx::TensorProto::INT64  ? tensor.int64_data_size()
                                                    : tensor.int32_data_size();
  // float16 keeps its bits in int32_data.
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL &&
      !tensor.has_raw_data() && available != size->count)
    return fail(where + " has " + llvm::Twine(available) +
                " values, its shape needs " + llvm::Twine(size->count));
  if (tensor.has_raw_data() && available != size->bytes)
    return fail(where + " has " + llvm::Twine(available) +
                " bytes of data, its shape needs " +
                llvm::Twine(size->bytes));
  std::unique_ptr<llvm::MemoryBuffer> external;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto buffer = mapExternalData(tensor, modelDir, where, size->bytes);
    if (!buffer)
      return buffer.takeError();
    external = std::move(*buffer);
  }
  eval::Tensor result(kind, std::move(dims));
  auto fromBytes = [&](const char *data) {
    for (int64_t i = 0; i < size->count; ++i) {
      const char *p = data + i * size->elementBytes;
      double &out = result.data[i];
      switch (type) {
      case onnx::TensorProto::FLOAT: {
        float v;
        std::memcpy(&v, p, 4);
        out = v;
        break;
      }
      case onnx::TensorProto::DOUBLE: {
        double v;
        std::memcpy(&v, p, 8);
        out = double(float(v));
        break;
      }
      case onnx::TensorProto::FLOAT16: {
        uint16_t bits;
        std::memcpy(&bits, p, 2);
        out = halfToFloat(bits);
        break;
      }
      case onnx::TensorProto::INT64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out = double(v);
        break;
      }
      case onnx::TensorProto::INT32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        out = double(v);
        break;
      }
      default:
        out = *p != 0;
      }
    }
  };
  if (external) {
    fromBytes(external->getBufferStart());
    return result;
  }
  if (tensor.has_raw_data()) {
    fromBytes(tensor.raw_data().data());
    return result;
  }
  auto copy = [&](const auto &field) {
    for (int64_t i = 0; i < size->count; ++i)
      result.data[i] = double(field.Get(i));
  };
  switch (type) {
  case onnx::TensorProto::FLOAT:
    copy(tensor.float_data());
    break;
  case onnx::TensorProto::DOUBLE:
    copy(tensor.double_data());
    break;
  case onnx::TensorProto::INT64:
    copy(tensor.int64_data());
    break;
  case onnx::TensorProto::FLOAT16:
    for (int64_t i = 0; i < size->count; ++i)
      result.data[i] = halfToFloat(uint16_t(tensor.int32_data(int(i))));
    break;
  default: // int32 and bool live in int32_data
    copy(tensor.int32_data());
  }
  if (kind == eval::ElementKind::F32)
    result = eval::cast(result, kind);
  return result;
}
