//===- Kernels.h - CPU kernels that generated stage code calls --*- C++ -*-===//
//
// Part of the pipe runtime. Plain C++17 with OpenMP and OpenBLAS (cblas).
// Generated stage programs call these kernels with static shapes; the
// compiler generates the elementwise loops itself (fused), everything else
// comes from here.
//
// Conventions:
// - Every tensor is dense, row-major, in a buffer the caller owns; outputs
//   never alias inputs.
// - A shape is `const int64_t *shape` plus `int rank`; rank 0 is a scalar.
// - Axes, pads, strides etc. are already normalized by the compiler (non-
//   negative axes; `pads` = begin pads of every spatial axis, then end pads),
//   exactly as the pipe dialect's ops carry them (see
//   include/pipe/Dialect/Pipe/IR/PipeNNOps.td and PipeShapeOps.td).
// - Floating-point kernels are templates instantiated for float and double.
// - Kernels use OpenMP over their outermost independent loop.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CPU_KERNELS_H
#define PIPE_RUNTIME_CPU_KERNELS_H

#include "KernelTypes.h"

#include <cstddef>
#include <cstdint>

namespace pipe_rt {
namespace cpu {

//===----------------------------------------------------------------------===//
// Contractions (OpenBLAS)
//===----------------------------------------------------------------------===//

/// Y[M,N] = alpha * op(A) * op(B) + beta * C, where op transposes when asked
/// (A is [M,K] or [K,M], B is [K,N] or [N,K]) and C, when not null,
/// broadcasts from shape `cShape` (rank `cRank` <= 2) to [M,N].
template <typename T>
void gemm(const T *a, const T *b, const T *c, const int64_t *cShape, int cRank,
          T *y, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
          T alpha, T beta);

/// numpy matmul: batched, with broadcasting batch dimensions and 1-D
/// promotion, exactly as pipe.matmul. `yShape` is the result shape.
template <typename T>
void matmul(const T *a, const int64_t *aShape, int aRank, const T *b,
            const int64_t *bShape, int bRank, T *y, const int64_t *yShape,
            int yRank);

//===----------------------------------------------------------------------===//
// Convolution and pooling (N-D, NC + spatial layout)
//===----------------------------------------------------------------------===//

/// pipe.conv: x [N,C,D1..Dn], w [M,C/group,k1..kn], optional bias [M],
/// y [N,M,O1..On]. `spatial` = n. `parameterWeight`: w is a parameter,
/// which changes only where parametersChanged() says so; float
/// convolutions then keep it in oneDNN's layout.
template <typename T>
void conv(const T *x, const int64_t *xShape, const T *w, const int64_t *wShape,
          const T *bias, T *y, const int64_t *yShape, int spatial,
          const int64_t *strides, const int64_t *pads, const int64_t *dilations,
          int64_t group, bool parameterWeight = false);

/// pipe.conv on float32 through oneDNN (DnnlConv.cpp); false where oneDNN
/// has no kernel for it, and conv's own kernel runs.
bool dnnlConv(const float *x, const int64_t *xShape, const float *w,
              const int64_t *wShape, const float *bias, float *y,
              const int64_t *yShape, int spatial, const int64_t *strides,
              const int64_t *pads, const int64_t *dilations, int64_t group,
              bool parameterWeight, bool channelsLast = false,
              int activation = 0, float low = 0, float high = 0);

using pipe_rt::ConvActivation;
using pipe_rt::kClip;
using pipe_rt::kNoActivation;
using pipe_rt::kRelu;
using pipe_rt::kSilu;

/// pipe.conv with `channels_last`: x [N,D1..Dn,C], y [N,O1..On,M], w and
/// bias as for conv. oneDNN reads and writes the NHWC activations in place
/// (float32); otherwise they are transposed around conv.
template <typename T>
void convChannelsLast(const T *x, const int64_t *xShape, const T *w,
                      const int64_t *wShape, const T *bias, T *y,
                      const int64_t *yShape, int spatial,
                      const int64_t *strides, const int64_t *pads,
                      const int64_t *dilations, int64_t group,
                      bool parameterWeight = false, int activation = 0,
                      float low = 0, float high = 0);

/// Whether a float product of m x n x k multiply-adds goes to oneDNN
/// rather than OpenBLAS (DnnlMatmul.cpp says where each wins).
bool dnnlMatmulPays(int64_t m, int64_t n, int64_t k);

/// y [m, n] = alpha op(a) op(b) on float32 through oneDNN; false where
/// oneDNN has no kernel for it.
bool dnnlMatmul(const float *a, const float *b, float *y, int64_t m, int64_t n,
                int64_t k, bool transA, bool transB, float alpha);

/// pipe.max_pool (`max`) or pipe.average_pool on float32 through oneDNN;
/// false where oneDNN has no kernel for it. `dilations` may be null.
bool dnnlPool(const float *x, const int64_t *xShape, float *y,
              const int64_t *yShape, int spatial, const int64_t *kernel,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, bool max, bool countIncludePad);

/// pipe.conv_transpose on float32 through oneDNN; false where oneDNN has
/// no kernel for it.
bool dnnlConvTranspose(const float *x, const int64_t *xShape, const float *w,
                       const int64_t *wShape, const float *bias, float *y,
                       const int64_t *yShape, int spatial,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, int64_t group);

/// pipe.conv_weight_grad on float32 through oneDNN; false where oneDNN has
/// no kernel for it.
bool dnnlConvWeightGrad(const float *x, const int64_t *xShape, const float *dy,
                        const int64_t *dyShape, float *dw,
                        const int64_t *wShape, int spatial,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, int64_t group);

/// Parameters have been written (an optimizer step, updated statistics):
/// kernels that keep a parameter in their own layout read it again.
void parametersChanged();

/// pipe.conv_transpose: x [N,C,D..], w [C,M/group,k..], optional bias [M].
template <typename T>
void convTranspose(const T *x, const int64_t *xShape, const T *w,
                   const int64_t *wShape, const T *bias, T *y,
                   const int64_t *yShape, int spatial, const int64_t *strides,
                   const int64_t *pads, const int64_t *dilations,
                   int64_t group);

/// pipe.conv_weight_grad: x [N,C,D..], dy [N,M,O..], dw [M,C/group,k..].
template <typename T>
void convWeightGrad(const T *x, const int64_t *xShape, const T *dy,
                    const int64_t *dyShape, T *dw, const int64_t *wShape,
                    int spatial, const int64_t *strides, const int64_t *pads,
                    const int64_t *dilations, int64_t group);

/// pipe.max_pool. Padded positions never win.
template <typename T>
void maxPool(const T *x, const int64_t *xShape, T *y, const int64_t *yShape,
             int spatial, const int64_t *kernel, const int64_t *strides,
             const int64_t *pads, const int64_t *dilations);

/// pipe.average_pool. Without count_include_pad the divisor counts only the
/// positions inside the input; with it, the positions inside the padded
/// input (not those beyond it that ceil_mode adds).
template <typename T>
void averagePool(const T *x, const int64_t *xShape, T *y, const int64_t *yShape,
                 int spatial, const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, bool countIncludePad);

/// pipe.max_pool_grad: dx (shaped like x) gets each dy at its window's
/// maximum, the first on ties.
template <typename T>
void maxPoolGrad(const T *x, const int64_t *xShape, const T *dy,
                 const int64_t *dyShape, int spatial, const int64_t *kernel,
                 const int64_t *strides, const int64_t *pads,
                 const int64_t *dilations, T *dx);

/// pipe.average_pool_grad: dx gets each dy spread over its window, divided
/// by averagePool's divisor.
template <typename T>
void averagePoolGrad(const T *dy, const int64_t *dyShape, T *dx,
                     const int64_t *dxShape, int spatial, const int64_t *kernel,
                     const int64_t *strides, const int64_t *pads,
                     bool countIncludePad);

/// pipe.global_average_pool: y [N,C,1..1].
template <typename T>
void globalAveragePool(const T *x, const int64_t *xShape, int rank, T *y);

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

/// pipe.batch_norm (inference): per channel (axis 1).
template <typename T>
void batchNorm(const T *x, const int64_t *xShape, int rank, const T *scale,
               const T *bias, const T *mean, const T *variance, T epsilon,
               T *y);

/// pipe.batch_norm_train: normalizes with batch statistics (biased
/// variance) and writes runningMean = mean * momentum + batchMean * (1 -
/// momentum), runningVariance likewise with the biased batch variance
/// (ONNX BatchNormalization-15 semantics and test data; torch would use the
/// unbiased one).
template <typename T>
void batchNormTrain(const T *x, const int64_t *xShape, int rank, const T *scale,
                    const T *bias, const T *mean, const T *variance, T epsilon,
                    T momentum, T *y, T *runningMean, T *runningVariance);

/// pipe.batch_norm_train_grad: from x, scale and dy [N,C,...], the input
/// gradient dx and the per-channel scale and bias gradients, with the batch
/// statistics and every sum in double.
template <typename T>
void batchNormTrainGrad(const T *x, const int64_t *xShape, int rank,
                        const T *scale, const T *dy, T epsilon, T *dx,
                        T *scaleGrad, T *biasGrad);

/// pipe.layer_norm: normalizes over axes [axis, rank); scale and optional
/// bias broadcast to those axes (shapes `scaleShape`, `biasShape`).
template <typename T>
void layerNorm(const T *x, const int64_t *xShape, int rank, int64_t axis,
               const T *scale, const int64_t *scaleShape, int scaleRank,
               const T *bias, const int64_t *biasShape, int biasRank, T epsilon,
               T *y);

/// pipe.instance_norm: per (sample, channel) over the spatial axes.
template <typename T>
void instanceNorm(const T *x, const int64_t *xShape, int rank, const T *scale,
                  const T *bias, T epsilon, T *y);

/// pipe.softmax / pipe.log_softmax along one axis; the tensor is viewed as
/// [outer, extent, inner].
template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t extent, int64_t inner,
             bool log);

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

using pipe_rt::ReduceKind;

/// pipe.reduce_*: reduces `x` over the axes with `reduced[d]` set; `y` has
/// the kept extents (keepdims does not change the data layout). Defined for
/// float, double, int32_t and int64_t.
template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *xShape, int rank,
            const bool *reduced, T *y);

