//===- DataMovement.cu - copies with index arithmetic on the GPU ----------===//
//
// Transpose, slice, broadcast and tile are one kernel: each result element
// reads the source at sum_d (i_d mod m_d) * s_d, a Gather below. Pad,
// trilu, gather, concat and split have kernels of their own. Elements are
// moved as unsigned integers of their size.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cstring>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
/// Result element i (row-major over `dims`) reads the source at
/// base + sum_d (i_d mod modulus_d, where modulus_d > 0) * strides_d.
struct Gather {
  int rank = 0;
  int64_t base = 0;
  int64_t dims[kMaxRank] = {}, strides[kMaxRank] = {}, modulus[kMaxRank] = {};

  __device__ int64_t source(int64_t index) const {
    int64_t offset = base;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t at = index % dims[d];
      index /= dims[d];
      offset += (modulus[d] ? at % modulus[d] : at) * strides[d];
    }
    return offset;
  }
};

template <typename E>
__global__ void gatherCopy(const E *x, Gather map, int64_t count, E *y) {
  for (int64_t i : GridStride(count))
    y[i] = x[map.source(i)];
}

/// Runs `launch` with the unsigned integer type of `elementSize` bytes.
template <typename Launch> void bySize(size_t elementSize, Launch launch) {
  switch (elementSize) {
  case 1:
    return launch(uint8_t());
  case 2:
    return launch(uint16_t());
  case 4:
    return launch(uint32_t());
  default:
    return launch(uint64_t());
  }
}

void runGather(const void *x, const Gather &map, size_t elementSize, void *y) {
  int64_t count = 1;
  for (int d = 0; d < map.rank; ++d)
    count *= map.dims[d];
  if (count == 0)
    return;
  bySize(elementSize, [&](auto element) {
    using E = decltype(element);
    gatherCopy<<<gridFor(count), kBlock, 0, computeStream()>>>(
        static_cast<const E *>(x), map, count, static_cast<E *>(y));
  });
  checkLaunch("copy");
}

int64_t productOf(const int64_t *shape, int from, int to) {
  int64_t product = 1;
  for (int d = from; d < to; ++d)
    product *= shape[d];
  return product;
}

/// Per axis of a pad: the result's extent, the padding before the input
/// (`lead`), and the part of the input that negative pads leave (`extent`
/// elements from `first`), with the input's stride.
struct PadAxes {
  int rank = 0;
  int64_t out[kMaxRank], lead[kMaxRank], first[kMaxRank], extent[kMaxRank],
      stride[kMaxRank];
};

template <typename E>
__global__ void padCopy(const E *x, PadAxes axes, PadMode mode, E value,
                        int64_t count, E *y) {
  for (int64_t i : GridStride(count)) {
    int64_t index = i, offset = 0;
    bool outside = false;
    for (int d = axes.rank - 1; d >= 0; --d) {
      int64_t at = index % axes.out[d] - axes.lead[d];
      index /= axes.out[d];
      int64_t extent = axes.extent[d];
      if (at < 0 || at >= extent) {
        if (mode == PadMode::Constant || extent <= 0) {
          outside = true;
        } else if (mode == PadMode::Edge) {
          at = at < 0 ? 0 : extent - 1;
        } else if (extent == 1) {
          at = 0;
        } else {
          // numpy's reflect, repeated for pads beyond the extent.
          int64_t period = 2 * (extent - 1);
          at = ((at % period) + period) % period;
          if (at >= extent)
            at = period - at;
        }
      }
      offset += (axes.first[d] + at) * axes.stride[d];
    }
    // Reflect and edge over an empty crop have nothing to copy: zeros, as
    // the CPU kernel.
    y[i] = !outside ? x[offset] : mode == PadMode::Constant ? value : E(0);
  }
}

template <typename E>
__global__ void triluCopy(const E *x, int64_t rows, int64_t cols, int64_t k,
                          bool upper, int64_t count, E *y) {
  for (int64_t i : GridStride(count)) {
    int64_t col = i % cols, row = (i / cols) % rows;
    bool kept = upper ? col - row >= k : col - row <= k;
    y[i] = kept ? x[i] : E(0);
  }
}

