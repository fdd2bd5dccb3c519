// RUN: pipe-opt %s -pipe-autodiff | FileCheck %s

// loss = mean(relu(x W + b)): gradients of a matmul, a broadcast add, a
// relu and a mean. The frozen parameter gets none; an unused trainable one
// gets zeros.

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {pipe.name = "loss"}, tensor<4x3xf32> {pipe.grad_of = @w, pipe.name = "grad.w"}, tensor<3xf32> {pipe.grad_of = @b, pipe.name = "grad.b"}, tensor<5xf32> {pipe.grad_of = @unused, pipe.name = "grad.unused"})
// The mean spreads the seed over the 2x3 elements.
// CHECK: %[[SEED:.*]] = pipe.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SPREAD:.*]] = pipe.reshape %[[SEED]] : tensor<f32> to tensor<1x1xf32>
// CHECK: %[[SIXTH:.*]] = pipe.constant dense<0.166666{{.*}}> : tensor<2x3xf32>
// CHECK: %[[DMEAN:.*]] = pipe.mul %[[SPREAD]], %[[SIXTH]]
// The relu passes it where its input is positive.
// CHECK: %[[POS:.*]] = pipe.greater %[[H:.*]], %[[ZERO:.*]] :
// CHECK: %[[DRELU:.*]] = pipe.where %[[POS]], %[[DMEAN]], %[[ZERO]]
// The bias gradient sums over the broadcast rows.
// CHECK: %[[DB:.*]] = pipe.reduce_sum %[[DRELU]] axes [0] keepdims : tensor<2x3xf32>
// CHECK: %[[DBR:.*]] = pipe.reshape %[[DB]] : tensor<1x3xf32> to tensor<3xf32>
// dW = x^T dY.
// CHECK: %[[XT:.*]] = pipe.transpose %arg0 perm [1, 0]
// CHECK: %[[DW:.*]] = pipe.matmul %[[XT]], %[[DRELU]]
// CHECK: %[[DU:.*]] = pipe.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[DBR]], %[[DU]]
pipe.parameter @w : tensor<4x3xf32> trainable
pipe.parameter @b : tensor<3xf32> trainable
pipe.parameter @frozen : tensor<3xf32>
pipe.parameter @unused : tensor<5xf32> trainable
func.func @main(%x: tensor<2x4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4x3xf32>
  %b = pipe.param_ref @b : tensor<3xf32>
  %f = pipe.param_ref @frozen : tensor<3xf32>
  %m = pipe.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32>
  %a = pipe.add %m, %b : tensor<2x3xf32>, tensor<3xf32>
  %c = pipe.add %a, %f : tensor<2x3xf32>, tensor<3xf32>
  %r = pipe.relu %c : tensor<2x3xf32>
  %l = pipe.reduce_mean %r axes [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
