// RUN: pipe-opt %s -pipe-prepare-training | FileCheck %s

// @v fed only the output that training drops: it gets no gradient, and,
// as PyTorch's optimizers do with such a parameter, no update (no weight
// decay either), so it is no longer trainable.
// CHECK-LABEL: pipe.parameter @w : tensor<4x4xf32> trainable
// CHECK: pipe.parameter @v : tensor<4x4xf32>{{$}}
// CHECK: func.func @main
// CHECK-NOT: pipe.param_ref @v
pipe.parameter @w : tensor<4x4xf32> trainable
pipe.parameter @v : tensor<4x4xf32> trainable
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32> {pipe.name = "h"}, tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4x4xf32>
  %v = pipe.param_ref @v : tensor<4x4xf32>
  %h = pipe.matmul %x, %v : tensor<2x4xf32>, tensor<4x4xf32>
  %y = pipe.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = pipe.reduce_mean %y axes [0, 1] : tensor<2x4xf32>
  return %h, %l : tensor<2x4xf32>, tensor<f32>
}
