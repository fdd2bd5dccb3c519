// RUN: pipe-opt %s -pipe-prepare-training | FileCheck %s

// Batch normalization's running statistics are state, not weights: they
// lose `trainable`, unless the model reads them elsewhere too. Scale and
// bias stay trainable.
// CHECK: pipe.parameter @scale : tensor<3xf32> trainable
// CHECK: pipe.parameter @bias : tensor<3xf32> trainable
// CHECK: pipe.parameter @running_mean : tensor<3xf32>{{$}}
// CHECK: pipe.parameter @running_var : tensor<3xf32>{{$}}
// CHECK: pipe.parameter @shared_mean : tensor<3xf32> trainable
pipe.parameter @scale : tensor<3xf32> trainable
pipe.parameter @bias : tensor<3xf32> trainable
pipe.parameter @running_mean : tensor<3xf32> trainable
pipe.parameter @running_var : tensor<3xf32> trainable
pipe.parameter @shared_mean : tensor<3xf32> trainable
func.func @main(%x: tensor<2x3x4x4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %s = pipe.param_ref @scale : tensor<3xf32>
  %b = pipe.param_ref @bias : tensor<3xf32>
  %m = pipe.param_ref @running_mean : tensor<3xf32>
  %v = pipe.param_ref @running_var : tensor<3xf32>
  %sm = pipe.param_ref @shared_mean : tensor<3xf32>
  %y, %rm, %rv = pipe.batch_norm_train %x, %s, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  %z, %rm2, %rv2 = pipe.batch_norm_train %y, %s, %b, %sm, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  %l = pipe.reduce_mean %z axes [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  %e = pipe.reduce_mean %sm axes [0] : tensor<3xf32>
  %t = pipe.add %l, %e : tensor<f32>, tensor<f32>
  return %t : tensor<f32>
}

// A --freeze pattern that matches only statistics says so.
// RUN: not pipe-opt %s -pipe-prepare-training='freeze=running_*' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FREEZE
// FREEZE: error: --freeze: pattern 'running_*' matches only batch normalization statistics, which are never trained
