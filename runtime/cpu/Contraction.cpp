//===- Contraction.cpp - gemm and numpy matmul on OpenBLAS and oneDNN -----===//
//
// Both kernels hand the matrix products to cblas_sgemm / cblas_dgemm, which
// thread themselves, or for float products of the sizes where it is faster
// (dnnlMatmulPays) to oneDNN; batched matmul makes one product per batch
// (or one for all batches when the right operand is shared and the left
// one is contiguous).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
              (blasint)ldc);
}

void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              double alpha, const double *a, int64_t lda, const double *b,
              int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
              (blasint)ldc);
}

/// y[M,N] = alpha * op(a) * op(b) with row-major, densely stored operands.
template <typename T>
void product(const T *a, const T *b, T *y, int64_t m, int64_t n, int64_t k,
             bool transA, bool transB, T alpha) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    std::fill(y, y + m * n, T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    if (dnnlMatmulPays(m, n, k) &&
        dnnlMatmul(a, b, y, m, n, k, transA, transB, alpha))
      return;
  int64_t lda = std::max<int64_t>(1, transA ? m : k);
  int64_t ldb = std::max<int64_t>(1, transB ? k : n);
  blasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, T(0), y,
           std::max<int64_t>(1, n));
}

} // namespace

template <typename T>
void gemm(const T *a, const T *b, const T *c, const int64_t *cShape, int cRank,
          T *y, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
          T alpha, T beta) {
  product(a, b, y, m, n, k, transA, transB, alpha);
  if (!c || m <= 0 || n <= 0)
    return;
  // C broadcasts (numpy rules, right-aligned) from rank <= 2 to [M, N]. The
  // term is added here rather than through BLAS's beta so that beta == 0
  // still propagates non-finite values of C, as the ONNX formula does.
  int64_t colStride = cRank >= 1 && cShape[cRank - 1] != 1 ? 1 : 0;
  int64_t rowStride = cRank >= 2 && cShape[0] != 1 ? cShape[1] : 0;
#pragma omp parallel for if (m * n > 65536)
  for (int64_t i = 0; i < m; ++i) {
    const T *cRow = c + i * rowStride;
    T *yRow = y + i * n;
    for (int64_t j = 0; j < n; ++j)
      yRow[j] += beta * cRow[j * colStride];
  }
}

template <typename T>
void matmul(const T *a, const int64_t *aShape, int aRank, const T *b,
            const int64_t *bShape, int bRank, T *y, const int64_t *yShape,
            int yRank) {
  // 1-D operands: a [K] is a row [1, K], b [K] a column [K, 1].
  int64_t m = aRank >= 2 ? aShape[aRank - 2] : 1;
  int64_t k = aShape[aRank - 1];
  int64_t n = bRank >= 2 ? bShape[bRank - 1] : 1;
  int aBatchRank = std::max(aRank - 2, 0);
  int bBatchRank = std::max(bRank - 2, 0);
  int yBatchRank = yRank - (aRank >= 2 ? 1 : 0) - (bRank >= 2 ? 1 : 0);

  int64_t batches = 1, aBatches = 1, bBatches = 1;
  for (int i = 0; i < yBatchRank; ++i)
    batches *= yShape[i];
  for (int i = 0; i < aBatchRank; ++i)
    aBatches *= aShape[i];
  for (int i = 0; i < bBatchRank; ++i)
    bBatches *= bShape[i];
  if (batches == 0 || m == 0 || n == 0)
    return;

  // A shared right operand and a left operand with every batch: one gemm
  // over [batches * M, K].
  if (bBatches == 1 && aBatches == batches) {
    product(a, b, y, batches * m, n, k, false, false, T(1));
    return;
  }

  // Element offsets of every batch in a and b (broadcast dims stay put).
  std::vector<int64_t> aStride(yBatchRank, 0), bStride(yBatchRank, 0);
  int64_t stride = m * k;
  for (int i = aBatchRank - 1; i >= 0; --i) {
    int yi = i + yBatchRank - aBatchRank;
    aStride[yi] = aShape[i] == 1 ? 0 : stride;
    stride *= aShape[i];
  }
  stride = k * n;
  for (int i = bBatchRank - 1; i >= 0; --i) {
    int yi = i + yBatchRank - bBatchRank;
    bStride[yi] = bShape[i] == 1 ? 0 : stride;
    stride *= bShape[i];
  }
  std::vector<int64_t> index(yBatchRank, 0);
  int64_t aOffset = 0, bOffset = 0;
  for (int64_t batch = 0; batch < batches; ++batch) {
    product(a + aOffset, b + bOffset, y + batch * m * n, m, n, k, false, false,
            T(1));
    for (int i = yBatchRank - 1; i >= 0; --i) {
      aOffset += aStride[i];
      bOffset += bStride[i];
      if (++index[i] < yShape[i])
        break;
      aOffset -= aStride[i] * yShape[i];
      bOffset -= bStride[i] * yShape[i];
      index[i] = 0;
    }
  }
}

template void gemm<float>(const float *, const float *, const float *,
                          const int64_t *, int, float *, int64_t, int64_t,
                          int64_t, bool, bool, float, float);
template void gemm<double>(const double *, const double *, const double *,
                           const int64_t *, int, double *, int64_t, int64_t,
                           int64_t, bool, bool, double, double);
template void matmul<float>(const float *, const int64_t *, int, const float *,
                            const int64_t *, int, float *, const int64_t *,
                            int);
template void matmul<double>(const double *, const int64_t *, int,
                             const double *, const int64_t *, int, double *,
                             const int64_t *, int);

} // namespace cpu
} // namespace pipe_rt
