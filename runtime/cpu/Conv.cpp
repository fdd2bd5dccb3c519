//===- Conv.cpp - N-D grouped convolution, its transpose and weight grad --===//
//
// conv: per (sample, group), im2col into [C/group * prod(k), prod(out)] and
// one gemm with the group's weights [M/group, C/group * prod(k)].
// convTranspose: per (sample, group), one gemm W^T X into
// [M/group * prod(k), prod(in)], then col2im scatters it into the output.
// convWeightGrad: per (sample, group), im2col as for conv and one gemm
// dY_g col^T into [M/group, C/group * prod(k)], summed over the samples.
// Pointwise cases (1x..x1 kernels, unit strides, no pads) skip the copies.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ShapeUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

/// The o in [0, count) for which start + o * stride lies in [0, extent):
/// [lo, hi). `stride` is positive.
void validRange(int64_t start, int64_t stride, int64_t extent, int64_t count,
                int64_t &lo, int64_t &hi) {
  lo = start >= 0 ? 0 : std::min(count, ceilDiv(-start, stride));
  hi = start < extent ? std::min(count, ceilDiv(extent - start, stride)) : 0;
  hi = std::max(hi, lo);
}

/// Geometry of one convolution, all spatial arrays of length `spatial`.
/// `in` is the side that is read by window (conv's input, convTranspose's
/// output) and `out` the side with one column per position.
struct Geometry {
  int spatial;
  const int64_t *in, *kernel, *out, *strides, *padsBegin, *dilations;
  int64_t inSize, kernelSize, outSize;
};

/// col[c * kSize + kIndex, outPos] = x[c, outPos * stride - pad + k * dil],
/// zero outside x.
template <typename T>
void im2col(const T *x, int64_t channels, const Geometry &g, T *col) {
  int s = g.spatial, last = s - 1;
  int64_t rows = channels * g.kernelSize;
  if (g.outSize == 0)
    return;
  int64_t inner = g.out[last], outer = g.outSize / inner;
#pragma omp parallel if (rows * g.outSize > 32768)
  {
    std::vector<int64_t> kpos(s), oidx(s);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      int64_t c = r / g.kernelSize;
      for (int64_t rem = r % g.kernelSize, d = last; d >= 0; --d) {
        kpos[d] = rem % g.kernel[d];
        rem /= g.kernel[d];
      }
      const T *src = x + c * g.inSize;
      T *dst = col + r * g.outSize;
      int64_t start = kpos[last] * g.dilations[last] - g.padsBegin[last];
      int64_t lo, hi;
      validRange(start, g.strides[last], g.in[last], inner, lo, hi);
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t oo = 0; oo < outer; ++oo) {
        T *row = dst + oo * inner;
        bool valid = true;
        int64_t offset = 0;
        for (int d = 0; d < last; ++d) {
          int64_t i = oidx[d] * g.strides[d] - g.padsBegin[d] +
                      kpos[d] * g.dilations[d];
          valid = valid && i >= 0 && i < g.in[d];
          offset = offset * g.in[d] + i;
        }
        if (!valid) {
          std::fill(row, row + inner, T(0));
        } else {
          const T *base = src + offset * g.in[last] + start;
          int64_t stride = g.strides[last];
          std::fill(row, row + lo, T(0));
          for (int64_t o = lo; o < hi; ++o)
            row[o] = base[o * stride];
          std::fill(row + hi, row + inner, T(0));
        }
        for (int d = last - 1; d >= 0; --d) {
          if (++oidx[d] < g.out[d])
            break;
          oidx[d] = 0;
        }
      }
    }
  }
}

