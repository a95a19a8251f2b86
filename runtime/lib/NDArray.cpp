//===- NDArray.cpp - Host tensors and .npz files --------------------------===//
//
// An .npz is a zip archive of .npy members, read and written with libzip
// (zip64 included, so multi-gigabyte caches load; numpy's writer forces
// zip64 local headers). The reader bounds what a member may claim before
// anything is allocated and lets libzip check every CRC; the writer stores
// members uncompressed with a fixed timestamp, so equal arrays give equal
// files.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/NDArray.h"
#include "wafer/Support/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

using namespace llvm;

namespace wafer::rt {

int64_t NDArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";

uint16_t read16(const char *p) { return support::endian::read16le(p); }
uint32_t read32(const char *p) { return support::endian::read32le(p); }

Error fail(StringRef path, const Twine &what) {
  return createStringError(inconvertibleErrorCode(), "'" + path + "': " + what);
}

Error failMember(StringRef path, StringRef member, const Twine &what) {
  return createStringError(inconvertibleErrorCode(),
                           "'" + path + "', member '" + member + "': " + what);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalize into a float.
    int shift = 0;
    while (!(mant & 0x400)) {
      mant <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A .npy header: the dict numpy writes,
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, each key
/// once, then spaces and a newline. Parsed as strictly as numpy writes it
/// (np.load itself lets a repeated key win and ignores bytes after the
/// data; an input it would read two ways is refused): the values as text,
/// the shape's items unparsed.
struct NpyHeader {
  StringRef descr, fortranOrder;
  SmallVector<StringRef, 4> shape;
};

std::optional<NpyHeader> parseNpyHeader(StringRef text) {
  StringRef rest = text.rtrim(" \n");
  if (!rest.consume_front("{") || !rest.consume_back("}"))
    return std::nullopt;
  NpyHeader header;
  bool seen[3] = {false, false, false};
  while (!(rest = rest.ltrim()).empty()) {
    StringRef key;
    if (!rest.consume_front("'"))
      return std::nullopt;
    std::tie(key, rest) = rest.split('\'');
    rest = rest.ltrim();
    if (!rest.consume_front(":"))
      return std::nullopt;
    rest = rest.ltrim();
    int slot = key == "descr"           ? 0
               : key == "fortran_order" ? 1
               : key == "shape"         ? 2
                                        : -1;
    if (slot < 0 || seen[slot])
      return std::nullopt;
    seen[slot] = true;
    if (slot == 0) {
      if (!rest.consume_front("'"))
        return std::nullopt;
      size_t close = rest.find('\'');
      if (close == StringRef::npos)
        return std::nullopt;
      header.descr = rest.take_front(close);
      rest = rest.drop_front(close + 1);
    } else if (slot == 1) {
      size_t end = rest.find_first_of(", ");
      header.fortranOrder = rest.take_front(end);
      rest = rest.drop_front(header.fortranOrder.size());
    } else {
      if (!rest.consume_front("("))
        return std::nullopt;
      size_t close = rest.find(')');
      if (close == StringRef::npos)
        return std::nullopt;
      // "()", "(3,)", "(2, 3)": items, the last one may end in a comma.
      StringRef items = rest.take_front(close).trim();
      rest = rest.drop_front(close + 1);
      if (!items.empty()) {
        items.consume_back(",");
        items.split(header.shape, ',');
        for (StringRef &item : header.shape)
          if ((item = item.trim()).empty())
            return std::nullopt;
      }
    }
    rest = rest.ltrim();
    if (!rest.empty() && !rest.consume_front(","))
      return std::nullopt;
  }
  if (!seen[0] || !seen[1] || !seen[2])
    return std::nullopt;
  return header;
}

struct DTypeInfo {
  StringRef descr, name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {{"<f4", "float32", 4}, {"<f2", "float16", 2},
                                 {"<f8", "float64", 8}, {"<i8", "int64", 8},
                                 {"<i4", "int32", 4},   {"|b1", "bool", 1}};

float decodeElement(const DTypeInfo &t, const char *p) {
  switch (t.size) {
  case 1:
    return *p != 0 ? 1.0f : 0.0f;
  case 2:
    return halfToFloat(read16(p));
  case 4:
    if (t.descr == "<i4")
      return float(int32_t(read32(p)));
    return bit_cast<float>(read32(p));
  default: {
    uint64_t bits = support::endian::read64le(p);
    return t.descr == "<i8" ? float(int64_t(bits))
                            : float(bit_cast<double>(bits));
  }
  }
}

Expected<NDArray> parseNpy(StringRef bytes, StringRef path, StringRef member) {
  auto bad = [&](const Twine &what) { return failMember(path, member, what); };
  if (!bytes.starts_with(StringRef(kNpyMagic, 6)) || bytes.size() < 10)
    return bad("not a .npy array (missing the \\x93NUMPY magic)");
  uint8_t major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = read16(bytes.data() + 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated .npy header");
    headerLen = read32(bytes.data() + 8);
    headerStart = 12;
  } else {
    return bad(formatv("unsupported .npy version {0}", unsigned(major)));
  }
  if (bytes.size() < headerStart + headerLen)
    return bad("truncated .npy header");
  StringRef header = bytes.substr(headerStart, headerLen);
  StringRef data = bytes.drop_front(headerStart + headerLen);

  std::optional<NpyHeader> parsed = parseNpyHeader(header);
  if (!parsed)
    return bad("malformed .npy header '" + header.rtrim() + "'");
  const DTypeInfo *type = find_if(
      kDTypes, [&](const DTypeInfo &t) { return t.descr == parsed->descr; });
  if (type == std::end(kDTypes))
    return bad("unsupported dtype '" + parsed->descr +
               "' (supported: <f4 <f2 <f8 <i8 <i4 |b1)");
  if (parsed->fortranOrder != "False")
    return bad("fortran_order arrays are not supported");

  NDArray array;
  array.dtype = type->name.str();
  uint64_t count = 1;
  for (StringRef d : parsed->shape) {
    uint64_t v;
    if (d.getAsInteger(10, v) || (v != 0 && count > (UINT64_MAX >> 8) / v))
      return bad("malformed shape item '" + d + "'");
    array.shape.push_back(int64_t(v));
    count *= v;
  }
  if (data.size() != count * type->size)
    return bad(formatv("{0} bytes of data for {1} elements of {2} ({3} "
                       "bytes)",
                       data.size(), count, array.dtype, count * type->size));
  array.data.resize(count);
  for (uint64_t i = 0; i < count; ++i)
    array.data[i] = decodeElement(*type, data.data() + i * type->size);
  return array;
}

/// What libzip says went wrong, for messages.
std::string zipMessage(zip_error_t *error) {
  return zip_error_strerror(error);
}

/// Owns an archive libzip opened (discarding it: nothing is written).
struct ArchiveCloser {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

/// Reads a member whole; libzip checks its CRC when the end is reached.
Expected<std::string> readMember(zip_t *archive, zip_uint64_t index,
                                 uint64_t size, StringRef path,
                                 StringRef member) {
  zip_file_t *file = zip_fopen_index(archive, index, 0);
  if (!file)
    return failMember(path, member,
                      "cannot read: " + zipMessage(zip_get_error(archive)));
  std::string out(size, '\0');
  uint64_t done = 0;
  zip_int64_t got = 0;
  char probe;
  // One read past the claimed size reaches the end, where the CRC is
  // checked, and catches a member longer than its claim.
  while (done < size &&
         (got = zip_fread(file, out.data() + done, size - done)) > 0)
    done += uint64_t(got);
  if (got >= 0)
    got = zip_fread(file, &probe, 1);
  std::string problem;
  if (got < 0) {
    zip_error_t *error = zip_file_get_error(file);
    problem = zip_error_code_zip(error) == ZIP_ER_CRC
                  ? "CRC mismatch (corrupt data)"
                  : "corrupt member data (" + zipMessage(error) + ")";
  } else if (done != size || got != 0) {
    problem = "corrupt member data (its size differs from the directory's)";
  }
  zip_fclose(file);
  if (!problem.empty())
    return failMember(path, member, problem);
  return out;
}

} // namespace

Expected<NDArrayMap> readNpz(StringRef path) {
  if (Error special = refuseSpecialFile(path))
    return std::move(special);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(path, "cannot open: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  // libzip opens an empty file as an empty archive; ours must hold arrays
  // (the smallest archive is its 22-byte end record).
  if (bytes.size() < 22)
    return fail(path, "not a zip archive (too short)");

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *source =
      zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) {
    std::string message = zipMessage(&error);
    zip_error_fini(&error);
    return fail(path, "cannot read: " + message);
  }
  Archive archive(zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS,
                                       &error));
  if (!archive) {
    int code = zip_error_code_zip(&error);
    std::string message = zipMessage(&error);
    zip_error_fini(&error);
    zip_source_free(source);
    if (code == ZIP_ER_NOZIP && !bytes.starts_with("PK"))
      return fail(path, "not a zip archive");
    return fail(path, "truncated or corrupt zip archive (" + message + ")");
  }
  zip_error_fini(&error);

  NDArrayMap arrays;
  zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive.get(), zip_uint64_t(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_METHOD))
      return fail(path, "corrupt zip central directory");
    StringRef name(st.name);
    if (!name.ends_with(".npy"))
      return failMember(path, name, "not a .npy member");
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.comp_size != st.size)
        return failMember(path, name, "corrupt stored member sizes");
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      // Deflate expands at most 1032:1; a larger claim is corrupt (and would
      // allocate the claimed size up front).
      if (st.size > st.comp_size * 1032 + 1024)
        return failMember(path, name,
                          formatv("claims {0} bytes from {1} compressed, more "
                                  "than deflate can produce",
                                  st.size, st.comp_size));
    } else {
      return failMember(path, name,
                        formatv("unsupported zip compression method {0}",
                                st.comp_method));
    }
    if (st.comp_size > bytes.size())
      return failMember(path, name, "truncated member data");
    Expected<std::string> content =
        readMember(archive.get(), zip_uint64_t(i), st.size, path, name);
    if (!content)
      return content.takeError();
    Expected<NDArray> array = parseNpy(*content, path, name);
    if (!array)
      return array.takeError();
    if (!arrays.emplace(name.drop_back(4).str(), std::move(*array)).second)
      return failMember(path, name, "appears twice in the archive");
  }
  return arrays;
}

