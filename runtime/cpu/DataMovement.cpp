//===- DataMovement.cpp - transpose, slice, gather, concat, pad, ... ------===//
//
// Byte-level kernels for any element type. transpose, slice, broadcastTo and
// tile are one strided copy: the output is dense and element i of it comes
// from the input at a linear function of i's index (strides may be negative
// or zero). Axes are coalesced first, so inner runs are long; contiguous
// runs are memcpy'd.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ShapeUtil.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

std::vector<int64_t> denseStrides(const int64_t *shape, int rank) {
  std::vector<int64_t> strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// dst[i] = src[i * stride] for n elements of N bytes (strides in elements).
template <size_t N>
void copyRun(const char *src, int64_t stride, int64_t n, char *dst) {
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + i * N, src + i * stride * int64_t(N), N);
}

void copyRun(const char *src, int64_t stride, int64_t n, size_t size,
             char *dst) {
  if (stride == 1) {
    std::memcpy(dst, src, n * size);
    return;
  }
  switch (size) {
  case 1:
    return copyRun<1>(src, stride, n, dst);
  case 2:
    return copyRun<2>(src, stride, n, dst);
  case 4:
    return copyRun<4>(src, stride, n, dst);
  case 8:
    return copyRun<8>(src, stride, n, dst);
  default:
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + i * size, src + i * stride * int64_t(size), size);
  }
}

/// Fills n elements of `size` bytes at dst with *value (zeros when null).
void fillRun(const void *value, int64_t n, size_t size, char *dst) {
  if (!value) {
    std::memset(dst, 0, n * size);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + i * size, value, size);
}

/// Calls f(row, index) for rows [0, rows) of a row-major iteration space
/// `outer` (the output without its innermost axis), in parallel blocks;
/// `index` is the row's multi-index, kept up to date by an odometer.
template <typename F>
void forEachRow(const std::vector<int64_t> &outer, int64_t rowWork, F f) {
  int64_t rows = 1;
  for (int64_t e : outer)
    rows *= e;
  int rank = int(outer.size());
  const int64_t block = 64;
  int64_t blocks = (rows + block - 1) / block;
#pragma omp parallel if (rows * rowWork > 65536 && blocks > 1)
  {
    std::vector<int64_t> index(rank);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t begin = b * block, end = std::min(rows, begin + block);
      for (int64_t rem = begin, d = rank - 1; d >= 0; --d) {
        index[d] = rem % outer[d];
        rem /= outer[d];
      }
      for (int64_t row = begin; row < end; ++row) {
        f(row, index.data());
        for (int d = rank - 1; d >= 0; --d) {
          if (++index[d] < outer[d])
            break;
          index[d] = 0;
        }
      }
    }
  }
}

/// y (dense, shape `shape`) at index i = x at sum(i_d * strides_d), strides
/// in elements.
void stridedCopy(const char *x, const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &strides, size_t size, char *y) {
  std::vector<int64_t> extent, stride;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return;
    if (shape[d] == 1)
      continue;
    if (!extent.empty() && stride.back() == strides[d] * shape[d]) {
      extent.back() *= shape[d];
      stride.back() = strides[d];
    } else {
      extent.push_back(shape[d]);
      stride.push_back(strides[d]);
    }
  }
  if (extent.empty()) {
    std::memcpy(y, x, size);
    return;
  }
  int64_t inner = extent.back(), innerStride = stride.back();
  extent.pop_back();
  stride.pop_back();
  forEachRow(extent, inner, [&](int64_t row, const int64_t *index) {
    int64_t offset = 0;
    for (size_t d = 0; d < extent.size(); ++d)
      offset += index[d] * stride[d];
    copyRun(x + offset * int64_t(size), innerStride, inner, size,
            y + row * inner * int64_t(size));
  });
}

} // namespace

/// y[b][c][r] = x[b][r][c] for `batches` matrices of rows x cols elements
/// of `kBytes` bytes, in tiles that stay in cache.
template <size_t kBytes>
void transposeMatrices(const char *x, int64_t batches, int64_t rows,
                       int64_t cols, char *y) {
  constexpr int64_t kTile = 32;
  int64_t rowTiles = (rows + kTile - 1) / kTile;
  int64_t colTiles = (cols + kTile - 1) / kTile;
  int64_t tiles = rowTiles * colTiles;
#pragma omp parallel for if (batches * rows * cols > 32768)
  for (int64_t item = 0; item < batches * tiles; ++item) {
    int64_t b = item / tiles;
    int64_t r0 = (item % tiles) / colTiles * kTile;
    int64_t c0 = (item % colTiles) * kTile;
    int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
    const char *in = x + b * rows * cols * int64_t(kBytes);
    char *out = y + b * rows * cols * int64_t(kBytes);
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c)
        std::memcpy(out + (c * rows + r) * int64_t(kBytes),
                    in + (r * cols + c) * int64_t(kBytes), kBytes);
  }
}