/// The adjoint of im2col: y[c, outPos * stride - pad + k * dil] +=
/// col[c * kSize + kIndex, outPos] for the positions inside y.
template <typename T>
void col2im(const T *col, int64_t channels, const Geometry &g, T *y) {
  int s = g.spatial, last = s - 1;
  if (g.outSize == 0)
    return;
  int64_t inner = g.out[last], outer = g.outSize / inner;
#pragma omp parallel if (channels * g.kernelSize * g.outSize > 32768)
  {
    std::vector<int64_t> kpos(s), oidx(s);
#pragma omp for
    for (int64_t c = 0; c < channels; ++c) {
      T *dst = y + c * g.inSize;
      for (int64_t kr = 0; kr < g.kernelSize; ++kr) {
        for (int64_t rem = kr, d = last; d >= 0; --d) {
          kpos[d] = rem % g.kernel[d];
          rem /= g.kernel[d];
        }
        const T *src = col + (c * g.kernelSize + kr) * g.outSize;
        int64_t start = kpos[last] * g.dilations[last] - g.padsBegin[last];
        int64_t lo, hi;
        validRange(start, g.strides[last], g.in[last], inner, lo, hi);
        std::fill(oidx.begin(), oidx.end(), 0);
        for (int64_t oo = 0; oo < outer; ++oo) {
          bool valid = true;
          int64_t offset = 0;
          for (int d = 0; d < last; ++d) {
            int64_t i = oidx[d] * g.strides[d] - g.padsBegin[d] +
                        kpos[d] * g.dilations[d];
            valid = valid && i >= 0 && i < g.in[d];
            offset = offset * g.in[d] + i;
          }
          if (valid) {
            const T *row = src + oo * inner;
            T *base = dst + offset * g.in[last] + start;
            int64_t stride = g.strides[last];
            for (int64_t o = lo; o < hi; ++o)
              base[o * stride] += row[o];
          }
          for (int d = last - 1; d >= 0; --d) {
            if (++oidx[d] < g.out[d])
              break;
            oidx[d] = 0;
          }
        }
      }
    }
  }
}

/// Whether the window is the identity: unit kernel and strides, no pads.
bool isPointwise(int spatial, const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads) {
  for (int d = 0; d < spatial; ++d)
    if (kernel[d] != 1 || strides[d] != 1 || pads[d] != 0 ||
        pads[spatial + d] != 0)
      return false;
  return true;
}

template <typename T>
void addBias(const T *bias, T *y, int64_t batch, int64_t channels,
             int64_t size) {
  if (!bias)
    return;
#pragma omp parallel for if (batch * channels * size > 65536)
  for (int64_t nc = 0; nc < batch * channels; ++nc) {
    T b = bias[nc % channels];
    T *row = y + nc * size;
    for (int64_t i = 0; i < size; ++i)
      row[i] += b;
  }
}

/// The geometry of a convolution whose window reads `in` with `kernel`
/// into `out`, all three shapes with their two leading extents (batch and
/// channels, or filters and channels).
Geometry makeGeometry(int spatial, const int64_t *in, const int64_t *kernel,
                      const int64_t *out, const int64_t *strides,
                      const int64_t *pads, const int64_t *dilations) {
  return Geometry{spatial,
                  in + 2,
                  kernel + 2,
                  out + 2,
                  strides,
                  pads,
                  dilations,
                  product(in + 2, spatial),
                  product(kernel + 2, spatial),
                  product(out + 2, spatial)};
}

/// Calls `fn(b, gi, columns)` for each sample b and group gi of x
/// [N, C, in...], with the group's im2col columns [C/group * prod(k),
/// prod(out)] (the input itself where the window is the identity).
template <typename T, typename Fn>
void forEachGroupColumns(const T *x, int64_t n, int64_t c, int64_t group,
                         const Geometry &g, const int64_t *pads, Fn fn) {
  int64_t cg = c / group;
  bool pointwise =
      g.spatial == 0 || (isPointwise(g.spatial, g.kernel, g.strides, pads) &&
                         g.inSize == g.outSize);
  std::vector<T> col(pointwise ? 0 : cg * g.kernelSize * g.outSize);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T *xg = x + (b * c + gi * cg) * g.inSize;
      if (!pointwise)
        im2col(xg, cg, g, col.data());
      fn(b, gi, pointwise ? xg : col.data());
    }
  }
}

} // namespace

