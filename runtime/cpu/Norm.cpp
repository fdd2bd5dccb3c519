//===- Norm.cpp - batch, layer and instance normalization; softmax --------===//
//
// Statistics accumulate in double (two passes: mean, then squared
// deviations), whatever the element type. Softmax subtracts the maximum
// before exponentiating, so large inputs do not overflow.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Math.h"
#include "ShapeUtil.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

/// Mean and sum of squared deviations of x[0..count), in double.
template <typename T>
void moments(const T *x, int64_t count, double &mean, double &squares) {
  mean = count ? sumInDouble(x, count) / double(count) : 0;
  squares = squaresAboutInDouble(x, count, mean);
}

/// For every element of the trailing block `shape` (rank `rank`), the offset
/// of the element of a tensor of shape `pShape` that broadcasts to it (numpy
/// rules, right-aligned; leading extra dims of pShape are 1).
std::vector<int64_t> broadcastOffsets(const int64_t *shape, int rank,
                                      const int64_t *pShape, int pRank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int i = 1; i <= std::min(rank, pRank); ++i) {
    int64_t extent = pShape[pRank - i];
    strides[rank - i] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  int64_t size = product(shape, rank);
  std::vector<int64_t> offsets(size);
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t j = 0; j < size; ++j) {
    offsets[j] = offset;
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < shape[d])
        break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return offsets;
}

} // namespace

template <typename T>
void batchNorm(const T *x, const int64_t *xShape, int rank, const T *scale,
               const T *bias, const T *mean, const T *variance, T epsilon,
               T *y) {
  int64_t channels = xShape[1];
  int64_t planes = xShape[0] * channels;
  int64_t size = product(xShape + 2, rank - 2);
#pragma omp parallel for if (planes * size > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    int64_t c = p % channels;
    double m = double(mean[c]), b = double(bias[c]);
    double a = double(scale[c]) / std::sqrt(double(variance[c]) + epsilon);
    const T *in = x + p * size;
    T *out = y + p * size;
    for (int64_t i = 0; i < size; ++i)
      out[i] = T((double(in[i]) - m) * a + b);
  }
}

template <typename T>
void batchNormTrain(const T *x, const int64_t *xShape, int rank, const T *scale,
                    const T *bias, const T *mean, const T *variance, T epsilon,
                    T momentum, T *y, T *runningMean, T *runningVariance) {
  int64_t batch = xShape[0], channels = xShape[1];
  int64_t size = product(xShape + 2, rank - 2);
  int64_t count = batch * size;
#pragma omp parallel for if (count * channels > 32768)
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < batch; ++n)
      sum += sumInDouble(x + (n * channels + c) * size, size);
    double m = sum / double(count);
    double squares = 0;
    for (int64_t n = 0; n < batch; ++n)
      squares += squaresAboutInDouble(x + (n * channels + c) * size, size, m);
    // The biased batch variance both normalizes and updates the running
    // variance: ONNX BatchNormalization-15 and its backend test data
    // (test_batchnorm_*_training_mode). torch's running update uses the
    // unbiased one instead.
    double biased = squares / double(count);
    double a = double(scale[c]) / std::sqrt(biased + double(epsilon));
    double b = double(bias[c]);
    for (int64_t n = 0; n < batch; ++n) {
      const T *in = x + (n * channels + c) * size;
      T *out = y + (n * channels + c) * size;
      for (int64_t i = 0; i < size; ++i)
        out[i] = T((double(in[i]) - m) * a + b);
    }
    double mom = double(momentum);
    runningMean[c] = T(double(mean[c]) * mom + m * (1 - mom));
    runningVariance[c] = T(double(variance[c]) * mom + biased * (1 - mom));
  }
}

template <typename T>
void layerNorm(const T *x, const int64_t *xShape, int rank, int64_t axis,
               const T *scale, const int64_t *scaleShape, int scaleRank,
               const T *bias, const int64_t *biasShape, int biasRank, T epsilon,
               T *y) {
  int normRank = rank - int(axis);
  int64_t outer = product(xShape, int(axis));
  int64_t inner = product(xShape + axis, normRank);
  std::vector<int64_t> scaleAt =
      broadcastOffsets(xShape + axis, normRank, scaleShape, scaleRank);
  std::vector<int64_t> biasAt;
  if (bias)
    biasAt = broadcastOffsets(xShape + axis, normRank, biasShape, biasRank);
#pragma omp parallel for if (outer * inner > 32768)
  for (int64_t o = 0; o < outer; ++o) {
    const T *in = x + o * inner;
    T *out = y + o * inner;
    double m, squares;
    moments(in, inner, m, squares);
    double inv = 1 / std::sqrt(squares / double(inner) + double(epsilon));
    for (int64_t j = 0; j < inner; ++j) {
      double v = (double(in[j]) - m) * inv * double(scale[scaleAt[j]]);
      if (bias)
        v += double(bias[biasAt[j]]);
      out[j] = T(v);
    }
  }
}

template <typename T>
void instanceNorm(const T *x, const int64_t *xShape, int rank, const T *scale,
                  const T *bias, T epsilon, T *y) {
  int64_t channels = xShape[1];
  int64_t planes = xShape[0] * channels;
  int64_t size = product(xShape + 2, rank - 2);
#pragma omp parallel for if (planes * size > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    int64_t c = p % channels;
    const T *in = x + p * size;
    T *out = y + p * size;
    double m, squares;
    moments(in, size, m, squares);
    double a =
        double(scale[c]) / std::sqrt(squares / double(size) + double(epsilon));
    double b = double(bias[c]);
    for (int64_t i = 0; i < size; ++i)
      out[i] = T((double(in[i]) - m) * a + b);
  }
}

