//===- Optimizer.cpp - torch.optim updates, one parameter at a time -------===//
//
// Part of the pipe runtime. Each kernel is one pass over the parameter,
// with the arithmetic in the order torch.optim (1.13, single-tensor path)
// does it, so a float32 run matches PyTorch's to rounding.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

namespace pipe_rt {
namespace cpu {

template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *buffer, int64_t count,
               int64_t step, const SGDOptions &options, T *newParam,
               T *newBuffer) {
  const T lr = T(options.lr), momentum = T(options.momentum),
          keep = T(1 - options.dampening), decay = T(options.weightDecay);
  const bool first = step <= 1;
#pragma omp parallel for if (count > 32768)
  for (int64_t i = 0; i < count; ++i) {
    T g = grad[i];
    if (options.weightDecay != 0)
      g = g + decay * param[i];
    if (options.momentum != 0) {
      T b = first ? g : buffer[i] * momentum + keep * g;
      newBuffer[i] = b;
      g = options.nesterov ? g + momentum * b : b;
    }
    newParam[i] = param[i] - lr * g;
  }
}

template <typename T>
void adamUpdate(const T *param, const T *grad, const T *expAvg,
                const T *expAvgSq, int64_t count, int64_t step,
                const AdamOptions &options, T *newParam, T *newExpAvg,
                T *newExpAvgSq) {
  const double t = static_cast<double>(step < 1 ? 1 : step);
  const T beta1 = T(options.beta1), beta2 = T(options.beta2);
  const T oneMinusBeta1 = T(1 - options.beta1),
          oneMinusBeta2 = T(1 - options.beta2);
  const T stepSize = T(options.lr / (1 - std::pow(options.beta1, t)));
  const T correction2Sqrt = T(std::sqrt(1 - std::pow(options.beta2, t)));
  const T eps = T(options.eps), decay = T(options.weightDecay);
  const T shrink = T(1 - options.lr * options.weightDecay);
#pragma omp parallel for if (count > 32768)
  for (int64_t i = 0; i < count; ++i) {
    T p = param[i], g = grad[i];
    if (options.weightDecay != 0) {
      if (options.decoupled)
        p = p * shrink;
      else
        g = g + decay * p;
    }
    T m = expAvg[i] * beta1 + oneMinusBeta1 * g;
    T v = expAvgSq[i] * beta2 + oneMinusBeta2 * g * g;
    T denom = std::sqrt(v) / correction2Sqrt + eps;
    newExpAvg[i] = m;
    newExpAvgSq[i] = v;
    newParam[i] = p - stepSize * (m / denom);
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