template <typename T>
void conv(const T *x, const int64_t *xShape, const T *w, const int64_t *wShape,
          const T *bias, T *y, const int64_t *yShape, int spatial,
          const int64_t *strides, const int64_t *pads, const int64_t *dilations,
          int64_t group, bool parameterWeight) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlConv(x, xShape, w, wShape, bias, y, yShape, spatial, strides, pads,
                 dilations, group, parameterWeight))
      return;
  int64_t n = xShape[0], c = xShape[1], m = wShape[0], mg = m / group;
  Geometry g =
      makeGeometry(spatial, xShape, wShape, yShape, strides, pads, dilations);
  int64_t rows = wShape[1] * g.kernelSize;
  if (n * m * g.outSize == 0)
    return;
  forEachGroupColumns(x, n, c, group, g, pads,
                      [&](int64_t b, int64_t gi, const T *columns) {
                        gemm<T>(w + gi * mg * rows, columns, nullptr, nullptr,
                                0, y + (b * m + gi * mg) * g.outSize, mg,
                                g.outSize, rows, false, false, T(1), T(0));
                      });
  addBias(bias, y, n, m, g.outSize);
}

template <typename T>
void convChannelsLast(const T *x, const int64_t *xShape, const T *w,
                      const int64_t *wShape, const T *bias, T *y,
                      const int64_t *yShape, int spatial,
                      const int64_t *strides, const int64_t *pads,
                      const int64_t *dilations, int64_t group,
                      bool parameterWeight, int activation, float low,
                      float high) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlConv(x, xShape, w, wShape, bias, y, yShape, spatial, strides, pads,
                 dilations, group, parameterWeight, /*channelsLast=*/true,
                 activation, low, high))
      return;
  // Elsewhere: conv on channels-first copies.
  int rank = spatial + 2;
  std::vector<int64_t> toFirst = channelsFirstPerm(rank),
                       toLast = channelsLastPerm(rank);
  std::vector<int64_t> xFirst = permuted(xShape, toFirst),
                       yFirst = permuted(yShape, toFirst);
  std::vector<T> in(product(xShape, rank)), out(product(yShape, rank));
  transpose(x, xShape, rank, toFirst.data(), sizeof(T), in.data());
  conv(in.data(), xFirst.data(), w, wShape, bias, out.data(), yFirst.data(),
       spatial, strides, pads, dilations, group, parameterWeight);
  transpose(out.data(), yFirst.data(), rank, toLast.data(), sizeof(T), y);
  int64_t count = product(yShape, rank);
  if (activation == kRelu) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = y[i] > T(0) ? y[i] : T(0);
  } else if (activation == kClip) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = std::min<T>(std::max<T>(y[i], T(low)), T(high));
  } else if (activation == kSilu) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = y[i] / (T(1) + std::exp(-y[i]));
  }
}

template <typename T>
void convTranspose(const T *x, const int64_t *xShape, const T *w,
                   const int64_t *wShape, const T *bias, T *y,
                   const int64_t *yShape, int spatial, const int64_t *strides,
                   const int64_t *pads, const int64_t *dilations,
                   int64_t group) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlConvTranspose(x, xShape, w, wShape, bias, y, yShape, spatial,
                          strides, pads, dilations, group))
      return;
  int64_t n = xShape[0], c = xShape[1], mg = wShape[1];
  int64_t m = mg * group, cg = c / group;
  // Seen from col2im, the output is the windowed side and x has the columns.
  Geometry g =
      makeGeometry(spatial, yShape, wShape, xShape, strides, pads, dilations);
  int64_t rows = mg * g.kernelSize;
  int64_t ySize = g.inSize, xSize = g.outSize;
  if (n * m * ySize == 0)
    return;
  bool pointwise =
      spatial == 0 ||
      (isPointwise(spatial, g.kernel, strides, pads) && ySize == xSize);
  std::vector<T> col(pointwise ? 0 : rows * xSize);
  if (!pointwise)
    std::fill(y, y + n * m * ySize, T(0));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T *xg = x + (b * c + gi * cg) * xSize;
      T *yg = y + (b * m + gi * mg) * ySize;
      // [M/group * prod(k), prod(in)] = W_g^T [C/group, ...]^T * X_g.
      T *target = pointwise ? yg : col.data();
      gemm<T>(w + gi * cg * rows, xg, nullptr, nullptr, 0, target, rows, xSize,
              cg, true, false, T(1), T(0));
      if (!pointwise)
        col2im(col.data(), mg, g, yg);
    }
  }
  addBias(bias, y, n, m, ySize);
}

