//===- Optimizer.cpp - torch.optim updates, one parameter at a time -------===//
//
// Part of the pipe runtime. Each kernel is one pass over the parameter,
// with the arithmetic in the order torch.optim (1.13, single-tensor path)
// does it, so a float32 run matches PyTorch's to rounding. The arithmetic
// of one element is OptimizerMath.h's, which the CUDA kernels share.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "OptimizerMath.h"

namespace pipe_rt {
namespace cpu {

template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *buffer, int64_t count,
               int64_t step, const SGDOptions &options, T *newParam,
               T *newBuffer) {
  const SGDStep<T> update(options, step);
#pragma omp parallel for if (count > 32768)
  for (int64_t i = 0; i < count; ++i)
    newParam[i] = update.apply(param[i], grad[i], buffer ? buffer + i : nullptr,
                               newBuffer ? newBuffer + i : nullptr);
}

template <typename T>
void adamUpdate(const T *param, const T *grad, const T *expAvg,
                const T *expAvgSq, int64_t count, int64_t step,
                const AdamOptions &options, T *newParam, T *newExpAvg,
                T *newExpAvgSq) {
  const AdamStep<T> update(options, step);
#pragma omp parallel for if (count > 32768)
  for (int64_t i = 0; i < count; ++i) {
    T m = expAvg[i], v = expAvgSq[i];
    newParam[i] = update.apply(param[i], grad[i], &m, &v);
    newExpAvg[i] = m;
    newExpAvgSq[i] = v;
  }
}

#define PIPE_INSTANTIATE(T)                                                    \
  template void sgdUpdate<T>(const T *, const T *, const T *, int64_t,         \
                             int64_t, const SGDOptions &, T *, T *);           \
  template void adamUpdate<T>(const T *, const T *, const T *, const T *,      \
                              int64_t, int64_t, const AdamOptions &, T *, T *, \
                              T *);
PIPE_INSTANTIATE(float)
PIPE_INSTANTIATE(double)
#undef PIPE_INSTANTIATE

} // namespace cpu
} // namespace pipe_rt
