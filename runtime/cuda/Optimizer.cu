//===- Optimizer.cu - torch.optim updates on the GPU ----------------------===//
//
// One grid-stride pass per parameter, with OptimizerMath.h's arithmetic,
// the CPU kernels' own: both targets compute the same update.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "OptimizerMath.h"

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
template <typename T>
__global__ void sgdKernel(const T *param, const T *grad, const T *buffer,
                          int64_t count, SGDStep<T> update, T *newParam,
                          T *newBuffer) {
  for (int64_t i : GridStride(count))
    newParam[i] = update.apply(param[i], grad[i], buffer ? buffer + i : nullptr,
                               newBuffer ? newBuffer + i : nullptr);
}

template <typename T>
__global__ void adamKernel(const T *param, const T *grad, const T *expAvg,
                           const T *expAvgSq, int64_t count, AdamStep<T> update,
                           T *newParam, T *newExpAvg, T *newExpAvgSq) {
  for (int64_t i : GridStride(count)) {
    T m = expAvg[i], v = expAvgSq[i];
    newParam[i] = update.apply(param[i], grad[i], &m, &v);
    newExpAvg[i] = m;
    newExpAvgSq[i] = v;
  }
}
} // namespace

namespace pipe_rt {
namespace cuda {

template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *buffer, int64_t count,
               int64_t step, const SGDOptions &options, T *newParam,
               T *newBuffer) {
  if (count == 0)
    return;
  sgdKernel<<<gridFor(count), kBlock, 0, computeStream()>>>(
      param, grad, buffer, count, SGDStep<T>(options, step), newParam,
      newBuffer);
  checkLaunch("sgdUpdate");
}

template <typename T>
void adamUpdate(const T *param, const T *grad, const T *expAvg,
                const T *expAvgSq, int64_t count, int64_t step,
                const AdamOptions &options, T *newParam, T *newExpAvg,
                T *newExpAvgSq) {
  if (count == 0)
    return;
  adamKernel<<<gridFor(count), kBlock, 0, computeStream()>>>(
      param, grad, expAvg, expAvgSq, count, AdamStep<T>(options, step),
      newParam, newExpAvg, newExpAvgSq);
  checkLaunch("adamUpdate");
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

} // namespace cuda
} // namespace pipe_rt
