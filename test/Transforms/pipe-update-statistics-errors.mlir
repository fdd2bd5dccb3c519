// RUN: pipe-opt %s -split-input-file -pipe-update-statistics -verify-diagnostics -o /dev/null

// A statistic that is also trained.
pipe.parameter @scale : tensor<3xf32> trainable
pipe.parameter @mean : tensor<3xf32> trainable
pipe.parameter @var : tensor<3xf32>
func.func @main(%x: tensor<2x3x4x4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %s = pipe.param_ref @scale : tensor<3xf32>
  %m = pipe.param_ref @mean : tensor<3xf32>
  %v = pipe.param_ref @var : tensor<3xf32>
  // expected-error @+1 {{parameter 'mean' is both trained and the running mean of this batch normalization}}
  %y, %rm, %rv = pipe.batch_norm_train %x, %s, %s, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  %l = pipe.reduce_mean %y axes [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  return %l : tensor<f32>
}

// -----

// Two batch normalizations sharing one running variance.
pipe.parameter @scale : tensor<3xf32> trainable
pipe.parameter @mean1 : tensor<3xf32>
pipe.parameter @mean2 : tensor<3xf32>
pipe.parameter @var : tensor<3xf32>
func.func @main(%x: tensor<2x3x4x4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %s = pipe.param_ref @scale : tensor<3xf32>
  %m1 = pipe.param_ref @mean1 : tensor<3xf32>
  %m2 = pipe.param_ref @mean2 : tensor<3xf32>
  %v = pipe.param_ref @var : tensor<3xf32>
  %y, %rm, %rv = pipe.batch_norm_train %x, %s, %s, %m1, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  // expected-error @+1 {{parameter 'var' is the running variance of this batch normalization and is updated elsewhere too}}
  %z, %rm2, %rv2 = pipe.batch_norm_train %y, %s, %s, %m2, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  %l = pipe.reduce_mean %z axes [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  return %l : tensor<f32>
}
