// RUN: pipe-opt %s -pipe-prepare-training='loss=aux' | FileCheck %s

// Several scalar results: --loss picks one.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {pipe.name = "aux"})
// CHECK-NOT: pipe.reduce_sum
// CHECK: %[[M:.*]] = pipe.reduce_mean
// CHECK: return %[[M]] : tensor<f32>
pipe.parameter @w : tensor<4xf32> trainable
func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}, tensor<f32> {pipe.name = "aux"}) {
  %w = pipe.param_ref @w : tensor<4xf32>
  %m = pipe.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %a = pipe.reduce_sum %m axes [0] : tensor<4xf32>
  %b = pipe.reduce_mean %m axes [0] : tensor<4xf32>
  return %a, %b : tensor<f32>, tensor<f32>
}

