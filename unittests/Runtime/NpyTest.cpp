//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
//
// Checked against NumPy itself (Debian's python3-numpy): NumPy writes files
// that the runtime reads, and NumPy loads files that the runtime writes.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace pipe_rt;
namespace fs = std::filesystem;

namespace {

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("pipe-npy-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string file(const std::string &name) { return (dir / name).string(); }

  /// Runs a Python snippet with numpy imported and `d` the test folder.
  int python(const std::string &code) {
    std::string script = file("script.py");
    std::ofstream(script) << "import sys, numpy as np\nd = sys.argv[1]\n"
                          << code << "\n";
    std::string command =
        "/usr/bin/python3 '" + script + "' '" + dir.string() + "'";
    return std::system(command.c_str());
  }

  template <typename T> static std::vector<T> values(const NpyArray &array) {
    std::vector<T> result(array.data.size() / sizeof(T));
    std::memcpy(result.data(), array.data.data(), array.data.size());
    return result;
  }

  fs::path dir;
};

TEST_F(NpyTest, ReadsWhatNumPyWrites) {
  ASSERT_EQ(python(R"(
np.save(d + '/f32.npy', np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
np.save(d + '/f64.npy', np.array([1.5, -2.25]))
np.save(d + '/i64.npy', np.array([[1], [-2], [3]], dtype=np.int64))
np.save(d + '/i32.npy', np.array(7, dtype=np.int32))
np.save(d + '/bool.npy', np.array([True, False, True]))
np.save(d + '/fortran.npy', np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save(d + '/big.npy', np.arange(3, dtype='>i8'))
np.save(d + '/empty.npy', np.zeros((0, 4), dtype=np.float32))
np.lib.format.write_array(open(d + '/v2.npy', 'wb'), np.arange(4, dtype=np.int32), version=(2, 0))
)"),
            0);
  NpyArray array;
  ASSERT_EQ(readNpy(file("f32.npy"), array), "");
  EXPECT_EQ(array.dtype, DType::F32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(array),
            (std::vector<float>{0, 0.25, 0.5, 0.75, 1, 1.25}));

  ASSERT_EQ(readNpy(file("f64.npy"), array), "");
  EXPECT_EQ(array.dtype, DType::F64);
  EXPECT_EQ(values<double>(array), (std::vector<double>{1.5, -2.25}));

  ASSERT_EQ(readNpy(file("i64.npy"), array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(values<int64_t>(array), (std::vector<int64_t>{1, -2, 3}));

  ASSERT_EQ(readNpy(file("i32.npy"), array), "");
  EXPECT_EQ(array.dtype, DType::I32);
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(values<int32_t>(array), (std::vector<int32_t>{7}));

  ASSERT_EQ(readNpy(file("bool.npy"), array), "");
  EXPECT_EQ(array.dtype, DType::Bool);
  EXPECT_EQ(values<uint8_t>(array), (std::vector<uint8_t>{1, 0, 1}));

  // Fortran order and big-endian data come back in C order, little-endian.
  ASSERT_EQ(readNpy(file("fortran.npy"), array), "");
  EXPECT_EQ(values<float>(array), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(readNpy(file("big.npy"), array), "");
  EXPECT_EQ(values<int64_t>(array), (std::vector<int64_t>{0, 1, 2}));

  ASSERT_EQ(readNpy(file("empty.npy"), array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(array.data.empty());

  ASSERT_EQ(readNpy(file("v2.npy"), array), "");
  EXPECT_EQ(values<int32_t>(array), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST_F(NpyTest, NumPyReadsWhatTheRuntimeWrites) {
  NpyArray f32{DType::F32, {2, 2}, {}};
  float floats[] = {1.0f, -2.5f, 3.25f, 0.0f};
  f32.data.assign(reinterpret_cast<char *>(floats),
                  reinterpret_cast<char *>(floats) + sizeof(floats));
  ASSERT_EQ(writeNpy(file("f32.npy"), f32), "");

  NpyArray i64{DType::I64, {3}, {}};
  int64_t ints[] = {-1, 0, 1LL << 40};
  i64.data.assign(reinterpret_cast<char *>(ints),
                  reinterpret_cast<char *>(ints) + sizeof(ints));
  ASSERT_EQ(writeNpy(file("i64.npy"), i64), "");

  NpyArray flags{DType::Bool, {}, {1}};
  ASSERT_EQ(writeNpy(file("bool.npy"), flags), "");

  EXPECT_EQ(python(R"(
a = np.load(d + '/f32.npy'); assert a.dtype == np.float32 and a.tolist() == [[1.0, -2.5], [3.25, 0.0]], a
b = np.load(d + '/i64.npy'); assert b.dtype == np.int64 and b.tolist() == [-1, 0, 1 << 40], b
c = np.load(d + '/bool.npy'); assert c.dtype == np.bool_ and c.shape == () and bool(c), c
with open(d + '/f32.npy', 'rb') as f: assert len(f.read()) % 64 == 16, 'data must start 64-aligned'
)"),
            0);
  // Nothing but the outputs is left behind.
  int count = 0;
  for (const auto &entry : fs::directory_iterator(dir))
    count += entry.path().extension() == ".npy";
  EXPECT_EQ(count, 3);
}

TEST_F(NpyTest, ReportsBadFiles) {
  NpyArray array;
  EXPECT_NE(readNpy(file("missing.npy"), array).find("cannot open"),
            std::string::npos);
  std::ofstream(file("magic.npy")) << "not numpy at all";
  EXPECT_NE(readNpy(file("magic.npy"), array).find("bad magic"),
            std::string::npos);
  ASSERT_EQ(python(R"(
np.save(d + '/c64.npy', np.zeros(2, dtype=np.complex64))
np.save(d + '/ok.npy', np.arange(8, dtype=np.float32))
data = open(d + '/ok.npy', 'rb').read()
open(d + '/short.npy', 'wb').write(data[:-4])
open(d + '/long.npy', 'wb').write(data + b'x')
)"),
            0);
  EXPECT_NE(readNpy(file("c64.npy"), array).find("unsupported dtype '<c8'"),
            std::string::npos);
  std::string error = readNpy(file("short.npy"), array);
  EXPECT_NE(error.find("short.npy"), std::string::npos);
  EXPECT_NE(error.find("shorter than shape (8,)"), std::string::npos);
  EXPECT_NE(readNpy(file("long.npy"), array).find("trailing bytes"),
            std::string::npos);
}

TEST_F(NpyTest, WriteReplacesAtomically) {
  NpyArray first{DType::I32, {1}, {1, 0, 0, 0}};
  NpyArray second{DType::I32, {2}, {2, 0, 0, 0, 3, 0, 0, 0}};
  ASSERT_EQ(writeNpy(file("out.npy"), first), "");
  ASSERT_EQ(writeNpy(file("out.npy"), second), "");
  NpyArray read;
  ASSERT_EQ(readNpy(file("out.npy"), read), "");
  EXPECT_EQ(read.shape, (std::vector<int64_t>{2}));
  // A write that cannot happen leaves no file.
  EXPECT_NE(writeNpy(file("no/such/folder/x.npy"), first), "");
  EXPECT_FALSE(fs::exists(file("no/such/folder/x.npy")));
  // Data that does not fit the shape is refused before anything is written.
  NpyArray wrong{DType::F32, {3}, {0, 0, 0, 0}};
  EXPECT_NE(writeNpy(file("wrong.npy"), wrong).find("12 expected"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(file("wrong.npy")));
}

TEST(CountMicrobatches, ExactShapeAndStackedRows) {
  std::string error;
  NpyArray one{DType::F32, {4, 8}, {}};
  EXPECT_EQ(countMicrobatches("x", one, DType::F32, {4, 8}, error), 1);
  NpyArray three{DType::F32, {12, 8}, {}};
  EXPECT_EQ(countMicrobatches("x", three, DType::F32, {4, 8}, error), 3);
  EXPECT_TRUE(error.empty());
}

TEST(CountMicrobatches, NamesTheInput) {
  std::string error;
  NpyArray ints{DType::I64, {4, 8}, {}};
  EXPECT_EQ(countMicrobatches("tokens", ints, DType::I32, {4, 8}, error), 0);
  EXPECT_EQ(error, "input 'tokens' must be int32, got int64");
  NpyArray ragged{DType::F32, {6, 8}, {}};
  EXPECT_EQ(countMicrobatches("x", ragged, DType::F32, {4, 8}, error), 0);
  EXPECT_EQ(error, "input 'x' has shape (6, 8); expected (4, 8) or k*4 rows "
                   "of it along axis 0");
  NpyArray wide{DType::F32, {4, 9}, {}};
  EXPECT_EQ(countMicrobatches("x", wide, DType::F32, {4, 8}, error), 0);
}

} // namespace
