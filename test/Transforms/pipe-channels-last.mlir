// RUN: pipe-opt %s -pipe-channels-last -cse -split-input-file | FileCheck %s

// (The pipelines run CSE after the pass, as the RUN line does.)

// Two convolutions with a ReLU between: one transpose in, one out; the
// ReLU becomes the first convolution's fused activation.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x4x4xf32>, %[[W:.*]]: tensor<8x8x3x3xf32>)
// CHECK: %[[T:.*]] = pipe.transpose %[[X]] perm [0, 2, 3, 1] : tensor<1x8x4x4xf32>
// CHECK: %[[Y:.*]] = pipe.conv %[[T]], %[[W]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 channels_last {activation = #pipe<conv_activation relu>} : tensor<1x4x4x8xf32>, tensor<8x8x3x3xf32>
// CHECK-NOT: pipe.relu
// CHECK: %[[Z:.*]] = pipe.conv %[[Y]], %[[W]] {{.*}} channels_last : tensor<1x4x4x8xf32>
// CHECK: %[[B:.*]] = pipe.transpose %[[Z]] perm [0, 3, 1, 2] : tensor<1x4x4x8xf32>
// CHECK: return %[[B]] : tensor<1x8x4x4xf32>
func.func @chain(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %y = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %r = pipe.relu %y : tensor<1x8x4x4xf32>
  %z = pipe.conv %r, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  return %z : tensor<1x8x4x4xf32>
}

// -----

// A residual add of the block's channels-first input: the input is
// transposed once, for the convolution and the add, and the sum stays
// channels last until the return. A per-channel bias [8, 1, 1] moves to
// [1, 1, 1, 8] (a reshape).
// CHECK-LABEL: func @residual
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x4x4xf32>, %[[W:.*]]: tensor<8x8x3x3xf32>, %[[C:.*]]: tensor<8x1x1xf32>)
// CHECK: %[[T:.*]] = pipe.transpose %[[X]] perm [0, 2, 3, 1]
// CHECK-NOT: pipe.transpose %[[X]]
// CHECK: %[[Y:.*]] = pipe.conv %[[T]], %[[W]] {{.*}} channels_last
// CHECK: %[[S:.*]] = pipe.add %[[Y]], %[[T]] : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
// CHECK: %[[CB:.*]] = pipe.reshape %[[C]] : tensor<8x1x1xf32> to tensor<1x1x1x8xf32>
// CHECK: %[[A:.*]] = pipe.add %[[S]], %[[CB]] : tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>
// CHECK: %[[B:.*]] = pipe.transpose %[[A]] perm [0, 3, 1, 2]
// CHECK: return %[[B]]
func.func @residual(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>, %c: tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %y = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %s = pipe.add %y, %x : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  %a = pipe.add %s, %c : tensor<1x8x4x4xf32>, tensor<8x1x1xf32>
  return %a : tensor<1x8x4x4xf32>
}

// -----

// Batch norm becomes a scale and shift along the last axis; global average
// pooling a mean over axes 1 and 2, whose [1, 1, 1, 8] result is the
// [1, 8, 1, 1] one by a reshape.
// CHECK-LABEL: func @norm_and_pool
// CHECK: %[[Y:.*]] = pipe.conv {{.*}} channels_last
// CHECK: %[[SIGMA:.*]] = pipe.sqrt
// CHECK: %[[S:.*]] = pipe.div %{{.*}}, %[[SIGMA]] : tensor<8xf32>
// CHECK: %[[M:.*]] = pipe.mul %[[Y]], %[[S]] : tensor<1x4x4x8xf32>, tensor<8xf32>
// CHECK: %[[N:.*]] = pipe.add %[[M]], %{{.*}} : tensor<1x4x4x8xf32>, tensor<8xf32>
// CHECK: %[[P:.*]] = pipe.reduce_mean %[[N]] axes [1, 2] keepdims : tensor<1x4x4x8xf32>
// CHECK: %[[R:.*]] = pipe.reshape %[[P]] : tensor<1x1x1x8xf32> to tensor<1x8x1x1xf32>
// CHECK-NOT: pipe.transpose
// CHECK: return %[[R]]
func.func @norm_and_pool(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>, %c: tensor<8xf32>) -> tensor<1x8x1x1xf32> {
  %t = pipe.transpose %x perm [0, 1, 2, 3] : tensor<1x8x4x4xf32>
  %y = pipe.conv %t, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %n = pipe.batch_norm %y, %c, %c, %c, %c : tensor<1x8x4x4xf32>, tensor<8xf32>
  %p = pipe.global_average_pool %n : tensor<1x8x4x4xf32>
  return %p : tensor<1x8x1x1xf32>
}

