//===- Reference.h - CPU kernels against NumPy / torch references -*- C++ -*-=//
//
// A test suite runs one Python script (Debian's /usr/bin/python3 with numpy
// and torch) that draws inputs with a fixed seed, computes the expected
// outputs and saves both as .npy files into a temporary folder: array A of
// case C of kernel K is `K.C.A.npy`, and `K.cases` lists K's cases. Floating
// inputs are float32 values held in float64, so the same files test both
// instantiations; references are computed in float64.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_UNITTESTS_RUNTIMECPU_REFERENCE_H
#define PIPE_UNITTESTS_RUNTIMECPU_REFERENCE_H

#include "Kernels.h"
#include "Npy.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

namespace reference {

/// One saved array.
struct Array {
  pipe_rt::NpyArray npy;

  const std::vector<int64_t> &shape() const { return npy.shape; }
  int rank() const { return int(npy.shape.size()); }
  int64_t size() const { return npy.numElements(); }
  const void *bytes() const { return npy.data.data(); }
  size_t elementSize() const { return pipe_rt::dtypeSize(npy.dtype); }

  /// The elements converted to T.
  template <typename T> std::vector<T> as() const {
    std::vector<T> result(size());
    for (int64_t i = 0; i < size(); ++i)
      result[i] = element<T>(i);
    return result;
  }
  template <typename T> T scalar() const { return element<T>(0); }

private:
  template <typename T> T element(int64_t i) const {
    const char *p = npy.data.data();
    switch (npy.dtype) {
    case pipe_rt::DType::F32:
      return T(load<float>(p, i));
    case pipe_rt::DType::F64:
      return T(load<double>(p, i));
    case pipe_rt::DType::I64:
      return T(load<int64_t>(p, i));
    case pipe_rt::DType::I32:
      return T(load<int32_t>(p, i));
    case pipe_rt::DType::Bool:
      return T(load<uint8_t>(p, i));
    }
    return T();
  }
  template <typename S> static S load(const char *p, int64_t i) {
    S value;
    std::memcpy(&value, p + i * sizeof(S), sizeof(S));
    return value;
  }
};

/// The outputs of one reference script.
class Reference {
public:
  /// Runs the prelude (numpy as np, torch, F = torch.nn.functional, the
  /// helpers rand/t/save) followed by `code` in a fresh folder.
  Reference(const std::string &suite, const std::string &code);
  ~Reference();

  /// Empty when the script ran, else what went wrong.
  const std::string &error() const { return failure; }

  /// One case of `kernel`: its arrays by name.
  struct Case {
    const Reference *ref;
    std::string kernel, name;

    bool has(const std::string &array) const;
    Array operator[](const std::string &array) const;
    int64_t integer(const std::string &array) const {
      return (*this)[array].scalar<int64_t>();
    }
    double real(const std::string &array) const {
      return (*this)[array].scalar<double>();
    }
    std::vector<int64_t> ints(const std::string &array) const {
      return (*this)[array].as<int64_t>();
    }
  };

  /// The cases of `kernel`, in the order the script saved them.
  std::vector<Case> cases(const std::string &kernel) const;

private:
  std::string path(const std::string &file) const;
  std::filesystem::path dir;
  std::string failure;
};

/// Tolerances: rtol 1e-5 / atol 1e-6 for float, 1e-10 for double.
template <typename T> constexpr double rtol() {
  return std::is_same<T, float>::value ? 1e-5 : 1e-10;
}
template <typename T> constexpr double atol() {
  return std::is_same<T, float>::value ? 1e-6 : 1e-10;
}
template <typename T> const char *typeName() {
  return std::is_same<T, float>::value     ? "float"
         : std::is_same<T, double>::value  ? "double"
         : std::is_same<T, int32_t>::value ? "int32"
                                           : "int64";
}

/// Whether `got` matches `want` elementwise: |got - want| <= atol + rtol *
/// |want| (exact for integers); NaN matches NaN, infinities match
/// themselves.
template <typename T>
::testing::AssertionResult near(const std::vector<T> &got, const Array &want) {
  std::vector<double> expected = want.as<double>();
  if (int64_t(got.size()) != int64_t(expected.size()))
    return ::testing::AssertionFailure()
           << typeName<T>() << ": " << got.size() << " elements, expected "
           << expected.size();
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = double(got[i]), w = expected[i];
    bool ok;
    if (std::isnan(w) || std::isinf(w))
      ok = std::isnan(w) ? std::isnan(g) : g == w;
    else if (std::is_integral<T>::value)
      ok = g == w;
    else
      ok = std::fabs(g - w) <= atol<T>() + rtol<T>() * std::fabs(w);
    if (!ok && bad++ == 0)
      first = int64_t(i);
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << typeName<T>() << ": " << bad << " of " << got.size()
         << " elements differ; first at flat index " << first << ": got "
         << double(got[first]) << ", expected " << expected[first];
}

/// Whether the bytes at `got` equal the data of `want`.
::testing::AssertionResult sameBytes(const std::vector<char> &got,
                                     const Array &want);

} // namespace reference

/// Declares fixture `Name` whose suite runs `Script` once.
#define PIPE_REFERENCE_FIXTURE(Name, Script)                                   \
  class Name : public ::testing::Test {                                        \
  protected:                                                                   \
    static void SetUpTestSuite() {                                             \
      ref = new reference::Reference(#Name, Script);                           \
    }                                                                          \
    static void TearDownTestSuite() {                                          \
      delete ref;                                                              \
      ref = nullptr;                                                           \
    }                                                                          \
    void SetUp() override { ASSERT_EQ(ref->error(), ""); }                     \
    static std::vector<reference::Reference::Case>                             \
    cases(const std::string &kernel) {                                         \
      std::vector<reference::Reference::Case> result = ref->cases(kernel);     \
      EXPECT_FALSE(result.empty()) << "no cases for " << kernel;               \
      return result;                                                           \
    }                                                                          \
    static reference::Reference *ref;                                          \
  };                                                                           \
  reference::Reference *Name::ref = nullptr;

#endif // PIPE_UNITTESTS_RUNTIMECPU_REFERENCE_H
