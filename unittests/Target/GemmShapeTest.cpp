//===- GemmShapeTest.cpp - numpy matmuls as GEMM call sites ---------------===//
//
// Runs the products a site describes (matmulGemmShape) on the host, as the
// CUDA runtime's sites run them, and compares them with numpy matmul
// computed here independently, from the broadcast index of every result
// element.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CUDA/GemmShape.h"

#include "gtest/gtest.h"

#include <vector>

using namespace mlir;
using namespace mlir::pipe;

namespace {

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

/// numpy's matmul result shape, with 1-D promotion.
std::vector<int64_t> matmulShape(std::vector<int64_t> a,
                                 std::vector<int64_t> b) {
  bool rowA = a.size() == 1, colB = b.size() == 1;
  if (rowA)
    a.insert(a.begin(), 1);
  if (colB)
    b.push_back(1);
  size_t batch = std::max(a.size(), b.size()) - 2;
  std::vector<int64_t> y(batch);
  for (size_t d = 0; d < batch; ++d) {
    int64_t da = int64_t(d) - int64_t(batch - (a.size() - 2));
    int64_t db = int64_t(d) - int64_t(batch - (b.size() - 2));
    int64_t ea = da >= 0 ? a[da] : 1, eb = db >= 0 ? b[db] : 1;
    y[d] = std::max(ea, eb);
  }
  if (!rowA)
    y.push_back(a[a.size() - 2]);
  if (!colB)
    y.push_back(b.back());
  return y;
}

/// numpy matmul, element by element: every result element's row-major
/// index decomposed into batch, row and column, each operand's batch index
/// broadcast from it.
std::vector<double> numpyMatmul(std::vector<int64_t> a, std::vector<int64_t> b,
                                const std::vector<double> &x,
                                const std::vector<double> &w) {
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  size_t batch = std::max(a.size(), b.size()) - 2;
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  std::vector<int64_t> dims(batch);
  for (size_t d = 0; d < batch; ++d) {
    int64_t da = int64_t(d) - int64_t(batch - (a.size() - 2));
    int64_t db = int64_t(d) - int64_t(batch - (b.size() - 2));
    dims[d] = std::max(da >= 0 ? a[da] : 1, db >= 0 ? b[db] : 1);
  }
  int64_t batches = product(dims);
  std::vector<double> y(batches * m * n, 0.0);
  for (int64_t t = 0; t < batches; ++t) {
    // The operands' batch offsets: each dimension's index, broadcast.
    int64_t offsetA = 0, offsetB = 0, strideA = m * k, strideB = k * n;
    int64_t rest = t;
    for (int64_t d = int64_t(batch) - 1; d >= 0; --d) {
      int64_t index = rest % dims[d];
      rest /= dims[d];
      int64_t da = d - int64_t(batch - (a.size() - 2));
      int64_t db = d - int64_t(batch - (b.size() - 2));
      int64_t ea = da >= 0 ? a[da] : 1, eb = db >= 0 ? b[db] : 1;
      offsetA += (ea == 1 ? 0 : index) * strideA;
      offsetB += (eb == 1 ? 0 : index) * strideB;
      strideA *= ea;
      strideB *= eb;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += x[offsetA + i * k + p] * w[offsetB + p * n + j];
        y[(t * m + i) * n + j] = sum;
      }
  }
  return y;
}

/// The products of a site, as runtime/cuda/Gemm.cu runs them.
std::vector<double> runSite(const GemmShape &site, const std::vector<double> &x,
                            const std::vector<double> &w, int64_t size) {
  std::vector<double> y(size, 0.0);
  for (int64_t o = 0; o < site.outer.count; ++o)
    for (int64_t b = 0; b < site.inner.count; ++b) {
      const double *a = x.data() + o * site.outer.a + b * site.inner.a;
      const double *c = w.data() + o * site.outer.b + b * site.inner.b;
      double *out = y.data() + o * site.outer.y + b * site.inner.y;
      for (int64_t i = 0; i < site.m; ++i)
        for (int64_t j = 0; j < site.n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < site.k; ++p)
            sum += a[i * site.k + p] * c[p * site.n + j];
          out[i * site.n + j] = sum;
        }
    }
  return y;
}

void expectSiteIsMatmul(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::vector<int64_t> y = matmulShape(a, b);
  std::optional<GemmShape> site = matmulGemmShape(a, b, y);
  ASSERT_TRUE(site);
  std::vector<double> x(product(a)), w(product(b));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = double((i * 7) % 11) - 5;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = double((i * 5) % 13) - 6;
  EXPECT_EQ(runSite(*site, x, w, product(y)), numpyMatmul(a, b, x, w));
}

TEST(GemmShape, PlainAndPromoted) {
  expectSiteIsMatmul({4, 3}, {3, 5});
  expectSiteIsMatmul({3}, {3, 5});
  expectSiteIsMatmul({4, 3}, {3});
  expectSiteIsMatmul({3}, {3});
}

TEST(GemmShape, BatchesThatBroadcast) {
  // One operand shared by every batch: one strided batch, stride 0.
  expectSiteIsMatmul({2, 4, 3}, {3, 5});
  expectSiteIsMatmul({4, 3}, {6, 3, 5});
  // Several batch dimensions of both: they merge into one.
  expectSiteIsMatmul({2, 3, 4, 3}, {2, 3, 3, 5});
  // One operand broadcast along the inner dimension, the other along the
  // outer: two levels.
  expectSiteIsMatmul({2, 1, 4, 3}, {1, 3, 3, 5});
  // Leading dimensions of extent 1 go.
  expectSiteIsMatmul({1, 1, 2, 4, 3}, {2, 3, 5});
}

TEST(GemmShape, ThreeLevelsDoNotFit) {
  std::vector<int64_t> a = {2, 1, 2, 4, 3}, b = {1, 3, 1, 3, 5};
  EXPECT_FALSE(matmulGemmShape(a, b, matmulShape(a, b)));
}

} // namespace
