//===- NDArray.cpp - Host tensors and .npz files --------------------------===//
//
// An .npz is a zip archive of .npy members. The reader walks the central
// directory (numpy's writer forces zip64 *local* headers, whose size fields
// are placeholders, so sizes are taken from the central directory) and
// inflates deflated members with zlib. The writer stores members
// uncompressed, which numpy reads with np.load.
//
//===----------------------------------------------------------------------===//
#include "wafer/Runtime/NDArray.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <zlib.h>

#include <cstring>

using namespace llvm;

namespace wafer::rt {

int64_t NDArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndOfCentralDirSize = 22;
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

/// The value of `key` in a .npy header dict such as
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  if (rest.starts_with("'")) {
    size_t end = rest.find('\'', 1);
    return end == StringRef::npos ? std::nullopt
                                  : std::optional(rest.slice(1, end));
  }
  if (rest.starts_with("(")) {
    size_t end = rest.find(')');
    return end == StringRef::npos ? std::nullopt
                                  : std::optional(rest.slice(1, end));
  }
  size_t end = rest.find_first_of(",}");
  return rest.take_front(end).rtrim();
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

  std::optional<StringRef> descr = headerValue(header, "descr");
  std::optional<StringRef> fortran = headerValue(header, "fortran_order");
  std::optional<StringRef> shapeText = headerValue(header, "shape");
  if (!descr || !fortran || !shapeText)
    return bad("malformed .npy header '" + header.rtrim() + "'");
  const DTypeInfo *type =
      find_if(kDTypes, [&](const DTypeInfo &t) { return t.descr == *descr; });
  if (type == std::end(kDTypes))
    return bad("unsupported dtype '" + *descr +
               "' (supported: <f4 <f2 <f8 <i8 <i4 |b1)");
  if (*fortran != "False")
    return bad("fortran_order arrays are not supported");

  NDArray array;
  array.dtype = type->name.str();
  SmallVector<StringRef, 4> dims;
  shapeText->split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t count = 1;
  for (StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    uint64_t v;
    if (d.getAsInteger(10, v) || (v != 0 && count > (UINT64_MAX >> 8) / v))
      return bad("malformed shape '(" + *shapeText + ")'");
    array.shape.push_back(int64_t(v));
    count *= v;
  }
  if (data.size() < count * type->size)
    return bad(formatv("truncated data: {0} bytes for {1} elements of {2}",
                       data.size(), count, array.dtype));
  array.data.resize(count);
  for (uint64_t i = 0; i < count; ++i)
    array.data[i] = decodeElement(*type, data.data() + i * type->size);
  return array;
}

Expected<std::string> inflateMember(StringRef compressed, uint64_t size,
                                    StringRef path, StringRef member) {
  std::string out(size, '\0');
  z_stream zs{};
  // A negative window size selects a raw deflate stream, as zip stores it.
  if (inflateInit2(&zs, -15) != Z_OK)
    return failMember(path, member, "cannot initialize zlib");
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
  zs.avail_in = uInt(compressed.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = uInt(out.size());
  int rc = inflate(&zs, Z_FINISH);
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != size)
    return failMember(path, member, "corrupt deflate data");
  return out;
}

} // namespace

