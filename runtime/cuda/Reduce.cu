//===- Reduce.cu - reductions and losses on the GPU -----------------------===//
//
// A reduction is one block per result element, whose threads stride over
// the reduced elements; floating-point sums accumulate in double, as the
// CPU kernels' do. A loss computes every position's term in one kernel and
// sums them in a second, one block, in double.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <limits>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
constexpr int kReduceBlock = 256;

/// What floating-point elements add up in; integers in int64.
template <typename T> struct Accumulator { using type = double; };
template <> struct Accumulator<int32_t> { using type = int64_t; };
template <> struct Accumulator<int64_t> { using type = int64_t; };

template <typename T>
__global__ void reduceBlocks(ReduceKind kind, const T *x, Layout kept,
                             Layout reduced, int64_t count, T *y) {
  using Acc = typename Accumulator<T>::type;
  __shared__ Acc shared[32];
  const T *base = x + kept.offsetOf(blockIdx.x);
  if (kind == ReduceKind::Max) {
    Acc top = count ? Acc(base[0]) : Acc(0);
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
      Acc v = Acc(base[reduced.offsetOf(r)]);
      top = (v != v || v > top) ? v : top;
    }
    top = blockMax(top, shared);
    // Over no elements: -inf (the lowest integer), as the CPU kernel.
    if (threadIdx.x == 0)
      y[blockIdx.x] = count ? T(top)
                      : std::numeric_limits<T>::has_infinity
                          ? -std::numeric_limits<T>::infinity()
                          : std::numeric_limits<T>::lowest();
    return;
  }
  Acc sum = 0;
  for (int64_t r = threadIdx.x; r < count; r += blockDim.x)
    sum += Acc(base[reduced.offsetOf(r)]);
  sum = blockSum(sum, shared);
  // A mean over no elements is NaN (0 for integers), as the CPU kernel.
  if (threadIdx.x == 0)
    y[blockIdx.x] = kind != ReduceKind::Mean ? T(sum)
                    : count                  ? T(sum / Acc(count))
                    : std::numeric_limits<T>::has_quiet_NaN
                        ? std::numeric_limits<T>::quiet_NaN()
                        : T(0);
}

/// Records `position` as an out-of-range label or index.
__device__ void recordBadIndex(unsigned long long *slot, int64_t position) {
  atomicMin(slot, static_cast<unsigned long long>(position));
}

/// The loss term and weight of every position (n, d) of [N, C, inner]:
/// -w log p(label), with log p from `scores` through log-softmax, or read
/// from `input` (nll). One block per position.
template <typename T, typename L>
__global__ void lossTerms(const T *scores, bool softmax, int64_t classes,
                          int64_t inner, const L *labels, const T *weight,
                          bool hasIgnoreIndex, int64_t ignoreIndex,
                          double *terms, double *weights,
                          unsigned long long *slot) {
  __shared__ double shared[32];
  int64_t position = blockIdx.x;
  int64_t label = int64_t(labels[position]);
  bool ignored = hasIgnoreIndex && label == ignoreIndex;
  if (!ignored && (label < 0 || label >= classes)) {
    if (threadIdx.x == 0)
      recordBadIndex(slot, position);
    ignored = true;
  }
  if (ignored) {
    if (threadIdx.x == 0)
      terms[position] = weights[position] = 0;
    return;
  }
  const T *row =
      scores + (position / inner) * classes * inner + position % inner;
  double logProb;
  if (softmax) {
    double top = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      double v = double(row[c * inner]);
      top = (v != v || v > top) ? v : top;
    }
    top = blockMax(top, shared);
    double sum = 0;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
      sum += ::exp(double(row[c * inner]) - top);
    sum = blockSum(sum, shared);
    logProb = double(row[label * inner]) - top - ::log(sum);
  } else {
    logProb = double(row[label * inner]);
  }
  if (threadIdx.x == 0) {
    double w = weight ? double(weight[label]) : 1.0;
    weights[position] = w;
    terms[position] = -w * logProb;
  }
}

template <typename T>
__global__ void lossTotal(const double *terms, const double *weights,
                          int64_t positions, LossReduction reduction, T *y) {
  __shared__ double shared[32];
  double total = 0, totalWeight = 0;
  for (int64_t i = threadIdx.x; i < positions; i += blockDim.x) {
    total += terms[i];
    totalWeight += weights[i];
  }
  total = blockSum(total, shared);
  totalWeight = blockSum(totalWeight, shared);
  // Mean divides by the summed weights of the counted labels (0/0 when
  // every label is ignored, as in ONNX and torch).
  if (threadIdx.x == 0)
    y[0] = T(reduction == LossReduction::Sum ? total : total / totalWeight);
}

