// RUN: pipe-opt %s -pipe-update-statistics | FileCheck %s

// The updated running statistics of training-mode batch normalization
// become results of @main that overwrite their parameters, after the
// others. A batch normalization whose statistics are not parameters is
// left alone.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {pipe.name = "loss"}, tensor<3xf32> {pipe.grad_of = @scale, pipe.name = "grad.scale"}, tensor<3xf32> {pipe.assign = @mean}, tensor<3xf32> {pipe.assign = @var})
// CHECK: %[[Y:.*]], %[[RM:.*]], %[[RV:.*]] = pipe.batch_norm_train
// CHECK: pipe.batch_norm_train
// CHECK: return %{{.*}}, %{{.*}}, %[[RM]], %[[RV]] : tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
pipe.parameter @scale : tensor<3xf32> trainable
pipe.parameter @bias : tensor<3xf32> trainable
pipe.parameter @mean : tensor<3xf32>
pipe.parameter @var : tensor<3xf32>
func.func @main(%x: tensor<2x3x4x4xf32>, %other: tensor<3xf32>) -> (tensor<f32> {pipe.name = "loss"}, tensor<3xf32> {pipe.grad_of = @scale, pipe.name = "grad.scale"}) {
  %s = pipe.param_ref @scale : tensor<3xf32>
  %b = pipe.param_ref @bias : tensor<3xf32>
  %m = pipe.param_ref @mean : tensor<3xf32>
  %v = pipe.param_ref @var : tensor<3xf32>
  %y, %rm, %rv = pipe.batch_norm_train %x, %s, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>
  %z, %rm2, %rv2 = pipe.batch_norm_train %y, %s, %b, %other, %other : tensor<2x3x4x4xf32>, tensor<3xf32>
  %l = pipe.reduce_mean %z axes [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  return %l, %s : tensor<f32>, tensor<3xf32>
}
