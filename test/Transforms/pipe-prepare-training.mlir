// RUN: pipe-opt %s -pipe-prepare-training='freeze=emb*' | FileCheck %s

// The loss is the only scalar result; the rest of @main goes. Frozen and
// integer parameters lose `trainable`.
// CHECK-LABEL: pipe.parameter @w : tensor<4x4xf32> trainable
// CHECK: pipe.parameter @emb.table : tensor<10x4xf32>{{$}}
// CHECK: pipe.parameter @steps : tensor<i64>{{$}}
// CHECK: func.func @main(%{{.*}}: tensor<2x4xf32>) -> (tensor<f32> {pipe.name = "loss"})
// CHECK-NOT: pipe.relu
// CHECK: pipe.reduce_mean
// CHECK: return %{{.*}} : tensor<f32>
pipe.parameter @w : tensor<4x4xf32> trainable
pipe.parameter @emb.table : tensor<10x4xf32> trainable
pipe.parameter @steps : tensor<i64> trainable
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32> {pipe.name = "h"}, tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4x4xf32>
  %h = pipe.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %r = pipe.relu %h : tensor<2x4xf32>
  %l = pipe.reduce_mean %h axes [0, 1] : tensor<2x4xf32>
  return %r, %l : tensor<2x4xf32>, tensor<f32>
}