template <typename T>
__global__ void lossEach(const double *terms, int64_t positions, T *y) {
  for (int64_t i : GridStride(positions))
    y[i] = T(terms[i]);
}

template <typename T, typename L>
bool loss(const T *scores, bool softmax, const int64_t *shape, int rank,
          const L *labels, const T *weight, LossReduction reduction,
          bool hasIgnoreIndex, int64_t ignoreIndex, T *y, int64_t *badLabel) {
  int64_t classes = shape[1], inner = 1;
  for (int i = 2; i < rank; ++i)
    inner *= shape[i];
  int64_t positions = shape[0] * inner;
  Scratch terms(positions * sizeof(double)),
      weights(positions * sizeof(double));
  auto *termData = reinterpret_cast<double *>(terms.data());
  auto *weightData = reinterpret_cast<double *>(weights.data());
  cudaStream_t stream = computeStream();
  if (positions > 0)
    lossTerms<<<unsigned(positions), kReduceBlock, 0, stream>>>(
        scores, softmax, classes, inner, labels, weight, hasIgnoreIndex,
        ignoreIndex, termData, weightData, indexErrorSlot());
  if (reduction == LossReduction::None) {
    if (positions > 0)
      lossEach<<<gridFor(positions), kBlock, 0, stream>>>(termData, positions,
                                                          y);
  } else {
    lossTotal<<<1, 1024, 0, stream>>>(termData, weightData, positions,
                                      reduction, y);
  }
  checkLaunch("loss");
  return readIndexError(badLabel);
}
} // namespace

namespace pipe_rt {
namespace cuda {

template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *xShape, int rank,
            const bool *reduced, T *y) {
  Layout all = rowMajor(xShape, rank), kept, over;
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < rank; ++d) {
    Layout &into = reduced[d] ? over : kept;
    into.dims[into.rank] = xShape[d];
    into.strides[into.rank++] = all.strides[d];
    (reduced[d] ? count : outputs) *= xShape[d];
  }
  if (outputs == 0)
    return;
  reduceBlocks<<<unsigned(outputs), kReduceBlock, 0, computeStream()>>>(
      kind, x, kept, over, count, y);
  checkLaunch("reduce");
}

template <typename T, typename L>
bool softmaxCrossEntropy(const T *scores, const int64_t *shape, int rank,
                         const L *labels, const T *weight,
                         LossReduction reduction, bool hasIgnoreIndex,
                         int64_t ignoreIndex, T *y, int64_t *badLabel) {
  return loss(scores, true, shape, rank, labels, weight, reduction,
              hasIgnoreIndex, ignoreIndex, y, badLabel);
}

template <typename T, typename L>
bool nllLoss(const T *input, const int64_t *shape, int rank, const L *labels,
             const T *weight, LossReduction reduction, bool hasIgnoreIndex,
             int64_t ignoreIndex, T *y, int64_t *badLabel) {
  return loss(input, false, shape, rank, labels, weight, reduction,
              hasIgnoreIndex, ignoreIndex, y, badLabel);
}

#define PIPE_INSTANTIATE_REDUCE(T)                                             \
  template void reduce<T>(ReduceKind, const T *, const int64_t *, int,         \
                          const bool *, T *);
PIPE_INSTANTIATE_REDUCE(float)
PIPE_INSTANTIATE_REDUCE(double)
PIPE_INSTANTIATE_REDUCE(int32_t)
PIPE_INSTANTIATE_REDUCE(int64_t)
#undef PIPE_INSTANTIATE_REDUCE

#define PIPE_INSTANTIATE_LOSS(T, L)                                            \
  template bool softmaxCrossEntropy<T, L>(const T *, const int64_t *, int,     \
                                          const L *, const T *, LossReduction, \
                                          bool, int64_t, T *, int64_t *);      \
  template bool nllLoss<T, L>(const T *, const int64_t *, int, const L *,      \
                              const T *, LossReduction, bool, int64_t, T *,    \
                              int64_t *);
PIPE_INSTANTIATE_LOSS(float, int32_t)
PIPE_INSTANTIATE_LOSS(float, int64_t)
PIPE_INSTANTIATE_LOSS(double, int32_t)
PIPE_INSTANTIATE_LOSS(double, int64_t)
#undef PIPE_INSTANTIATE_LOSS

} // namespace cuda
} // namespace pipe_rt
