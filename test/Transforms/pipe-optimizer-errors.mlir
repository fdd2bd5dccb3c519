// RUN: pipe-opt %s -split-input-file -pipe-optimizer="momentum=0.5" -verify-diagnostics -o /dev/null
// RUN: not pipe-opt %s -split-input-file -pipe-optimizer="nesterov=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not pipe-opt %s -split-input-file -pipe-optimizer="optimizer=adam beta2=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BETAS
// RUN: not pipe-opt %s -split-input-file -pipe-optimizer="optimizer=rmsprop" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pipe-opt %s -split-input-file -pipe-optimizer="optimizer=adamw momentum=0.9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ADAM-MOMENTUM
// NESTEROV: Nesterov momentum needs a momentum and zero dampening
// BETAS: the betas must be in [0, 1), not 9.000000e-01 and 1.000000e+00
// UNKNOWN: unknown optimizer 'rmsprop' (known: sgd, adam, adamw)
// ADAM-MOMENTUM: momentum and Nesterov are options of SGD; adamw has beta1 and beta2

// @main without gradients.
pipe.parameter @w : tensor<2xf32> trainable
// expected-error @+1 {{@main returns no gradients; run --pipe-autodiff first}}
func.func @main(%x: tensor<2xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %l = pipe.reduce_sum %x axes [0] : tensor<2xf32>
  return %l : tensor<f32>
}

// -----

// A state name that is already taken.
// expected-error @+1 {{the optimizer state 'opt.w.momentum_buffer' clashes with an existing symbol}}
pipe.parameter @w : tensor<2xf32> trainable
pipe.parameter @opt.w.momentum_buffer : tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> (tensor<f32> {pipe.name = "loss"},
                                     tensor<2xf32> {pipe.grad_of = @w}) {
  %l = pipe.reduce_sum %x axes [0] : tensor<2xf32>
  return %l, %x : tensor<f32>, tensor<2xf32>
}

// -----

// An @update already there.
// expected-error @+1 {{the module already has an @update}}
module {
  pipe.parameter @w : tensor<2xf32> trainable
  func.func @main(%x: tensor<2xf32>) -> (tensor<f32> {pipe.name = "loss"},
                                       tensor<2xf32> {pipe.grad_of = @w}) {
    %l = pipe.reduce_sum %x axes [0] : tensor<2xf32>
    return %l, %x : tensor<f32>, tensor<2xf32>
  }
  func.func @update() {
    return
  }
}
