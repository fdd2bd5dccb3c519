//===- Reduce.cpp - reductions over axes; softmax cross entropy and NLL ---===//
//
// reduce coalesces the axes into alternating kept / reduced runs. When the
// innermost run is kept, each work item accumulates a contiguous chunk of
// outputs over all reduced positions (rows stream through the cache);
// otherwise each output walks its contiguous reduced run. Sums of floating
// types accumulate in double, of integers in int64_t.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace pipe_rt {
namespace cpu {
namespace {

template <typename T>
using Accumulator =
    std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;

template <typename T> bool isNaN(T v) { return v != v; }

template <typename T> struct SumOp {
  using A = Accumulator<T>;
  static A init() { return A(0); }
  static void add(A &acc, T v) { acc += A(v); }
  static T finish(A acc, int64_t) { return T(acc); }
};

template <typename T> struct MeanOp : SumOp<T> {
  using A = Accumulator<T>;
  static T finish(A acc, int64_t count) {
    if (count == 0)
      return std::is_floating_point<T>::value
                 ? std::numeric_limits<T>::quiet_NaN()
                 : T(0);
    return T(acc / A(count));
  }
};

template <typename T> struct MaxOp {
  using A = T;
  static A init() {
    return std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  }
  // NaN wins, as in numpy.
  static void add(A &acc, T v) {
    if (v > acc || isNaN(v))
      acc = v;
  }
  static T finish(A acc, int64_t) { return acc; }
};

template <typename T, typename Op>
void reduceImpl(const T *x, const int64_t *xShape, int rank,
                const bool *reduced, T *y) {
  using A = typename Op::A;
  // Coalesce into runs of kept / reduced axes, dropping unit axes.
  std::vector<int64_t> extent;
  std::vector<bool> isReduced;
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < rank; ++d) {
    (reduced[d] ? count : outputs) *= xShape[d];
    if (xShape[d] == 1)
      continue;
    if (!extent.empty() && isReduced.back() == reduced[d])
      extent.back() *= xShape[d];
    else {
      extent.push_back(xShape[d]);
      isReduced.push_back(reduced[d]);
    }
  }
  if (outputs == 0)
    return;
  if (count == 0) {
    std::fill(y, y + outputs, Op::finish(Op::init(), 0));
    return;
  }
  int runs = int(extent.size());
  std::vector<int64_t> stride(runs, 1);
  for (int i = runs - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * extent[i + 1];
  bool lastKept = runs > 0 && !isReduced.back();
  int64_t inner = lastKept ? extent.back() : 1;
  std::vector<int> keptRuns, reducedRuns;
  for (int i = 0; i < (lastKept ? runs - 1 : runs); ++i)
    (isReduced[i] ? reducedRuns : keptRuns).push_back(i);
  // The innermost reduced run is a loop of its own (contiguous when the
  // last run is reduced); the others advance an odometer.
  int64_t innerCount = 1, innerStride = 0;
  if (!reducedRuns.empty()) {
    innerCount = extent[reducedRuns.back()];
    innerStride = stride[reducedRuns.back()];
    reducedRuns.pop_back();
  }
  int64_t chunk = 1024;
  int64_t chunks = (inner + chunk - 1) / chunk;
  int64_t rows = outputs / inner;
#pragma omp parallel if (outputs * count > 32768)
  {
    std::vector<A> acc(std::min(inner, chunk));
    std::vector<int64_t> index(reducedRuns.size());
#pragma omp for
    for (int64_t item = 0; item < rows * chunks; ++item) {
      int64_t row = item / chunks;
      int64_t begin = (item % chunks) * chunk;
      int64_t width = std::min(inner - begin, chunk);
      int64_t base = begin;
      for (int64_t rem = row, i = int64_t(keptRuns.size()) - 1; i >= 0; --i) {
        int run = keptRuns[i];
        base += (rem % extent[run]) * stride[run];
        rem /= extent[run];
      }
      std::fill(acc.begin(), acc.begin() + width, Op::init());
      std::fill(index.begin(), index.end(), 0);
      int64_t offset = base;
      while (true) {
        for (int64_t t = 0; t < innerCount; ++t) {
          const T *in = x + offset + t * innerStride;
          for (int64_t l = 0; l < width; ++l)
            Op::add(acc[l], in[l]);
        }
        int i = int(reducedRuns.size()) - 1;
        for (; i >= 0; --i) {
          int run = reducedRuns[i];
          offset += stride[run];
          if (++index[i] < extent[run])
            break;
          offset -= stride[run] * extent[run];
          index[i] = 0;
        }
        if (i < 0)
          break;
      }
      T *out = y + row * inner + begin;
      for (int64_t l = 0; l < width; ++l)
        out[l] = Op::finish(acc[l], count);
    }
  }
}

/// The loss of one position; `logProb(n, label, d)` is log p.
template <typename T, typename L, typename LogProb>
bool lossImpl(const int64_t *shape, int rank, const L *labels, const T *weight,
              LossReduction reduction, bool hasIgnoreIndex, int64_t ignoreIndex,
              T *y, int64_t *badLabel, LogProb logProb) {
  int64_t batch = shape[0], classes = shape[1];
  int64_t inner = 1;
  for (int i = 2; i < rank; ++i)
    inner *= shape[i];
  int64_t positions = batch * inner;
  for (int64_t i = 0; i < positions; ++i) {
    int64_t label = int64_t(labels[i]);
    if (hasIgnoreIndex && label == ignoreIndex)
      continue;
    if (label < 0 || label >= classes) {
      *badLabel = i;
      return false;
    }
  }
  std::vector<double> losses(positions), weights(positions);
#pragma omp parallel for if (positions * classes > 32768)
  for (int64_t i = 0; i < positions; ++i) {
    int64_t label = int64_t(labels[i]);
    if (hasIgnoreIndex && label == ignoreIndex) {
      losses[i] = weights[i] = 0;
      continue;
    }
    double w = weight ? double(weight[label]) : 1.0;
    weights[i] = w;
    losses[i] = -w * logProb(i / inner, label, i % inner);
  }
  if (reduction == LossReduction::None) {
    for (int64_t i = 0; i < positions; ++i)
      y[i] = T(losses[i]);
    return true;
  }
  double total = 0, totalWeight = 0;
  for (int64_t i = 0; i < positions; ++i) {
    total += losses[i];
    totalWeight += weights[i];
  }
  // Mean divides by the summed weights of the counted labels (0/0 when
  // every label is ignored, as in ONNX and torch).
  y[0] = T(reduction == LossReduction::Sum ? total : total / totalWeight);
  return true;
}

} // namespace

template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *xShape, int rank,
            const bool *reduced, T *y) {
  switch (kind) {
  case ReduceKind::Sum:
    return reduceImpl<T, SumOp<T>>(x, xShape, rank, reduced, y);
  case ReduceKind::Mean:
    return reduceImpl<T, MeanOp<T>>(x, xShape, rank, reduced, y);
  case ReduceKind::Max:
    return reduceImpl<T, MaxOp<T>>(x, xShape, rank, reduced, y);
  }
}