/// Copies [outer, extent, inner] blocks between x, whose middle extent
/// is `fromExtent` starting at `fromStart`, and y likewise.
template <typename E>
__global__ void blockCopy(const E *x, int64_t fromExtent, int64_t fromStart,
                          E *y, int64_t toExtent, int64_t toStart,
                          int64_t extent, int64_t inner, int64_t count) {
  for (int64_t i : GridStride(count)) {
    int64_t j = i % inner, a = (i / inner) % extent, o = i / (inner * extent);
    y[(o * toExtent + toStart + a) * inner + j] =
        x[(o * fromExtent + fromStart + a) * inner + j];
  }
}

void runBlockCopy(const void *x, int64_t fromExtent, int64_t fromStart, void *y,
                  int64_t toExtent, int64_t toStart, int64_t outer,
                  int64_t extent, int64_t inner, size_t elementSize) {
  int64_t count = outer * extent * inner;
  if (count == 0)
    return;
  bySize(elementSize, [&](auto element) {
    using E = decltype(element);
    blockCopy<<<gridFor(count), kBlock, 0, computeStream()>>>(
        static_cast<const E *>(x), fromExtent, fromStart, static_cast<E *>(y),
        toExtent, toStart, extent, inner, count);
  });
  checkLaunch("concat or split");
}

/// Checks the indices alone, for a gather with no elements to move.
template <typename I>
__global__ void checkIndices(int64_t extent, const I *indices,
                             int64_t numIndices, unsigned long long *slot) {
  for (int64_t n : GridStride(numIndices)) {
    int64_t index = int64_t(indices[n]);
    if (index < -extent || index >= extent)
      atomicMin(slot, static_cast<unsigned long long>(n));
  }
}

template <typename E, typename I>
__global__ void gatherRows(const E *data, int64_t extent, int64_t inner,
                           const I *indices, int64_t numIndices, int64_t count,
                           E *y, unsigned long long *slot) {
  for (int64_t i : GridStride(count)) {
    int64_t j = i % inner, n = (i / inner) % numIndices,
            o = i / (inner * numIndices);
    int64_t index = int64_t(indices[n]);
    if (index < 0)
      index += extent;
    if (index < 0 || index >= extent) {
      atomicMin(slot, static_cast<unsigned long long>(n));
      y[i] = E(0);
      continue;
    }
    y[i] = data[(o * extent + index) * inner + j];
  }
}
} // namespace