template <typename T>
void batchNormTrainGrad(const T *x, const int64_t *xShape, int rank,
                        const T *scale, const T *dy, T epsilon, T *dx,
                        T *scaleGrad, T *biasGrad) {
  int64_t batch = xShape[0], channels = xShape[1];
  int64_t size = product(xShape + 2, rank - 2);
  int64_t count = batch * size;
#pragma omp parallel for if (count * channels > 32768)
  for (int64_t c = 0; c < channels; ++c) {
    auto plane = [&](auto *base, int64_t n) {
      return base + (n * channels + c) * size;
    };
    double sum = 0;
    for (int64_t n = 0; n < batch; ++n)
      sum += sumInDouble(plane(x, n), size);
    double m = count ? sum / double(count) : 0;
    double squares = 0, sumDy = 0, sumDyCentred = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const T *in = plane(x, n), *grad = plane(dy, n);
      squares += squaresAboutInDouble(in, size, m);
      sumDy += sumInDouble(grad, size);
      sumDyCentred += sumOfTerms(size, [&](int64_t i) {
        return double(grad[i]) * (double(in[i]) - m);
      });
    }
    double invStd = 1 / std::sqrt(squares / double(count) + double(epsilon));
    biasGrad[c] = T(sumDy);
    scaleGrad[c] = T(sumDyCentred * invStd);
    if (!count)
      continue;
    // dx = scale/σ (dy - Σdy/n - (x - m) Σ(dy (x - m)) / (n σ²)).
    double k = double(scale[c]) * invStd;
    double meanDy = sumDy / double(count);
    double slope = sumDyCentred * invStd * invStd / double(count);
    for (int64_t n = 0; n < batch; ++n) {
      const T *in = plane(x, n), *grad = plane(dy, n);
      T *out = plane(dx, n);
      for (int64_t i = 0; i < size; ++i)
        out[i] =
            T(k * (double(grad[i]) - meanDy - (double(in[i]) - m) * slope));
    }
  }
}

template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t extent, int64_t inner,
             bool log) {
  if (outer * extent * inner == 0)
    return;
  if (inner == 1) {
    // Softmax over contiguous rows: the exps vectorize (cpu::exp); the sum
    // stays sequential, in double.
#pragma omp parallel for if (outer * extent > 32768)
    for (int64_t o = 0; o < outer; ++o) {
      const T *in = x + o * extent;
      T *out = y + o * extent;
      T top = in[0];
      for (int64_t e = 1; e < extent; ++e)
        if (in[e] > top || std::isnan(in[e]))
          top = in[e];
      for (int64_t e = 0; e < extent; ++e)
        out[e] = cpu::exp(in[e] - top);
      double sum = sumInDouble(out, extent);
      if (log) {
        double shift = double(top) + std::log(sum);
        for (int64_t e = 0; e < extent; ++e)
          out[e] = T(double(in[e]) - shift);
      } else {
        double reciprocal = 1 / sum;
        for (int64_t e = 0; e < extent; ++e)
          out[e] = T(double(out[e]) * reciprocal);
      }
    }
    return;
  }
#pragma omp parallel if (outer * extent * inner > 32768)
  {
    // Per inner position of one outer slice: maximum, then sum of exps.
    std::vector<T> maxima(inner);
    std::vector<double> sums(inner);
#pragma omp for
    for (int64_t o = 0; o < outer; ++o) {
      const T *in = x + o * extent * inner;
      T *out = y + o * extent * inner;
      std::copy(in, in + inner, maxima.begin());
      for (int64_t e = 1; e < extent; ++e)
        for (int64_t i = 0; i < inner; ++i) {
          T v = in[e * inner + i];
          if (v > maxima[i] || std::isnan(v))
            maxima[i] = v;
        }
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t e = 0; e < extent; ++e)
        for (int64_t i = 0; i < inner; ++i) {
          T v = cpu::exp(in[e * inner + i] - maxima[i]);
          sums[i] += double(v);
          if (!log)
            out[e * inner + i] = v;
        }
      if (log) {
        for (int64_t i = 0; i < inner; ++i)
          sums[i] = std::log(sums[i]);
        for (int64_t e = 0; e < extent; ++e)
          for (int64_t i = 0; i < inner; ++i)
            out[e * inner + i] =
                T(double(in[e * inner + i] - maxima[i]) - sums[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i)
          sums[i] = 1 / sums[i];
        for (int64_t e = 0; e < extent; ++e)
          for (int64_t i = 0; i < inner; ++i)
            out[e * inner + i] = T(double(out[e * inner + i]) * sums[i]);
      }
    }
  }
}

#define PIPE_INSTANTIATE(T)                                                    \
  template void batchNorm<T>(const T *, const int64_t *, int, const T *,       \
                             const T *, const T *, const T *, T, T *);         \
  template void batchNormTrain<T>(const T *, const int64_t *, int, const T *,  \
                                  const T *, const T *, const T *, T, T, T *,  \
                                  T *, T *);                                   \
  template void layerNorm<T>(const T *, const int64_t *, int, int64_t,         \
                             const T *, const int64_t *, int, const T *,       \
                             const int64_t *, int, T, T *);                    \
  template void instanceNorm<T>(const T *, const int64_t *, int, const T *,    \
                                const T *, T, T *);                            \
  template void batchNormTrainGrad<T>(const T *, const int64_t *, int,         \
                                      const T *, const T *, T, T *, T *, T *); \
  template void softmax<T>(const T *, T *, int64_t, int64_t, int64_t, bool);
PIPE_INSTANTIATE(float)
PIPE_INSTANTIATE(double)
#undef PIPE_INSTANTIATE

} // namespace cpu
} // namespace pipe_rt
