// RUN: pipe-opt %s -split-input-file -pipe-prepare-training -verify-diagnostics -o /dev/null


// Several scalar results and no --loss.
pipe.parameter @w : tensor<4xf32> trainable
// expected-error @+1 {{the model has several scalar outputs ('loss', 'aux'); name the loss with --loss}}
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}, tensor<f32> {pipe.name = "aux"}) {
  %w = pipe.param_ref @w : tensor<4xf32>
  %m = pipe.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %a = pipe.reduce_sum %m axes [0] : tensor<4xf32>
  %b = pipe.reduce_mean %m axes [0] : tensor<4xf32>
  return %a, %b : tensor<f32>, tensor<f32>
}

// -----

pipe.parameter @w : tensor<4xf32> trainable
// expected-error @+1 {{training needs a scalar loss, but the model has no scalar floating-point output; its outputs are 'y' (tensor<4xf32>)}}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {pipe.name = "y"}) {
  %w = pipe.param_ref @w : tensor<4xf32>
  %m = pipe.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// The only parameter feeds an output that training drops, not the loss.
// expected-error @+1 {{the model has no trainable parameter left to train}}
module {
  pipe.parameter @v : tensor<4x4xf32> trainable
  func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32> {pipe.name = "h"}, tensor<f32> {pipe.name = "loss"}) {
    %v = pipe.param_ref @v : tensor<4x4xf32>
    %h = pipe.matmul %x, %v : tensor<2x4xf32>, tensor<4x4xf32>
    %l = pipe.reduce_mean %x axes [0, 1] : tensor<2x4xf32>
    return %h, %l : tensor<2x4xf32>, tensor<f32>
  }
}