using pipe_rt::LossReduction;

/// pipe.softmax_cross_entropy: scores [N,C,d..], labels [N,d..] (int32 or
/// int64: the template parameter L), optional weight [C]. Mean divides by the
/// summed weights of the counted labels (ONNX). Labels equal to ignoreIndex
/// (when hasIgnoreIndex) count nothing. Returns false and sets *badLabel (the
/// flat label index) when a label is out of [0, C) and not ignored.
template <typename T, typename L>
bool softmaxCrossEntropy(const T *scores, const int64_t *shape, int rank,
                         const L *labels, const T *weight,
                         LossReduction reduction, bool hasIgnoreIndex,
                         int64_t ignoreIndex, T *y, int64_t *badLabel);

/// pipe.nll_loss: the same over log-probabilities `input`.
template <typename T, typename L>
bool nllLoss(const T *input, const int64_t *shape, int rank, const L *labels,
             const T *weight, LossReduction reduction, bool hasIgnoreIndex,
             int64_t ignoreIndex, T *y, int64_t *badLabel);

//===----------------------------------------------------------------------===//
// Data movement (any element type: sizes in bytes)
//===----------------------------------------------------------------------===//

/// pipe.transpose: result axis i is input axis perm[i].
void transpose(const void *x, const int64_t *xShape, int rank,
               const int64_t *perm, size_t elementSize, void *y);

