// RUN: pipe-opt %s -pipe-inference-mode -split-input-file | FileCheck %s
// RUN: pipe-opt %s -pipe-inference-mode=strict -split-input-file -verify-diagnostics

// CHECK-LABEL: func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: pipe.dropout
// CHECK: %[[Y:.*]] = pipe.relu %[[X]]
func.func @dropout(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %d = pipe.dropout %x {ratio = 0.1 : f32} : tensor<4x8xf32>
  %y = pipe.relu %d : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @batch_norm_unused_statistics
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[S:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[Y:.*]] = pipe.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]] {epsilon = 1.000000e-03 : f32}
// CHECK-NOT: batch_norm_train
// CHECK: return %[[Y]]
func.func @batch_norm_unused_statistics(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>,
    %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %y:3 = pipe.batch_norm_train %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %y#0 : tensor<2x3x4x4xf32>
}

// -----

// Used running statistics keep the training form; strict mode rejects it.
// CHECK-LABEL: func @batch_norm_used_statistics
// CHECK: pipe.batch_norm_train
func.func @batch_norm_used_statistics(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>)
    -> (tensor<2x3x4x4xf32>, tensor<3xf32>) {
  // expected-error @+1 {{batch normalization in training mode updates running statistics that are used}}
  %y:3 = pipe.batch_norm_train %x, %s, %s, %s, %s : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %y#0, %y#1 : tensor<2x3x4x4xf32>, tensor<3xf32>
}
