// RUN: pipe-opt %s -pipe-optimizer | FileCheck %s --check-prefix=SGD
// RUN: pipe-opt %s -pipe-optimizer="momentum=0.9 nesterov=true weight-decay=1e-4 lr=0.05" | FileCheck %s --check-prefix=MOMENTUM
// RUN: pipe-opt %s -pipe-optimizer="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW
// RUN: pipe-opt %s -pipe-optimizer="optimizer=adam lr=0.01 beta1=0.8 weight-decay=0.5" | FileCheck %s --check-prefix=ADAM

// @main after --pipe-autodiff: the loss and the gradients of @w and @b;
// @frozen has none.
pipe.parameter @w : tensor<3x2xf32> trainable = dense<1.0> : tensor<3x2xf32>
pipe.parameter @b : tensor<2xf32> trainable = dense<0.0> : tensor<2xf32>
pipe.parameter @frozen : tensor<2xf32> = dense<0.0> : tensor<2xf32>
func.func @main(%x: tensor<3x2xf32>) -> (tensor<f32> {pipe.name = "loss"},
    tensor<3x2xf32> {pipe.grad_of = @w, pipe.name = "grad.w"},
    tensor<2xf32> {pipe.grad_of = @b, pipe.name = "grad.b"}) {
  %l = pipe.reduce_sum %x axes [0, 1] : tensor<3x2xf32>
  %g = pipe.reduce_sum %x axes [0] : tensor<3x2xf32>
  return %l, %x, %g : tensor<f32>, tensor<3x2xf32>, tensor<2xf32>
}

// Plain SGD, PyTorch's default learning rate: no state.
// SGD-NOT: opt.
// SGD-LABEL: func.func @update(
// SGD-SAME: %[[GW:.*]]: tensor<3x2xf32> {pipe.name = "grad.w"}, %[[GB:.*]]: tensor<2xf32> {pipe.name = "grad.b"}, %[[STEP:.*]]: tensor<i64> {pipe.name = "step"})
// SGD-SAME: -> (tensor<3x2xf32> {pipe.assign = @w}, tensor<2xf32> {pipe.assign = @b})
// SGD: %[[W:.*]] = pipe.param_ref @w
// SGD: %[[NW:.*]] = pipe.sgd_update %[[W]], %[[GW]], %[[STEP]] {lr = 1.000000e-02 : f64} : tensor<3x2xf32>
// SGD: %[[B:.*]] = pipe.param_ref @b
// SGD: %[[NB:.*]] = pipe.sgd_update %[[B]], %[[GB]], %[[STEP]] {lr = 1.000000e-02 : f64} : tensor<2xf32>
// SGD: return %[[NW]], %[[NB]]

// Momentum: one zero-initialized buffer per trained parameter, updated too.
// MOMENTUM: pipe.parameter @w
// MOMENTUM-NEXT: pipe.parameter @opt.w.momentum_buffer : tensor<3x2xf32> = dense<0.000000e+00>
// MOMENTUM-NEXT: pipe.parameter @b
// MOMENTUM-NEXT: pipe.parameter @opt.b.momentum_buffer : tensor<2xf32> = dense<0.000000e+00>
// MOMENTUM-NEXT: pipe.parameter @frozen
// MOMENTUM: -> (tensor<3x2xf32> {pipe.assign = @w}, tensor<3x2xf32> {pipe.assign = @opt.w.momentum_buffer}, tensor<2xf32> {pipe.assign = @b}, tensor<2xf32> {pipe.assign = @opt.b.momentum_buffer})
// MOMENTUM: pipe.sgd_update {{.*}} momentum_buffer {{.*}} {lr = 5.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-04 : f64} : tensor<3x2xf32>, tensor<3x2xf32>

// AdamW: two moments per parameter, decoupled decay 0.01 by default.
// ADAMW: pipe.parameter @opt.w.exp_avg : tensor<3x2xf32>
// ADAMW-NEXT: pipe.parameter @opt.w.exp_avg_sq : tensor<3x2xf32>
// ADAMW: -> (tensor<3x2xf32> {pipe.assign = @w}, tensor<3x2xf32> {pipe.assign = @opt.w.exp_avg}, tensor<3x2xf32> {pipe.assign = @opt.w.exp_avg_sq}, tensor<2xf32> {pipe.assign = @b},
// ADAMW: pipe.adam_update {{.*}} {decoupled, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64} : tensor<3x2xf32>

// Adam: weight decay added to the gradient (not decoupled).
// ADAM: pipe.adam_update {{.*}} {beta1 = 8.000000e-01 : f64, lr = 1.000000e-02 : f64, weight_decay = 5.000000e-01 : f64} : tensor<3x2xf32>
