//===- Kernels.h - CUDA kernels that generated stage code calls -*- C++ -*-===//
//
// Part of the pipe runtime, CUDA side. The same calls as runtime/cpu's
// Kernels.h, with the same arguments (static shapes in host arrays,
// KernelTypes.h's enums and options), on device pointers: generated code
// writes one call for both targets, under `namespace kernels`. Each call
// queues its work on the stage's compute stream and returns; the calls
// that check labels or indices wait for it.
//
// Matrix products are the exception: they go through GEMM call sites
// (Gemm.h), whose cuBLASLt plans are made once, at start-up.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CUDA_KERNELS_H
#define PIPE_RUNTIME_CUDA_KERNELS_H

#include "Cuda.h"
#include "Gemm.h"
#include "KernelTypes.h"

#include <cstddef>
#include <cstdint>

namespace pipe_rt {
namespace cuda {

//===----------------------------------------------------------------------===//
// Normalization and softmax (float and double)
//===----------------------------------------------------------------------===//

/// pipe.layer_norm over the dimensions from `axis` on; scale and bias
/// broadcast to them.
template <typename T>
void layerNorm(const T *x, const int64_t *xShape, int rank, int64_t axis,
               const T *scale, const int64_t *scaleShape, int scaleRank,
               const T *bias, const int64_t *biasShape, int biasRank, T epsilon,
               T *y);

/// Softmax (or log-softmax) over the middle of [outer, extent, inner].
template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t extent, int64_t inner,
             bool log);

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

/// pipe.reduce_*: over the axes with `reduced[d]` set. Float, double,
/// int32_t and int64_t.
template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *xShape, int rank,
            const bool *reduced, T *y);

/// pipe.softmax_cross_entropy and pipe.nll_loss, as the CPU kernels:
/// false with *badLabel set (the smallest flat position) on a label out of
/// range.
template <typename T, typename L>
bool softmaxCrossEntropy(const T *scores, const int64_t *shape, int rank,
                         const L *labels, const T *weight,
                         LossReduction reduction, bool hasIgnoreIndex,
                         int64_t ignoreIndex, T *y, int64_t *badLabel);
template <typename T, typename L>
bool nllLoss(const T *input, const int64_t *shape, int rank, const L *labels,
             const T *weight, LossReduction reduction, bool hasIgnoreIndex,
             int64_t ignoreIndex, T *y, int64_t *badLabel);

//===----------------------------------------------------------------------===//
// Data movement (any element type of 1, 2, 4 or 8 bytes)
//===----------------------------------------------------------------------===//

void transpose(const void *x, const int64_t *xShape, int rank,
               const int64_t *perm, size_t elementSize, void *y);
void slice(const void *x, const int64_t *xShape, int rank,
           const int64_t *offsets, const int64_t *sizes, const int64_t *strides,
           size_t elementSize, void *y);
template <typename I>
bool gather(const void *data, const int64_t *dataShape, int rank, int64_t axis,
            const I *indices, int64_t numIndices, size_t elementSize, void *y,
            int64_t *badIndex);
void concat(const void *const *inputs, const int64_t *const *shapes, int count,
            int rank, int64_t axis, size_t elementSize, void *y);
void split(const void *x, const int64_t *xShape, int rank, int64_t axis,
           const int64_t *sizes, int count, size_t elementSize,
           void *const *outputs);
void broadcastTo(const void *x, const int64_t *xShape, int xRank,
                 const int64_t *yShape, int yRank, size_t elementSize, void *y);
void tile(const void *x, const int64_t *xShape, int rank,
          const int64_t *repeats, size_t elementSize, void *y);
/// `value` is one element in host memory.
void pad(const void *x, const int64_t *xShape, int rank, const int64_t *pads,
         PadMode mode, const void *value, size_t elementSize, void *y);
void trilu(const void *x, const int64_t *xShape, int rank, int64_t k,
           bool upper, size_t elementSize, void *y);

//===----------------------------------------------------------------------===//
// Optimizer updates (torch.optim's formulas, as the CPU kernels)
//===----------------------------------------------------------------------===//

template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *buffer, int64_t count,
               int64_t step, const SGDOptions &options, T *newParam,
               T *newBuffer);
template <typename T>
void adamUpdate(const T *param, const T *grad, const T *expAvg,
                const T *expAvgSq, int64_t count, int64_t step,
                const AdamOptions &options, T *newParam, T *newExpAvg,
                T *newExpAvgSq);

} // namespace cuda
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CUDA_KERNELS_H