namespace pipe_rt {
namespace cuda {

void transpose(const void *x, const int64_t *xShape, int rank,
               const int64_t *perm, size_t elementSize, void *y) {
  Layout in = rowMajor(xShape, rank);
  Gather map;
  map.rank = rank;
  for (int d = 0; d < rank; ++d) {
    map.dims[d] = xShape[perm[d]];
    map.strides[d] = in.strides[perm[d]];
  }
  runGather(x, map, elementSize, y);
}

void slice(const void *x, const int64_t *xShape, int rank,
           const int64_t *offsets, const int64_t *sizes, const int64_t *strides,
           size_t elementSize, void *y) {
  Layout in = rowMajor(xShape, rank);
  Gather map;
  map.rank = rank;
  for (int d = 0; d < rank; ++d) {
    map.base += offsets[d] * in.strides[d];
    map.dims[d] = sizes[d];
    map.strides[d] = strides[d] * in.strides[d];
  }
  runGather(x, map, elementSize, y);
}

void broadcastTo(const void *x, const int64_t *xShape, int xRank,
                 const int64_t *yShape, int yRank, size_t elementSize,
                 void *y) {
  Layout from = broadcastLayout(yShape, yRank, xShape, xRank);
  Gather map;
  map.rank = yRank;
  for (int d = 0; d < yRank; ++d) {
    map.dims[d] = from.dims[d];
    map.strides[d] = from.strides[d];
  }
  runGather(x, map, elementSize, y);
}

void tile(const void *x, const int64_t *xShape, int rank,
          const int64_t *repeats, size_t elementSize, void *y) {
  Layout in = rowMajor(xShape, rank);
  Gather map;
  map.rank = rank;
  for (int d = 0; d < rank; ++d) {
    map.dims[d] = xShape[d] * repeats[d];
    map.strides[d] = in.strides[d];
    map.modulus[d] = xShape[d];
  }
  runGather(x, map, elementSize, y);
}

void pad(const void *x, const int64_t *xShape, int rank, const int64_t *pads,
         PadMode mode, const void *value, size_t elementSize, void *y) {
  // Negative pads crop first; reflect and edge then pad the cropped input.
  Layout in = rowMajor(xShape, rank);
  PadAxes axes;
  axes.rank = rank;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    axes.out[d] = xShape[d] + begin + end;
    axes.lead[d] = std::max<int64_t>(0, begin);
    axes.first[d] = std::max<int64_t>(0, -begin);
    axes.extent[d] = xShape[d] - axes.first[d] - std::max<int64_t>(0, -end);
    axes.stride[d] = in.strides[d];
    if (axes.out[d] <= 0)
      return;
    count *= axes.out[d];
  }
  bySize(elementSize, [&](auto element) {
    using E = decltype(element);
    E fill;
    std::memcpy(&fill, value, sizeof(E));
    padCopy<<<gridFor(count), kBlock, 0, computeStream()>>>(
        static_cast<const E *>(x), axes, mode, fill, count,
        static_cast<E *>(y));
  });
  checkLaunch("pad");
}

void trilu(const void *x, const int64_t *xShape, int rank, int64_t k,
           bool upper, size_t elementSize, void *y) {
  int64_t count = productOf(xShape, 0, rank);
  if (count == 0)
    return;
  bySize(elementSize, [&](auto element) {
    using E = decltype(element);
    triluCopy<<<gridFor(count), kBlock, 0, computeStream()>>>(
        static_cast<const E *>(x), xShape[rank - 2], xShape[rank - 1], k, upper,
        count, static_cast<E *>(y));
  });
  checkLaunch("trilu");
}

void concat(const void *const *inputs, const int64_t *const *shapes, int count,
            int rank, int64_t axis, size_t elementSize, void *y) {
  int64_t total = 0;
  for (int i = 0; i < count; ++i)
    total += shapes[i][axis];
  int64_t outer = productOf(shapes[0], 0, int(axis));
  int64_t inner = productOf(shapes[0], int(axis) + 1, rank);
  for (int i = 0, start = 0; i < count; start += shapes[i][axis], ++i)
    runBlockCopy(inputs[i], shapes[i][axis], 0, y, total, start, outer,
                 shapes[i][axis], inner, elementSize);
}

void split(const void *x, const int64_t *xShape, int rank, int64_t axis,
           const int64_t *sizes, int count, size_t elementSize,
           void *const *outputs) {
  int64_t outer = productOf(xShape, 0, int(axis));
  int64_t inner = productOf(xShape, int(axis) + 1, rank);
  for (int i = 0, start = 0; i < count; start += sizes[i], ++i)
    runBlockCopy(x, xShape[axis], start, outputs[i], sizes[i], 0, outer,
                 sizes[i], inner, elementSize);
}

template <typename I>
bool gather(const void *data, const int64_t *dataShape, int rank, int64_t axis,
            const I *indices, int64_t numIndices, size_t elementSize, void *y,
            int64_t *badIndex) {
  int64_t outer = productOf(dataShape, 0, int(axis));
  int64_t inner = productOf(dataShape, int(axis) + 1, rank);
  int64_t count = outer * numIndices * inner;
  if (count > 0) {
    bySize(elementSize, [&](auto element) {
      using E = decltype(element);
      gatherRows<<<gridFor(count), kBlock, 0, computeStream()>>>(
          static_cast<const E *>(data), dataShape[axis], inner, indices,
          numIndices, count, static_cast<E *>(y), indexErrorSlot());
    });
    checkLaunch("gather");
  } else if (numIndices > 0) {
    checkIndices<<<gridFor(numIndices), kBlock, 0, computeStream()>>>(
        dataShape[axis], indices, numIndices, indexErrorSlot());
    checkLaunch("gather");
  }
  return readIndexError(badIndex);
}

template bool gather<int32_t>(const void *, const int64_t *, int, int64_t,
                              const int32_t *, int64_t, size_t, void *,
                              int64_t *);
template bool gather<int64_t>(const void *, const int64_t *, int, int64_t,
                              const int64_t *, int64_t, size_t, void *,
                              int64_t *);

} // namespace cuda
} // namespace pipe_rt