template <typename T>
void convWeightGrad(const T *x, const int64_t *xShape, const T *dy,
                    const int64_t *dyShape, T *dw, const int64_t *wShape,
                    int spatial, const int64_t *strides, const int64_t *pads,
                    const int64_t *dilations, int64_t group) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlConvWeightGrad(x, xShape, dy, dyShape, dw, wShape, spatial, strides,
                           pads, dilations, group))
      return;
  int64_t n = xShape[0], c = xShape[1], m = wShape[0], mg = m / group;
  Geometry g =
      makeGeometry(spatial, xShape, wShape, dyShape, strides, pads, dilations);
  int64_t rows = wShape[1] * g.kernelSize;
  std::fill(dw, dw + m * rows, T(0));
  if (n * m * g.outSize == 0)
    return;
  std::vector<T> part(mg * rows);
  forEachGroupColumns(
      x, n, c, group, g, pads, [&](int64_t b, int64_t gi, const T *columns) {
        // [M/group, C/group * prod(k)] = dY_g [M/group, prod(out)] cols^T.
        gemm<T>(dy + (b * m + gi * mg) * g.outSize, columns, nullptr, nullptr,
                0, part.data(), mg, rows, g.outSize, false, true, T(1), T(0));
        T *target = dw + gi * mg * rows;
        for (int64_t i = 0; i < mg * rows; ++i)
          target[i] += part[i];
      });
}

template void conv<float>(const float *, const int64_t *, const float *,
                          const int64_t *, const float *, float *,
                          const int64_t *, int, const int64_t *,
                          const int64_t *, const int64_t *, int64_t, bool);
template void conv<double>(const double *, const int64_t *, const double *,
                           const int64_t *, const double *, double *,
                           const int64_t *, int, const int64_t *,
                           const int64_t *, const int64_t *, int64_t, bool);
template void convChannelsLast<float>(const float *, const int64_t *,
                                      const float *, const int64_t *,
                                      const float *, float *, const int64_t *,
                                      int, const int64_t *, const int64_t *,
                                      const int64_t *, int64_t, bool, int,
                                      float, float);
template void convChannelsLast<double>(const double *, const int64_t *,
                                       const double *, const int64_t *,
                                       const double *, double *,
                                       const int64_t *, int, const int64_t *,
                                       const int64_t *, const int64_t *,
                                       int64_t, bool, int, float, float);
template void convTranspose<float>(const float *, const int64_t *,
                                   const float *, const int64_t *,
                                   const float *, float *, const int64_t *, int,
                                   const int64_t *, const int64_t *,
                                   const int64_t *, int64_t);
template void convWeightGrad<float>(const float *, const int64_t *,
                                    const float *, const int64_t *, float *,
                                    const int64_t *, int, const int64_t *,
                                    const int64_t *, const int64_t *, int64_t);
template void convWeightGrad<double>(const double *, const int64_t *,
                                     const double *, const int64_t *, double *,
                                     const int64_t *, int, const int64_t *,
                                     const int64_t *, const int64_t *, int64_t);
template void convTranspose<double>(const double *, const int64_t *,
                                    const double *, const int64_t *,
                                    const double *, double *, const int64_t *,
                                    int, const int64_t *, const int64_t *,
                                    const int64_t *, int64_t);

} // namespace cpu
} // namespace pipe_rt