namespace {

/// A .npy v1 float32 member, header padded to a multiple of 64 bytes.
std::string encodeNpy(const NDArray &a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  if (a.shape.size() == 1)
    shape += ",";
  shape += ")";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::string out(kNpyMagic, 6);
  out += '\x01';
  out += '\x00';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  for (float f : a.data) {
    char word[4];
    support::endian::write32le(word, bit_cast<uint32_t>(f));
    out.append(word, 4);
  }
  return out;
}

} // namespace

Error writeNpz(StringRef path, const NDArrayMap &arrays) {
  // libzip reads each member's bytes when the archive is closed.
  std::vector<std::string> members;
  for (const auto &[key, array] : arrays) {
    if (array.elements() != int64_t(array.data.size()))
      return fail(path, formatv("array '{0}' has {1} values for {2} elements",
                                key, array.data.size(), array.elements()));
    members.push_back(encodeNpy(array));
  }
  int code = 0;
  zip_t *archive = zip_open(path.str().c_str(), ZIP_CREATE | ZIP_TRUNCATE,
                            &code);
  auto failWrite = [&](zip_error_t *error) {
    std::string message = zipMessage(error);
    if (archive)
      zip_discard(archive);
    return fail(path, "cannot write: " + message);
  };
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    Error e = failWrite(&error);
    zip_error_fini(&error);
    return e;
  }
  size_t i = 0;
  for (const auto &[key, array] : arrays) {
    const std::string &npy = members[i++];
    zip_source_t *source =
        zip_source_buffer(archive, npy.data(), npy.size(), 0);
    zip_int64_t index =
        source ? zip_file_add(archive, (key + ".npy").c_str(), source,
                              ZIP_FL_ENC_UTF_8)
               : -1;
    if (index < 0) {
      if (source)
        zip_source_free(source);
      return failWrite(zip_get_error(archive));
    }
    // Stored (np.load reads it either way), dated 1980-01-01 so that the
    // bytes depend on the arrays alone.
    if (zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE,
                                 0) != 0 ||
        zip_file_set_dostime(archive, zip_uint64_t(index), 0, 0x21, 0) != 0)
      return failWrite(zip_get_error(archive));
  }
  if (zip_close(archive) != 0)
    return failWrite(zip_get_error(archive));
  return Error::success();
}

Deviation deviationFrom(ArrayRef<float> got, ArrayRef<float> want,
                        double minScale) {
  Deviation worst;
  double largestError = 0, scale = minScale;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    double g = got[i], w = want[i];
    if (std::isfinite(w))
      scale = std::max(scale, std::abs(w));
    bool agree = g == w;
    double error = agree ? 0
                   : std::isfinite(g) && std::isfinite(w)
                       ? std::abs(g - w)
                       : std::numeric_limits<double>::infinity();
    if (error > largestError) {
      largestError = error;
      worst.index = int64_t(i);
    }
  }
  worst.relative = largestError / scale;
  return worst;
}

} // namespace wafer::rt