Expected<NDArrayMap> readNpz(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(path, "cannot open: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();

  // The end-of-central-directory record sits in the last 22 + 65535 bytes
  // (a trailing archive comment may follow it).
  if (bytes.size() < kEndOfCentralDirSize)
    return fail(path, "not a zip archive (too short)");
  size_t eocd = StringRef::npos;
  size_t lowest = bytes.size() > kEndOfCentralDirSize + 0xffff
                      ? bytes.size() - kEndOfCentralDirSize - 0xffff
                      : 0;
  for (size_t at = bytes.size() - kEndOfCentralDirSize + 1; at-- > lowest;)
    if (read32(bytes.data() + at) == kEndOfCentralDirSig) {
      eocd = at;
      break;
    }
  if (eocd == StringRef::npos)
    return fail(path, bytes.starts_with("PK")
                          ? "truncated or corrupt zip archive (no end of "
                            "central directory)"
                          : "not a zip archive");
  const char *e = bytes.data() + eocd;
  uint16_t entries = read16(e + 10);
  uint32_t dirSize = read32(e + 12), dirOffset = read32(e + 16);
  if (entries == 0xffff || dirSize == 0xffffffff || dirOffset == 0xffffffff)
    return fail(path, "zip64 archives are not supported");
  if (uint64_t(dirOffset) + dirSize > eocd)
    return fail(path, "truncated or corrupt zip archive (central directory "
                      "out of bounds)");

  NDArrayMap arrays;
  size_t at = dirOffset;
  for (unsigned i = 0; i < entries; ++i) {
    if (at + kCentralHeaderSize > eocd ||
        read32(bytes.data() + at) != kCentralHeaderSig)
      return fail(path, "corrupt zip central directory");
    const char *h = bytes.data() + at;
    uint16_t method = read16(h + 10);
    uint32_t crc = read32(h + 16);
    uint32_t compSize = read32(h + 20), size = read32(h + 24);
    uint16_t nameLen = read16(h + 28), extraLen = read16(h + 30),
             commentLen = read16(h + 32);
    uint32_t localOffset = read32(h + 42);
    if (at + kCentralHeaderSize + nameLen > eocd)
      return fail(path, "corrupt zip central directory");
    StringRef name(h + kCentralHeaderSize, nameLen);
    at += kCentralHeaderSize + nameLen + extraLen + commentLen;
    if (compSize == 0xffffffff || size == 0xffffffff ||
        localOffset == 0xffffffff)
      return failMember(path, name, "zip64 members are not supported");
    if (!name.ends_with(".npy"))
      return failMember(path, name, "not a .npy member");

    if (uint64_t(localOffset) + kLocalHeaderSize > bytes.size() ||
        read32(bytes.data() + localOffset) != kLocalHeaderSig)
      return failMember(path, name, "corrupt local zip header");
    const char *l = bytes.data() + localOffset;
    uint64_t dataStart = uint64_t(localOffset) + kLocalHeaderSize +
                         read16(l + 26) + read16(l + 28);
    if (dataStart + compSize > bytes.size())
      return failMember(path, name, "truncated member data");
    StringRef stored = bytes.substr(dataStart, compSize);

    std::string inflated;
    StringRef content;
    if (method == 0) {
      if (compSize != size)
        return failMember(path, name, "corrupt stored member sizes");
      content = stored;
    } else if (method == 8) {
      // Deflate expands at most 1032:1; a larger claim is corrupt (and would
      // allocate the claimed size up front).
      if (uint64_t(size) > uint64_t(compSize) * 1032 + 1024)
        return failMember(path, name,
                          formatv("claims {0} bytes from {1} compressed, more "
                                  "than deflate can produce",
                                  size, compSize));
      Expected<std::string> out = inflateMember(stored, size, path, name);
      if (!out)
        return out.takeError();
      inflated = std::move(*out);
      content = inflated;
    } else {
      return failMember(
          path, name,
          formatv("unsupported zip compression method {0}", method));
    }
    uLong actualCrc = crc32(0, reinterpret_cast<const Bytef *>(content.data()),
                            uInt(content.size()));
    if (actualCrc != crc)
      return failMember(path, name, "CRC mismatch (corrupt data)");

    Expected<NDArray> array = parseNpy(content, path, name);
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

void put16(raw_ostream &os, uint16_t v) {
  char b[2];
  support::endian::write16le(b, v);
  os.write(b, 2);
}
void put32(raw_ostream &os, uint32_t v) {
  char b[4];
  support::endian::write32le(b, v);
  os.write(b, 4);
}

} // namespace

Error writeNpz(StringRef path, const NDArrayMap &arrays) {
  struct Member {
    std::string name;
    uint32_t crc, size, offset;
  };
  if (arrays.size() >= 0xffff)
    return fail(path, "too many arrays for a zip without zip64");
  std::vector<Member> members;
  std::string body;
  for (const auto &[key, array] : arrays) {
    if (array.elements() != int64_t(array.data.size()))
      return fail(path, formatv("array '{0}' has {1} values for {2} elements",
                                key, array.data.size(), array.elements()));
    std::string npy = encodeNpy(array);
    Member m{key + ".npy", 0, uint32_t(npy.size()), uint32_t(body.size())};
    if (body.size() + npy.size() > 0xfffffffeu)
      return fail(path, "too large for a zip without zip64");
    m.crc = uint32_t(crc32(0, reinterpret_cast<const Bytef *>(npy.data()),
                           uInt(npy.size())));
    raw_string_ostream os(body);
    put32(os, kLocalHeaderSig);
    put16(os, 20);   // version needed: 2.0
    put16(os, 0);    // flags
    put16(os, 0);    // method: stored
    put16(os, 0);    // time
    put16(os, 0x21); // date: 1980-01-01
    put32(os, m.crc);
    put32(os, m.size);
    put32(os, m.size);
    put16(os, uint16_t(m.name.size()));
    put16(os, 0);
    os << m.name << npy;
    members.push_back(std::move(m));
  }

  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return fail(path, "cannot write: " + ec.message());
  os << body;
  uint32_t dirOffset = uint32_t(body.size());
  uint64_t dirSize = 0;
  for (const Member &m : members) {
    put32(os, kCentralHeaderSig);
    put16(os, 20); // made by
    put16(os, 20); // needed
    put16(os, 0);
    put16(os, 0);
    put16(os, 0);
    put16(os, 0x21);
    put32(os, m.crc);
    put32(os, m.size);
    put32(os, m.size);
    put16(os, uint16_t(m.name.size()));
    put16(os, 0); // extra
    put16(os, 0); // comment
    put16(os, 0); // disk
    put16(os, 0); // internal attributes
    put32(os, 0); // external attributes
    put32(os, m.offset);
    os << m.name;
    dirSize += kCentralHeaderSize + m.name.size();
  }
  put32(os, kEndOfCentralDirSig);
  put16(os, 0);
  put16(os, 0);
  put16(os, uint16_t(members.size()));
  put16(os, uint16_t(members.size()));
  put32(os, uint32_t(dirSize));
  put32(os, dirOffset);
  put16(os, 0);
  os.close();
  if (os.has_error()) {
    std::string msg = os.error().message();
    os.clear_error();
    return fail(path, "cannot write: " + msg);
  }
  return Error::success();
}

} // namespace wafer::rt
