//===- Pool.cpp - N-D max, average and global average pooling -------------===//
//
// Direct loops, parallel over the (sample, channel) planes. For every output
// position the window is clipped to the positions inside the input, so pads
// and the extra windows of ceil mode need no padded copy of the input.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Math.h"
#include "ShapeUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

/// One pooling problem over planes of `spatial` dims.
/// A pooling window at one output position, clipped to the input: its
/// start per dim, the kernel indices [lo, hi) inside the input, whether
/// any are, and a kernel index for iterating. One per thread.
struct Clipped {
  std::vector<int64_t> start, lo, hi, k;
  bool any = false;
  explicit Clipped(int spatial)
      : start(spatial), lo(spatial), hi(spatial), k(spatial) {}
};

struct Window {
  int spatial;
  const int64_t *in, *out, *kernel, *strides, *padsBegin, *dilations;
  std::vector<int64_t> inStride;

  Window(int spatial, const int64_t *in, const int64_t *out,
         const int64_t *kernel, const int64_t *strides, const int64_t *pads,
         const int64_t *dilations)
      : spatial(spatial), in(in), out(out), kernel(kernel), strides(strides),
        padsBegin(pads), dilations(dilations), inStride(spatial, 1) {
    for (int d = spatial - 2; d >= 0; --d)
      inStride[d] = inStride[d + 1] * in[d + 1];
  }

  int64_t dilation(int d) const { return dilations ? dilations[d] : 1; }

  /// For the output position `oidx`: the window start per dim, and the
  /// kernel indices [lo, hi) per dim that land inside the input. Returns
  /// (and records) whether the window holds any input position.
  bool clip(const int64_t *oidx, Clipped &w) const {
    w.any = true;
    for (int d = 0; d < spatial; ++d) {
      w.start[d] = oidx[d] * strides[d] - padsBegin[d];
      int64_t dil = dilation(d);
      w.lo[d] =
          w.start[d] >= 0 ? 0 : std::min(kernel[d], ceilDiv(-w.start[d], dil));
      w.hi[d] = w.start[d] < in[d]
                    ? std::min(kernel[d], ceilDiv(in[d] - w.start[d], dil))
                    : 0;
      w.any = w.any && w.hi[d] > w.lo[d];
    }
    return w.any;
  }

  /// The divisor of an average over the window clipped by clip(): its
  /// positions inside the input, or with `countIncludePad` inside the
  /// padded input [-pad_begin, in + pad_end).
  int64_t divisor(const Clipped &w, bool countIncludePad) const {
    int64_t count = 1;
    for (int d = 0; d < spatial; ++d) {
      int64_t extent = countIncludePad
                           ? std::min(w.start[d] + kernel[d],
                                      in[d] + padsBegin[spatial + d]) -
                                 std::max(w.start[d], -padsBegin[d])
                           : (w.any ? w.hi[d] - w.lo[d] : 0);
      count *= std::max<int64_t>(extent, 0);
    }
    return count;
  }

  /// Calls f(offset) for every input position of a clipped window.
  template <typename F> void forEach(Clipped &w, F f) const {
    int last = spatial - 1;
    for (int d = 0; d < last; ++d)
      w.k[d] = w.lo[d];
    int64_t dilLast = dilation(last);
    while (true) {
      int64_t base = w.start[last];
      for (int d = 0; d < last; ++d)
        base += (w.start[d] + w.k[d] * dilation(d)) * inStride[d];
      for (int64_t kk = w.lo[last]; kk < w.hi[last]; ++kk)
        f(base + kk * dilLast);
      int d = last - 1;
      for (; d >= 0; --d) {
        if (++w.k[d] < w.hi[d])
          break;
        w.k[d] = w.lo[d];
      }
      if (d < 0)
        return;
    }
  }
};

/// Calls f(plane, outIndex, oidx, window) for every output position,
/// parallel over planes, with a window to clip per thread.
template <typename F>
void forEachOutput(int64_t planes, int spatial, const int64_t *out, F f) {
  int64_t outSize = product(out, spatial);
#pragma omp parallel if (planes * outSize > 4096)
  {
    std::vector<int64_t> oidx(spatial);
    Clipped window(spatial);
#pragma omp for
    for (int64_t p = 0; p < planes; ++p) {
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t o = 0; o < outSize; ++o) {
        f(p, o, oidx.data(), window);
        for (int d = spatial - 1; d >= 0; --d) {
          if (++oidx[d] < out[d])
            break;
          oidx[d] = 0;
        }
      }
    }
  }
}

} // namespace

template <typename T>
void maxPool(const T *x, const int64_t *xShape, T *y, const int64_t *yShape,
             int spatial, const int64_t *kernel, const int64_t *strides,
             const int64_t *pads, const int64_t *dilations) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlPool(x, xShape, y, yShape, spatial, kernel, strides, pads,
                 dilations, /*max=*/true, false))
      return;
  Window win(spatial, xShape + 2, yShape + 2, kernel, strides, pads, dilations);
  int64_t inSize = product(xShape + 2, spatial);
  int64_t outSize = product(yShape + 2, spatial);
  forEachOutput(xShape[0] * xShape[1], spatial, yShape + 2,
                [&](int64_t p, int64_t o, const int64_t *oidx, Clipped &w) {
                  T best = -std::numeric_limits<T>::infinity();
                  if (win.clip(oidx, w)) {
                    const T *plane = x + p * inSize;
                    win.forEach(w, [&](int64_t offset) {
                      T v = plane[offset];
                      // NaN wins, as in numpy and torch.
                      if (v > best || std::isnan(v))
                        best = v;
                    });
                  }
                  y[p * outSize + o] = best;
                });
}