template <typename T, typename L>
bool softmaxCrossEntropy(const T *scores, const int64_t *shape, int rank,
                         const L *labels, const T *weight,
                         LossReduction reduction, bool hasIgnoreIndex,
                         int64_t ignoreIndex, T *y, int64_t *badLabel) {
  int64_t classes = shape[1];
  int64_t inner = 1;
  for (int i = 2; i < rank; ++i)
    inner *= shape[i];
  auto logProb = [&](int64_t n, int64_t label, int64_t d) {
    const T *row = scores + n * classes * inner + d;
    double top = double(row[0]);
    for (int64_t c = 1; c < classes; ++c)
      if (double(row[c * inner]) > top || std::isnan(double(row[c * inner])))
        top = double(row[c * inner]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(double(row[c * inner]) - top);
    return double(row[label * inner]) - top - std::log(sum);
  };
  return lossImpl(shape, rank, labels, weight, reduction, hasIgnoreIndex,
                  ignoreIndex, y, badLabel, logProb);
}

template <typename T, typename L>
bool nllLoss(const T *input, const int64_t *shape, int rank, const L *labels,
             const T *weight, LossReduction reduction, bool hasIgnoreIndex,
             int64_t ignoreIndex, T *y, int64_t *badLabel) {
  int64_t classes = shape[1];
  int64_t inner = 1;
  for (int i = 2; i < rank; ++i)
    inner *= shape[i];
  auto logProb = [&](int64_t n, int64_t label, int64_t d) {
    return double(input[(n * classes + label) * inner + d]);
  };
  return lossImpl(shape, rank, labels, weight, reduction, hasIgnoreIndex,
                  ignoreIndex, y, badLabel, logProb);
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

} // namespace cpu
} // namespace pipe_rt
