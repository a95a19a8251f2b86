//===- NDArrayTest.cpp - .npz reading and writing -------------------------===//
#include "wafer/Runtime/NDArray.h"

#include "TestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace wafer::rt;
using wafer::rt::test::errorOf;

namespace {

class Npz : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wafer-npz", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  void writeBytes(llvm::StringRef name, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file(name), ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }

  /// Runs Debian's python (which sees numpy) on a script; false when it is
  /// unavailable, so the numpy cross-checks can be skipped.
  bool python(const std::string &script) {
    llvm::ErrorOr<std::string> exe =
        llvm::sys::findProgramByName("python3", {"/usr/bin"});
    if (!exe)
      return false;
    std::string path = file("script.py");
    writeBytes("script.py", script);
    std::string errText;
    int rc = llvm::sys::ExecuteAndWait(*exe, {*exe, path}, std::nullopt, {}, 0,
                                       0, &errText);
    if (rc == 3)
      return false; // numpy missing
    EXPECT_EQ(rc, 0) << script << errText;
    return rc == 0;
  }

  llvm::SmallString<128> dir;
};

NDArray array(std::vector<int64_t> shape, std::vector<float> data) {
  NDArray a;
  a.shape = std::move(shape);
  a.data = std::move(data);
  return a;
}

TEST_F(Npz, RoundTrip) {
  NDArrayMap in;
  in["matrix"] = array({2, 3}, {1, 2, 3, 4, 5, -6.5f});
  in["vector"] = array({4}, {0.25f, 1e-30f, -0.0f, 3e38f});
  in["scalar"] = array({}, {42});
  in["empty"] = array({0, 3}, {});
  ASSERT_EQ(errorOf(writeNpz(file("a.npz"), in)), "");
  llvm::Expected<NDArrayMap> out = readNpz(file("a.npz"));
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), in.size());
  for (const auto &[name, a] : in) {
    EXPECT_EQ(out->at(name).shape, a.shape) << name;
    EXPECT_EQ(out->at(name).data, a.data) << name;
    EXPECT_EQ(out->at(name).dtype, "float32");
  }
}

TEST_F(Npz, NumpyReadsWhatWeWrite) {
  NDArrayMap in;
  in["w"] = array({2, 2}, {1.5f, -2, 3, 4});
  in["s"] = array({}, {7});
  ASSERT_EQ(errorOf(writeNpz(file("ours.npz"), in)), "");
  if (!python("import sys\n"
              "try:\n  import numpy as np\nexcept ImportError:\n  sys.exit(3)\n"
              "d = np.load('" +
              file("ours.npz") +
              "')\n"
              "assert d['w'].dtype == np.float32 and d['w'].shape == (2, 2)\n"
              "assert d['w'].tolist() == [[1.5, -2.0], [3.0, 4.0]]\n"
              "assert d['s'].shape == () and float(d['s']) == 7.0\n"))
    GTEST_SKIP() << "no numpy under /usr/bin/python3";
}

TEST_F(Npz, ReadsWhatNumpyWrites) {
  std::string script =
      "import sys\n"
      "try:\n  import numpy as np\nexcept ImportError:\n  sys.exit(3)\n"
      "arrays = dict(f4=np.arange(6, dtype=np.float32).reshape(2, 3) / 4,\n"
      "  f2=np.array([0.5, -2, 65504, 6e-8], dtype=np.float16),\n"
      "  f8=np.array([[1.25], [-3]], dtype=np.float64),\n"
      "  i8=np.array([-5, 7], dtype=np.int64),\n"
      "  i4=np.array([3], dtype=np.int32),\n"
      "  b1=np.array([True, False]),\n"
      "  sc=np.float32(2.5))\n"
      "np.savez('" +
      file("plain.npz") +
      "', **arrays)\n"
      "np.savez_compressed('" +
      file("packed.npz") + "', **arrays)\n";
  if (!python(script))
    GTEST_SKIP() << "no numpy under /usr/bin/python3";
  for (const char *name : {"plain.npz", "packed.npz"}) {
    llvm::Expected<NDArrayMap> got = readNpz(file(name));
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    const NDArrayMap &m = *got;
    EXPECT_EQ(m.at("f4").shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(m.at("f4").data,
              (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f}));
    EXPECT_EQ(m.at("f2").dtype, "float16");
    EXPECT_EQ(m.at("f2").data[0], 0.5f);
    EXPECT_EQ(m.at("f2").data[1], -2.0f);
    EXPECT_EQ(m.at("f2").data[2], 65504.0f);
    EXPECT_NEAR(m.at("f2").data[3], 5.96e-8f, 1e-9f); // subnormal half
    EXPECT_EQ(m.at("f8").dtype, "float64");
    EXPECT_EQ(m.at("f8").data, (std::vector<float>{1.25f, -3}));
    EXPECT_EQ(m.at("i8").data, (std::vector<float>{-5, 7}));
    EXPECT_EQ(m.at("i4").dtype, "int32");
    EXPECT_EQ(m.at("b1").data, (std::vector<float>{1, 0}));
    EXPECT_TRUE(m.at("sc").shape.empty());
    EXPECT_EQ(m.at("sc").data, (std::vector<float>{2.5f}));
  }
}

