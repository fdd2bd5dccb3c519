//===- OptimizerMath.h - one element of an optimizer step -------*- C++ -*-===//
//
// Part of the pipe runtime. The per-element arithmetic of SGD and Adam(W)
// as torch.optim computes it (docs/training.md), shared by the CPU
// kernels' loops and the CUDA kernels: both targets update a parameter
// with the same operations in the same order (equal to rounding: nvcc
// contracts multiply-adds into FMAs). The per-step constants are computed
// once, on the host, in double.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_OPTIMIZERMATH_H
#define PIPE_RUNTIME_COMMON_OPTIMIZERMATH_H

#include "HostDevice.h"
#include "KernelTypes.h"

#include <cmath>
#include <cstdint>

namespace pipe_rt {

/// SGD's constants at one step, in the element type.
template <typename T> struct SGDStep {
  T lr, momentum, keep, decay;
  bool decays, hasMomentum, nesterov, first;

  SGDStep(const SGDOptions &options, int64_t step)
      : lr(T(options.lr)), momentum(T(options.momentum)),
        keep(T(1 - options.dampening)), decay(T(options.weightDecay)),
        decays(options.weightDecay != 0), hasMomentum(options.momentum != 0),
        nesterov(options.nesterov), first(step <= 1) {}

  /// Element i: the new parameter; the new momentum buffer in *newBuffer
  /// (read from `buffer`) when there is momentum.
  PIPE_HOST_DEVICE T apply(T param, T grad, const T *buffer,
                           T *newBuffer) const {
    T g = grad;
    if (decays)
      g = g + decay * param;
    if (hasMomentum) {
      T b = first ? g : *buffer * momentum + keep * g;
      *newBuffer = b;
      g = nesterov ? g + momentum * b : b;
    }
    return param - lr * g;
  }
};

/// Adam's constants at one step, in the element type.
template <typename T> struct AdamStep {
  T beta1, beta2, oneMinusBeta1, oneMinusBeta2, stepSize, correction2Sqrt, eps,
      decay, shrink;
  bool decays, decoupled;

  AdamStep(const AdamOptions &options, int64_t step) {
    const double t = static_cast<double>(step < 1 ? 1 : step);
    beta1 = T(options.beta1);
    beta2 = T(options.beta2);
    oneMinusBeta1 = T(1 - options.beta1);
    oneMinusBeta2 = T(1 - options.beta2);
    stepSize = T(options.lr / (1 - std::pow(options.beta1, t)));
    correction2Sqrt = T(std::sqrt(1 - std::pow(options.beta2, t)));
    eps = T(options.eps);
    decay = T(options.weightDecay);
    shrink = T(1 - options.lr * options.weightDecay);
    decays = options.weightDecay != 0;
    decoupled = options.decoupled;
  }

  /// Element i: the new parameter, with the new moments in *m and *v
  /// (which hold the old ones).
  PIPE_HOST_DEVICE T apply(T param, T grad, T *m, T *v) const {
    T p = param, g = grad;
    if (decays) {
      if (decoupled)
        p = p * shrink;
      else
        g = g + decay * p;
    }
    *m = *m * beta1 + oneMinusBeta1 * g;
    *v = *v * beta2 + oneMinusBeta2 * g * g;
    T denom = std::sqrt(*v) / correction2Sqrt + eps;
    return p - stepSize * (*m / denom);
  }
};

} // namespace pipe_rt

#endif // PIPE_RUNTIME_COMMON_OPTIMIZERMATH_H