void transpose(const void *x, const int64_t *xShape, int rank,
               const int64_t *perm, size_t elementSize, void *y) {
  // Channels first to last and back, of 4-byte elements: batched matrix
  // transposes.
  if (rank == 4 && elementSize == 4) {
    bool toLast = perm[0] == 0 && perm[1] == 2 && perm[2] == 3 && perm[3] == 1;
    bool toFirst = perm[0] == 0 && perm[1] == 3 && perm[2] == 1 && perm[3] == 2;
    if (toLast || toFirst) {
      int64_t rows = toLast ? xShape[1] : xShape[1] * xShape[2];
      int64_t cols = toLast ? xShape[2] * xShape[3] : xShape[3];
      transposeMatrices<4>(static_cast<const char *>(x), xShape[0], rows, cols,
                           static_cast<char *>(y));
      return;
    }
  }
  std::vector<int64_t> xStrides = denseStrides(xShape, rank);
  std::vector<int64_t> shape(rank), strides(rank);
  for (int i = 0; i < rank; ++i) {
    shape[i] = xShape[perm[i]];
    strides[i] = xStrides[perm[i]];
  }
  stridedCopy(static_cast<const char *>(x), shape, strides, elementSize,
              static_cast<char *>(y));
}

void slice(const void *x, const int64_t *xShape, int rank,
           const int64_t *offsets, const int64_t *sizes, const int64_t *strides,
           size_t elementSize, void *y) {
  std::vector<int64_t> xStrides = denseStrides(xShape, rank);
  std::vector<int64_t> shape(sizes, sizes + rank), steps(rank);
  int64_t base = 0;
  for (int i = 0; i < rank; ++i) {
    steps[i] = strides[i] * xStrides[i];
    if (sizes[i] > 0)
      base += offsets[i] * xStrides[i];
  }
  stridedCopy(static_cast<const char *>(x) + base * int64_t(elementSize), shape,
              steps, elementSize, static_cast<char *>(y));
}

template <typename I>
bool gather(const void *data, const int64_t *dataShape, int rank, int64_t axis,
            const I *indices, int64_t numIndices, size_t elementSize, void *y,
            int64_t *badIndex) {
  int64_t extent = dataShape[axis];
  for (int64_t j = 0; j < numIndices; ++j) {
    int64_t index = int64_t(indices[j]);
    if (index < -extent || index >= extent) {
      *badIndex = j;
      return false;
    }
  }
  int64_t outer = product(dataShape, int(axis));
  int64_t bytes = product(dataShape + axis + 1, rank - int(axis) - 1) *
                  int64_t(elementSize);
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(y);
#pragma omp parallel for if (outer * numIndices * bytes > 262144)
  for (int64_t item = 0; item < outer * numIndices; ++item) {
    int64_t o = item / numIndices, j = item % numIndices;
    int64_t index = int64_t(indices[j]);
    if (index < 0)
      index += extent;
    std::memcpy(dst + item * bytes, src + (o * extent + index) * bytes, bytes);
  }
  return true;
}

void concat(const void *const *inputs, const int64_t *const *shapes, int count,
            int rank, int64_t axis, size_t elementSize, void *y) {
  if (count == 0)
    return;
  int64_t outer = product(shapes[0], int(axis));
  std::vector<int64_t> bytes(count);
  int64_t rowBytes = 0;
  for (int i = 0; i < count; ++i) {
    bytes[i] =
        product(shapes[i] + axis, rank - int(axis)) * int64_t(elementSize);
    rowBytes += bytes[i];
  }
  char *dst = static_cast<char *>(y);
#pragma omp parallel for if (outer * rowBytes > 262144 && outer > 1)
  for (int64_t o = 0; o < outer; ++o) {
    char *row = dst + o * rowBytes;
    for (int i = 0; i < count; ++i) {
      std::memcpy(row, static_cast<const char *>(inputs[i]) + o * bytes[i],
                  bytes[i]);
      row += bytes[i];
    }
  }
}

void split(const void *x, const int64_t *xShape, int rank, int64_t axis,
           const int64_t *sizes, int count, size_t elementSize,
           void *const *outputs) {
  int64_t outer = product(xShape, int(axis));
  int64_t inner =
      product(xShape + axis + 1, rank - int(axis) - 1) * int64_t(elementSize);
  int64_t rowBytes = xShape[axis] * inner;
  const char *src = static_cast<const char *>(x);
#pragma omp parallel for if (outer * rowBytes > 262144 && outer > 1)
  for (int64_t o = 0; o < outer; ++o) {
    const char *row = src + o * rowBytes;
    for (int i = 0; i < count; ++i) {
      int64_t bytes = sizes[i] * inner;
      std::memcpy(static_cast<char *>(outputs[i]) + o * bytes, row, bytes);
      row += bytes;
    }
  }
}

void broadcastTo(const void *x, const int64_t *xShape, int xRank,
                 const int64_t *yShape, int yRank, size_t elementSize,
                 void *y) {
  std::vector<int64_t> xStrides = denseStrides(xShape, xRank);
  std::vector<int64_t> shape(yShape, yShape + yRank), strides(yRank, 0);
  for (int i = 0; i < xRank; ++i) {
    int yi = i + yRank - xRank;
    strides[yi] = xShape[i] == 1 ? 0 : xStrides[i];
  }
  stridedCopy(static_cast<const char *>(x), shape, strides, elementSize,
              static_cast<char *>(y));
}

