//===- Norm.cu - layer normalization and softmax on the GPU ---------------===//
//
// One block per normalized row: its threads stride over the row, and the
// block reduces. Statistics accumulate in the element type, over the
// block's tree (CPU kernels sum in double, sequentially in eight lanes).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
constexpr int kRowBlock = 256;

template <typename T>
__global__ void layerNormRows(const T *x, int64_t inner, Layout scaleAt,
                              const T *scale, Layout biasAt, const T *bias,
                              T epsilon, T *y) {
  __shared__ T shared[32];
  const T *in = x + int64_t(blockIdx.x) * inner;
  T *out = y + int64_t(blockIdx.x) * inner;
  T sum = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x)
    sum += in[j];
  T mean = blockSum(sum, shared) / T(inner);
  T squares = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    T d = in[j] - mean;
    squares += d * d;
  }
  T inv = T(1) / sqrt(blockSum(squares, shared) / T(inner) + epsilon);
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    T v = (in[j] - mean) * inv * scale[scaleAt.offsetOf(j)];
    if (bias)
      v += bias[biasAt.offsetOf(j)];
    out[j] = v;
  }
}

/// Softmax over `extent` elements `inner` apart; one block per (outer,
/// inner) position.
template <typename T>
__global__ void softmaxRows(const T *x, T *y, int64_t extent, int64_t inner,
                            bool log) {
  __shared__ T shared[32];
  int64_t o = blockIdx.x / inner, i = blockIdx.x % inner;
  const T *in = x + o * extent * inner + i;
  T *out = y + o * extent * inner + i;
  T top = -INFINITY;
  for (int64_t j = threadIdx.x; j < extent; j += blockDim.x) {
    T v = in[j * inner];
    top = (v != v || v > top) ? v : top;
  }
  top = blockMax(top, shared);
  T sum = 0;
  for (int64_t j = threadIdx.x; j < extent; j += blockDim.x)
    sum += exp(in[j * inner] - top);
  sum = blockSum(sum, shared);
  T logSum = ::log(sum);
  for (int64_t j = threadIdx.x; j < extent; j += blockDim.x) {
    T shifted = in[j * inner] - top;
    out[j * inner] = log ? shifted - logSum : exp(shifted) / sum;
  }
}
} // namespace

namespace pipe_rt {
namespace cuda {

template <typename T>
void layerNorm(const T *x, const int64_t *xShape, int rank, int64_t axis,
               const T *scale, const int64_t *scaleShape, int scaleRank,
               const T *bias, const int64_t *biasShape, int biasRank, T epsilon,
               T *y) {
  int normRank = rank - int(axis);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= xShape[d];
  Layout scaleAt =
      broadcastLayout(xShape + axis, normRank, scaleShape, scaleRank);
  Layout biasAt =
      bias ? broadcastLayout(xShape + axis, normRank, biasShape, biasRank)
           : Layout();
  if (outer == 0)
    return;
  layerNormRows<<<unsigned(outer), kRowBlock, 0, computeStream()>>>(
      x, inner, scaleAt, scale, biasAt, bias, epsilon, y);
  checkLaunch("layerNorm");
}

template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t extent, int64_t inner,
             bool log) {
  if (outer * inner == 0 || extent == 0)
    return;
  softmaxRows<<<unsigned(outer * inner), kRowBlock, 0, computeStream()>>>(
      x, y, extent, inner, log);
  checkLaunch("softmax");
}

#define PIPE_INSTANTIATE(T)                                                    \
  template void layerNorm<T>(const T *, const int64_t *, int, int64_t,         \
                             const T *, const int64_t *, int, const T *,       \
                             const int64_t *, int, T, T *);                    \
  template void softmax<T>(const T *, T *, int64_t, int64_t, int64_t, bool);
PIPE_INSTANTIATE(float)
PIPE_INSTANTIATE(double)
#undef PIPE_INSTANTIATE

} // namespace cuda
} // namespace pipe_rt