// -----

// Concatenation along the channels of two channels-last values.
// CHECK-LABEL: func @concat
// CHECK: %[[A:.*]] = pipe.conv {{.*}} channels_last
// CHECK: %[[B:.*]] = pipe.conv {{.*}} channels_last
// CHECK: %[[C:.*]] = pipe.concat %[[A]], %[[B]] axis 3 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
// CHECK: pipe.transpose %[[C]] perm [0, 3, 1, 2]
func.func @concat(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %a = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %b = pipe.conv %a, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %c = pipe.concat %a, %b axis 1 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  return %c : tensor<1x16x4x4xf32>
}

// -----

// What stays channels first: a max pool needs NCHW, so the transposes
// around it stay; double convolutions and 1-D ones are left alone.
// CHECK-LABEL: func @stays
// CHECK: pipe.conv {{.*}} channels_last
// CHECK: %[[F:.*]] = pipe.transpose %{{.*}} perm [0, 3, 1, 2]
// CHECK: pipe.max_pool %[[F]]
// CHECK: pipe.conv %{{.*}} : tensor<1x8x4xf64>, tensor<8x8x3xf64>
// CHECK-NOT: channels_last
func.func @stays(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>, %d: tensor<1x8x4xf64>, %v: tensor<8x8x3xf64>) -> (tensor<1x8x2x2xf32>, tensor<1x8x4xf64>) {
  %y = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %p = pipe.max_pool %y kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x8x4x4xf32>
  %z = pipe.conv %d, %v strides [1] pads [1, 1] dilations [1] group 1 : tensor<1x8x4xf64>, tensor<8x8x3xf64>
  return %p, %z : tensor<1x8x2x2xf32>, tensor<1x8x4xf64>
}

// -----

// Clip (ReLU6) and SiLU fuse; an activation of a convolution that something
// else also reads does not.
// CHECK-LABEL: func @activations
// CHECK: %[[A:.*]] = pipe.conv {{.*}} channels_last {activation = #pipe<conv_activation clip>, activation_max = 6.000000e+00 : f32, activation_min = 0.000000e+00 : f32}
// CHECK: %[[B:.*]] = pipe.conv %[[A]], {{.*}} channels_last {activation = #pipe<conv_activation silu>}
// CHECK-NOT: pipe.sigmoid
// CHECK: %[[C:.*]] = pipe.conv %[[B]], {{.*}} channels_last
// CHECK: %[[R:.*]] = pipe.relu %[[C]]
// CHECK: pipe.add %[[R]], %[[C]]
func.func @activations(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %a = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %a6 = pipe.clip %a {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x8x4x4xf32>
  %b = pipe.conv %a6, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %s = pipe.sigmoid %b : tensor<1x8x4x4xf32>
  %bs = pipe.mul %s, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  %c = pipe.conv %bs, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %r = pipe.relu %c : tensor<1x8x4x4xf32>
  %y = pipe.add %r, %c : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// A clip with one bound stays a clip (oneDNN's would saturate an infinity
// that pipe's leaves); x * sigmoid(x) fuses with its operands either way
// round.
// CHECK-LABEL: func @one_bound
// CHECK: %[[A:.*]] = pipe.conv {{.*}} channels_last :
// CHECK: pipe.clip %[[A]] {max = 6.000000e+00 : f64}
// CHECK: pipe.conv {{.*}} channels_last {activation = #pipe<conv_activation silu>}
func.func @one_bound(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %a = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %a6 = pipe.clip %a {max = 6.0 : f64} : tensor<1x8x4x4xf32>
  %b = pipe.conv %a6, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
  %s = pipe.sigmoid %b : tensor<1x8x4x4xf32>
  %bs = pipe.mul %b, %s : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  return %bs : tensor<1x8x4x4xf32>
}