/// pipe.slice: offsets/sizes/strides per axis (strides may be negative).
void slice(const void *x, const int64_t *xShape, int rank,
           const int64_t *offsets, const int64_t *sizes, const int64_t *strides,
           size_t elementSize, void *y);

/// pipe.gather along `axis` with int32 or int64 indices (negative ones count
/// from the end). Returns false and sets *badIndex (flat position in
/// indices) on an out-of-range index.
template <typename I>
bool gather(const void *data, const int64_t *dataShape, int rank, int64_t axis,
            const I *indices, int64_t numIndices, size_t elementSize, void *y,
            int64_t *badIndex);

/// pipe.concat of `count` inputs along `axis`; input i has shape
/// shapes[i] (rank `rank`).
void concat(const void *const *inputs, const int64_t *const *shapes, int count,
            int rank, int64_t axis, size_t elementSize, void *y);

/// pipe.split along `axis` into `count` outputs with extents `sizes`.
void split(const void *x, const int64_t *xShape, int rank, int64_t axis,
           const int64_t *sizes, int count, size_t elementSize,
           void *const *outputs);

/// pipe.expand / broadcasting copy of x (shape xShape, rank xRank) to y
/// (shape yShape, rank yRank), numpy rules.
void broadcastTo(const void *x, const int64_t *xShape, int xRank,
                 const int64_t *yShape, int yRank, size_t elementSize, void *y);

/// pipe.tile.
void tile(const void *x, const int64_t *xShape, int rank,
          const int64_t *repeats, size_t elementSize, void *y);

using pipe_rt::PadMode;

/// pipe.pad: pads = begin pads of every axis, then end pads (negative pads
/// crop). `value` (one element of the tensor's type) fills constant mode.
void pad(const void *x, const int64_t *xShape, int rank, const int64_t *pads,
         PadMode mode, const void *value, size_t elementSize, void *y);

/// pipe.trilu over the last two axes.
void trilu(const void *x, const int64_t *xShape, int rank, int64_t k,
           bool upper, size_t elementSize, void *y);

//===----------------------------------------------------------------------===//
// Optimizer updates (torch.optim, see docs/training.md)
//===----------------------------------------------------------------------===//

using pipe_rt::SGDOptions;

/// One SGD step over `count` elements at step `step` (from 1). `buffer`
/// and `newBuffer` (the momentum buffer) are only read and written when
/// the momentum is not zero; at step 1 the buffer starts as the gradient.
template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *buffer, int64_t count,
               int64_t step, const SGDOptions &options, T *newParam,
               T *newBuffer);

using pipe_rt::AdamOptions;

/// One Adam or AdamW step over `count` elements at step `step` (from 1).
template <typename T>
void adamUpdate(const T *param, const T *grad, const T *expAvg,
                const T *expAvgSq, int64_t count, int64_t step,
                const AdamOptions &options, T *newParam, T *newExpAvg,
                T *newExpAvgSq);

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CPU_KERNELS_H
