// RUN: pipe-opt %s -split-input-file -pipe-autodiff -verify-diagnostics -o /dev/null

// An op without a gradient between a parameter and the loss: rounding
// through an integer type.
pipe.parameter @w : tensor<4xf32> trainable
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4xf32>
  %m = pipe.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %i = pipe.cast %m : tensor<4xf32> to tensor<4xi32>
  // expected-error @+1 {{no gradient for 'pipe.cast', which lies between a trainable parameter and the loss}}
  %f = pipe.cast %i : tensor<4xi32> to tensor<4xf32>
  %l = pipe.reduce_sum %f axes [0] : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{--pipe-autodiff needs a func.func @main with a single scalar result, the loss (run --pipe-prepare-training first)}}
module {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}