TEST_F(Npz, Errors) {
  NDArrayMap in;
  in["x"] = array({64}, std::vector<float>(64, 1.0f));
  ASSERT_EQ(errorOf(writeNpz(file("good.npz"), in)), "");
  auto bytes = llvm::MemoryBuffer::getFile(file("good.npz"));
  ASSERT_TRUE(bool(bytes));
  llvm::StringRef whole = (*bytes)->getBuffer();

  // Truncations anywhere give an error naming the file, never a crash.
  for (size_t keep : {size_t(0), size_t(10), size_t(100), whole.size() - 30,
                      whole.size() - 1}) {
    writeBytes("cut.npz", whole.take_front(keep));
    std::string msg = errorOf(readNpz(file("cut.npz")));
    EXPECT_NE(msg.find("cut.npz"), std::string::npos) << keep << ": " << msg;
  }
  // A flipped data byte is caught by the CRC.
  std::string corrupt = whole.str();
  corrupt[120] ^= 0x55;
  writeBytes("crc.npz", corrupt);
  EXPECT_EQ(errorOf(readNpz(file("crc.npz"))),
            "'" + file("crc.npz") +
                "', member 'x.npy': CRC mismatch (corrupt data)");

  writeBytes("text.npz", "hello, this is not an archive at all");
  EXPECT_EQ(errorOf(readNpz(file("text.npz"))),
            "'" + file("text.npz") + "': not a zip archive");
  EXPECT_NE(errorOf(readNpz(file("missing.npz"))).find("cannot open"),
            std::string::npos);

  NDArrayMap bad;
  bad["y"] = array({2, 2}, {1, 2, 3});
  EXPECT_NE(errorOf(writeNpz(file("bad.npz"), bad)), "");
}

TEST_F(Npz, RejectsForeignMembersAndFortranOrder) {
  std::string script =
      "import sys, zipfile\n"
      "try:\n  import numpy as np\nexcept ImportError:\n  sys.exit(3)\n"
      "with zipfile.ZipFile('" +
      file("txt.npz") +
      "', 'w') as z:\n"
      "  z.writestr('notes.txt', 'hi')\n"
      "np.savez('" +
      file("fortran.npz") +
      "', m=np.asfortranarray(np.ones((2, 3), dtype=np.float32)))\n"
      "np.savez('" +
      file("u8.npz") + "', m=np.ones(3, dtype=np.uint8))\n";
  if (!python(script))
    GTEST_SKIP() << "no numpy under /usr/bin/python3";
  EXPECT_EQ(errorOf(readNpz(file("txt.npz"))),
            "'" + file("txt.npz") + "', member 'notes.txt': not a .npy member");
  EXPECT_EQ(errorOf(readNpz(file("fortran.npz"))),
            "'" + file("fortran.npz") +
                "', member 'm.npy': fortran_order arrays are not supported");
  EXPECT_NE(errorOf(readNpz(file("u8.npz"))).find("unsupported dtype '|u1'"),
            std::string::npos);
}

TEST_F(Npz, ReadsZip64Archives) {
  // More members than a zip without zip64 can count (65535): Python writes
  // the zip64 end records, as it would for a member over 4 GB.
  std::string script =
      "import io, sys, zipfile\n"
      "try:\n  import numpy as np\nexcept ImportError:\n  sys.exit(3)\n"
      "buf = io.BytesIO()\n"
      "np.save(buf, np.arange(3, dtype=np.float32))\n"
      "with zipfile.ZipFile('" +
      file("many.npz") +
      "', 'w') as z:\n"
      "  for i in range(70000):\n"
      "    z.writestr('a%d.npy' % i, buf.getvalue())\n";
  if (!python(script))
    GTEST_SKIP() << "no numpy under /usr/bin/python3";
  llvm::Expected<NDArrayMap> got = readNpz(file("many.npz"));
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  EXPECT_EQ(got->size(), 70000u);
  EXPECT_EQ(got->at("a69999").data, (std::vector<float>{0, 1, 2}));
}

} // namespace

TEST(Deviation, NaNsAndUnmatchedInfinitiesFail) {
  float nan = std::numeric_limits<float>::quiet_NaN(),
        inf = std::numeric_limits<float>::infinity();
  // The overflow case a probe found: every value NaN against zeros passed
  // `--check` (std::max drops NaN).
  Deviation d = deviationFrom({nan, nan}, {0, 0}, 1e-30);
  EXPECT_TRUE(std::isinf(d.relative));
  EXPECT_EQ(d.index, 0);
  EXPECT_TRUE(std::isinf(deviationFrom({1, inf}, {1, 2}, 1).relative));
  EXPECT_EQ(deviationFrom({1, inf}, {1, 2}, 1).index, 1);
  EXPECT_TRUE(std::isinf(deviationFrom({1, 5}, {1, nan}, 1).relative));
  // A NaN on both sides checks nothing (a probe's NaN attention scale
  // passed `--check` with every logit NaN).
  d = deviationFrom({1, nan}, {1, nan}, 1e-30);
  EXPECT_TRUE(std::isinf(d.relative));
  EXPECT_EQ(d.index, 1);
  // Agreeing infinities, and the scale from finite values only.
  d = deviationFrom({-inf, 3}, {-inf, 4}, 1e-30);
  EXPECT_DOUBLE_EQ(d.relative, 0.25);
  EXPECT_EQ(d.index, 1);
  d = deviationFrom({0, 0}, {0, 0}, 1e-30);
  EXPECT_EQ(d.relative, 0);
  EXPECT_EQ(d.index, -1);
  EXPECT_DOUBLE_EQ(deviationFrom({0.5f}, {0}, 1).relative, 0.5);
}
