//===- KernelTypes.h - what every target's kernels take ---------*- C++ -*-===//
//
// Part of the pipe runtime. The enums and option structs that generated
// stage code passes to the kernels of its target: runtime/cpu/Kernels.h
// and runtime/cuda/Kernels.h take the same ones, so that the compiler
// writes one call for both.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_KERNELTYPES_H
#define PIPE_RUNTIME_COMMON_KERNELTYPES_H

namespace pipe_rt {

/// A convolution's fused activation (pipe.conv's `activation`): none,
/// max(y, 0), min(max(y, low), high), y * sigmoid(y).
enum ConvActivation { kNoActivation, kRelu, kClip, kSilu };

enum class ReduceKind { Sum, Mean, Max };

enum class LossReduction { None, Sum, Mean };

enum class PadMode { Constant, Reflect, Edge };

/// Optimizer updates as torch.optim computes them (docs/training.md).
struct SGDOptions {
  double lr, momentum, dampening, weightDecay;
  bool nesterov;
};

struct AdamOptions {
  double lr, beta1, beta2, eps, weightDecay;
  /// AdamW: decay the parameter, not the gradient.
  bool decoupled;
};

} // namespace pipe_rt

#endif // PIPE_RUNTIME_COMMON_KERNELTYPES_H