template <typename T>
void averagePool(const T *x, const int64_t *xShape, T *y, const int64_t *yShape,
                 int spatial, const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, bool countIncludePad) {
  if constexpr (std::is_same_v<T, float>)
    if (dnnlPool(x, xShape, y, yShape, spatial, kernel, strides, pads, nullptr,
                 /*max=*/false, countIncludePad))
      return;
  Window win(spatial, xShape + 2, yShape + 2, kernel, strides, pads, nullptr);
  int64_t inSize = product(xShape + 2, spatial);
  int64_t outSize = product(yShape + 2, spatial);
  forEachOutput(
      xShape[0] * xShape[1], spatial, yShape + 2,
      [&](int64_t p, int64_t o, const int64_t *oidx, Clipped &w) {
        double sum = 0;
        bool any = win.clip(oidx, w);
        if (any) {
          const T *plane = x + p * inSize;
          win.forEach(w, [&](int64_t offset) { sum += double(plane[offset]); });
        }
        int64_t count = win.divisor(w, countIncludePad);
        y[p * outSize + o] = T(sum / double(count));
      });
}

template <typename T>
void maxPoolGrad(const T *x, const int64_t *xShape, const T *dy,
                 const int64_t *dyShape, int spatial, const int64_t *kernel,
                 const int64_t *strides, const int64_t *pads,
                 const int64_t *dilations, T *dx) {
  Window win(spatial, xShape + 2, dyShape + 2, kernel, strides, pads,
             dilations);
  int64_t inSize = product(xShape + 2, spatial);
  int64_t outSize = product(dyShape + 2, spatial);
  std::fill(dx, dx + xShape[0] * xShape[1] * inSize, T(0));
  // Planes are independent, so each thread scatters into its own planes.
  forEachOutput(xShape[0] * xShape[1], spatial, dyShape + 2,
                [&](int64_t p, int64_t o, const int64_t *oidx, Clipped &w) {
                  if (!win.clip(oidx, w))
                    return;
                  const T *plane = x + p * inSize;
                  T best = -std::numeric_limits<T>::infinity();
                  int64_t where = -1;
                  win.forEach(w, [&](int64_t offset) {
                    T v = plane[offset];
                    if (where < 0 || v > best ||
                        (std::isnan(v) && !std::isnan(best))) {
                      best = v;
                      where = offset;
                    }
                  });
                  dx[p * inSize + where] += dy[p * outSize + o];
                });
}

template <typename T>
void averagePoolGrad(const T *dy, const int64_t *dyShape, T *dx,
                     const int64_t *dxShape, int spatial, const int64_t *kernel,
                     const int64_t *strides, const int64_t *pads,
                     bool countIncludePad) {
  Window win(spatial, dxShape + 2, dyShape + 2, kernel, strides, pads, nullptr);
  int64_t inSize = product(dxShape + 2, spatial);
  int64_t outSize = product(dyShape + 2, spatial);
  std::fill(dx, dx + dxShape[0] * dxShape[1] * inSize, T(0));
  forEachOutput(dxShape[0] * dxShape[1], spatial, dyShape + 2,
                [&](int64_t p, int64_t o, const int64_t *oidx, Clipped &w) {
                  bool any = win.clip(oidx, w);
                  int64_t count = win.divisor(w, countIncludePad);
                  if (!any || !count)
                    return;
                  T share = T(double(dy[p * outSize + o]) / double(count));
                  T *plane = dx + p * inSize;
                  win.forEach(w,
                              [&](int64_t offset) { plane[offset] += share; });
                });
}

template <typename T>
void globalAveragePool(const T *x, const int64_t *xShape, int rank, T *y) {
  int64_t planes = xShape[0] * xShape[1];
  int64_t size = product(xShape + 2, rank - 2);
#pragma omp parallel for if (planes * size > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    y[p] = T(sumInDouble(x + p * size, size) / double(size));
  }
}

template void maxPool<float>(const float *, const int64_t *, float *,
                             const int64_t *, int, const int64_t *,
                             const int64_t *, const int64_t *, const int64_t *);
template void maxPool<double>(const double *, const int64_t *, double *,
                              const int64_t *, int, const int64_t *,
                              const int64_t *, const int64_t *,
                              const int64_t *);
template void averagePool<float>(const float *, const int64_t *, float *,
                                 const int64_t *, int, const int64_t *,
                                 const int64_t *, const int64_t *, bool);
template void averagePool<double>(const double *, const int64_t *, double *,
                                  const int64_t *, int, const int64_t *,
                                  const int64_t *, const int64_t *, bool);
#define PIPE_INSTANTIATE(T)                                                    \
  template void maxPoolGrad<T>(const T *, const int64_t *, const T *,          \
                               const int64_t *, int, const int64_t *,          \
                               const int64_t *, const int64_t *,               \
                               const int64_t *, T *);                          \
  template void averagePoolGrad<T>(const T *, const int64_t *, T *,            \
                                   const int64_t *, int, const int64_t *,      \
                                   const int64_t *, const int64_t *, bool);
PIPE_INSTANTIATE(float)
PIPE_INSTANTIATE(double)
#undef PIPE_INSTANTIATE
template void globalAveragePool<float>(const float *, const int64_t *, int,
                                       float *);
template void globalAveragePool<double>(const double *, const int64_t *, int,
                                        double *);

} // namespace cpu
} // namespace pipe_rt