void tile(const void *x, const int64_t *xShape, int rank,
          const int64_t *repeats, size_t elementSize, void *y) {
  // y viewed as [r0, x0, r1, x1, ...] reads x at [x0, x1, ...].
  std::vector<int64_t> xStrides = denseStrides(xShape, rank);
  std::vector<int64_t> shape, strides;
  for (int i = 0; i < rank; ++i) {
    shape.push_back(repeats[i]);
    strides.push_back(0);
    shape.push_back(xShape[i]);
    strides.push_back(xStrides[i]);
  }
  stridedCopy(static_cast<const char *>(x), shape, strides, elementSize,
              static_cast<char *>(y));
}

void pad(const void *x, const int64_t *xShape, int rank, const int64_t *pads,
         PadMode mode, const void *value, size_t elementSize, void *y) {
  // Per axis, the input index of every output index, or -1 for the
  // constant. Negative pads crop first; reflect and edge then pad the
  // cropped input (numpy's reflect, repeated for pads beyond its extent).
  std::vector<std::vector<int64_t>> source(rank);
  std::vector<int64_t> outShape(rank), interiorBegin(rank), interiorEnd(rank);
  for (int d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    int64_t first = std::max<int64_t>(0, -begin);
    int64_t extent = xShape[d] - first - std::max<int64_t>(0, -end);
    int64_t lead = std::max<int64_t>(0, begin);
    int64_t out = xShape[d] + begin + end;
    outShape[d] = out;
    if (out <= 0)
      return;
    interiorBegin[d] = std::min(lead, out);
    interiorEnd[d] = std::min(out, lead + std::max<int64_t>(extent, 0));
    source[d].resize(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t i = o - lead;
      if (i < 0 || i >= extent) {
        if (mode == PadMode::Constant || extent <= 0) {
          i = -1;
        } else if (mode == PadMode::Edge) {
          i = std::min(std::max<int64_t>(i, 0), extent - 1);
        } else if (extent == 1) {
          i = 0;
        } else {
          int64_t period = 2 * (extent - 1);
          i = ((i % period) + period) % period;
          if (i >= extent)
            i = period - i;
        }
      }
      source[d][o] = i < 0 ? -1 : first + i;
    }
  }
  if (rank == 0) {
    std::memcpy(y, x, elementSize);
    return;
  }
  // Without a constant (non-constant modes on an empty crop), fill zeros.
  const void *fill = mode == PadMode::Constant ? value : nullptr;
  std::vector<int64_t> xStrides = denseStrides(xShape, rank);
  int last = rank - 1;
  int64_t inner = outShape[last];
  std::vector<int64_t> outer(outShape.begin(), outShape.end() - 1);
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  int64_t size = int64_t(elementSize);
  const std::vector<int64_t> &lastSource = source[last];
  forEachRow(outer, inner, [&](int64_t row, const int64_t *index) {
    char *out = dst + row * inner * size;
    int64_t offset = 0;
    for (int d = 0; d < last; ++d) {
      int64_t i = source[d][index[d]];
      if (i < 0) {
        fillRun(fill, inner, elementSize, out);
        return;
      }
      offset += i * xStrides[d];
    }
    const char *in = src + offset * size;
    int64_t lo = interiorBegin[last], hi = interiorEnd[last];
    for (int64_t o = 0; o < inner; ++o) {
      if (o == lo && hi > lo) {
        std::memcpy(out + o * size, in + lastSource[o] * size,
                    (hi - lo) * size);
        o = hi - 1;
        continue;
      }
      int64_t i = lastSource[o];
      if (i < 0)
        fillRun(fill, 1, elementSize, out + o * size);
      else
        std::memcpy(out + o * size, in + i * size, elementSize);
    }
  });
}

void trilu(const void *x, const int64_t *xShape, int rank, int64_t k,
           bool upper, size_t elementSize, void *y) {
  int64_t rows = xShape[rank - 2], cols = xShape[rank - 1];
  int64_t matrices = product(xShape, rank - 2);
  int64_t size = int64_t(elementSize);
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
#pragma omp parallel for if (matrices * rows * cols * size > 262144)
  for (int64_t r = 0; r < matrices * rows; ++r) {
    int64_t i = r % rows;
    // Kept columns: j - i >= k (upper) or j - i <= k (lower).
    int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
    int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
    const char *in = src + r * cols * size;
    char *out = dst + r * cols * size;
    std::memset(out, 0, lo * size);
    std::memcpy(out + lo * size, in + lo * size, (hi - lo) * size);
    std::memset(out + hi * size, 0, (cols - hi) * size);
  }
}

template bool gather<int32_t>(const void *, const int64_t *, int, int64_t,
                              const int32_t *, int64_t, size_t, void *,
                              int64_t *);
template bool gather<int64_t>(const void *, const int64_t *, int, int64_t,
                              const int64_t *, int64_t, size_t, void *,
                              int64_t *);

} // namespace cpu
} // namespace pipe_rt
