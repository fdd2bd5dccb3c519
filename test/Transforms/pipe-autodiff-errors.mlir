// RUN: pipe-opt %s -split-input-file -pipe-autodiff -verify-diagnostics -o /dev/null

// An op without a gradient rule between a parameter and the loss.
pipe.parameter @w : tensor<4xf32> trainable
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4xf32>
  %m = pipe.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{no gradient for 'pipe.abs', which lies between a trainable parameter and the loss}}
  %s = pipe.abs %m : tensor<4xf32>
  %l = pipe.reduce_sum %s axes [0] : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{--pipe-autodiff needs a func.func @main with a single scalar result, the loss (run --pipe-prepare-training first)}}
module {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}
