// RUN: pipe-opt %s -pipe-fold-batch-norm -split-input-file -verify-diagnostics | FileCheck %s

// Parameters with values: s = scale / sqrt(var + 1) = [1, 0.5], so the
// weights [1, 2] become [1, 1] and the bias (b - mean) * s + shift
// becomes [1, -1].
pipe.parameter @w : tensor<2x1x1x1xf32> trainable = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
pipe.parameter @b : tensor<2xf32> trainable = dense<[0.5, -1.0]> : tensor<2xf32>
pipe.parameter @scale : tensor<2xf32> trainable = dense<[2.0, 0.5]> : tensor<2xf32>
pipe.parameter @shift : tensor<2xf32> trainable = dense<[1.0, 0.0]> : tensor<2xf32>
pipe.parameter @mean : tensor<2xf32> = dense<[0.5, 1.0]> : tensor<2xf32>
pipe.parameter @var : tensor<2xf32> = dense<[3.0, 0.0]> : tensor<2xf32>

// CHECK-LABEL: func @parameters
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-DAG: %[[W:.*]] = pipe.constant dense<1.000000e+00> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = pipe.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = pipe.conv %[[X]], %[[W]], %[[B]] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1
// CHECK-NOT: pipe.batch_norm
// CHECK: return %[[Y]]
func.func @parameters(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = pipe.param_ref @w : tensor<2x1x1x1xf32>
  %b = pipe.param_ref @b : tensor<2xf32>
  %scale = pipe.param_ref @scale : tensor<2xf32>
  %shift = pipe.param_ref @shift : tensor<2xf32>
  %mean = pipe.param_ref @mean : tensor<2xf32>
  %var = pipe.param_ref @var : tensor<2xf32>
  %y = pipe.conv %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>
  %z = pipe.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : tensor<1x2x3x3xf32>, tensor<2xf32>
  return %z : tensor<1x2x3x3xf32>
}

// -----

// Constants, in double, and a convolution without a bias: b = 0, so the
// bias is -mean * s + shift = [-0.5 + 1, -1 * 0.5] = [0.5, -0.5].
// CHECK-LABEL: func @constants_without_bias
// CHECK-DAG: pipe.constant dense<1.000000e+00> : tensor<2x1x1x1xf64>
// CHECK-DAG: pipe.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf64>
// CHECK-NOT: pipe.batch_norm
func.func @constants_without_bias(%x: tensor<1x1x3x3xf64>) -> tensor<1x2x3x3xf64> {
  %w = pipe.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf64>
  %scale = pipe.constant dense<[2.0, 0.5]> : tensor<2xf64>
  %shift = pipe.constant dense<[1.0, 0.0]> : tensor<2xf64>
  %mean = pipe.constant dense<[0.5, 1.0]> : tensor<2xf64>
  %var = pipe.constant dense<[3.0, 0.0]> : tensor<2xf64>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf64>, tensor<2x1x1x1xf64>
  %z = pipe.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : tensor<1x2x3x3xf64>, tensor<2xf64>
  return %z : tensor<1x2x3x3xf64>
}

// -----

// A grouped convolution with two weights per channel: each output
// channel's weights scale by its own s = [1, 0.5].
// CHECK-LABEL: func @grouped
// CHECK-DAG: pipe.constant dense<{{\[}}{{\[}}{{\[}}[1.000000e+00, 2.000000e+00]]], {{\[}}{{\[}}[1.500000e+00, 2.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-DAG: pipe.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: pipe.conv {{.*}} group 2
// CHECK-NOT: pipe.batch_norm
func.func @grouped(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x2xf32> {
  %w = pipe.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %scale = pipe.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %shift = pipe.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = pipe.constant dense<0.0> : tensor<2xf32>
  %var = pipe.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 2 : tensor<1x2x3x3xf32>, tensor<2x1x1x2xf32>
  %z = pipe.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : tensor<1x2x3x2xf32>, tensor<2xf32>
  return %z : tensor<1x2x3x2xf32>
}

// -----

// A parameter that a function writes back (pipe.assign) is not a known
// value: both stay.
pipe.parameter @scale : tensor<2xf32> trainable = dense<1.0> : tensor<2xf32>
// CHECK-LABEL: func @assigned_parameter
// CHECK: pipe.conv
// CHECK: pipe.batch_norm
func.func @assigned_parameter(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32> {pipe.assign = @scale}) {
  %w = pipe.constant dense<1.0> : tensor<2x1x1x1xf32>
  %s = pipe.constant dense<1.0> : tensor<2xf32>
  %scale = pipe.param_ref @scale : tensor<2xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>
  %z = pipe.batch_norm %y, %scale, %s, %s, %s : tensor<1x2x3x3xf32>, tensor<2xf32>
  return %z, %s : tensor<1x2x3x3xf32>, tensor<2xf32>
}

// -----

// No output channels: nothing to fold.
// CHECK-LABEL: func @no_channels
// CHECK: pipe.batch_norm
func.func @no_channels(%x: tensor<1x1x3x3xf32>) -> tensor<1x0x3x3xf32> {
  %w = pipe.constant dense<> : tensor<0x1x1x1xf32>
  %s = pipe.constant dense<> : tensor<0xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<0x1x1x1xf32>
  %z = pipe.batch_norm %y, %s, %s, %s, %s : tensor<1x0x3x3xf32>, tensor<0xf32>
  return %z : tensor<1x0x3x3xf32>
}

// -----

// The convolution's result is also returned: both stay.
// CHECK-LABEL: func @conv_used_twice
// CHECK: pipe.conv
// CHECK: pipe.batch_norm
func.func @conv_used_twice(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = pipe.constant dense<1.0> : tensor<2x1x1x1xf32>
  %s = pipe.constant dense<1.0> : tensor<2xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>
  %z = pipe.batch_norm %y, %s, %s, %s, %s : tensor<1x2x3x3xf32>, tensor<2xf32>
  return %y, %z : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A statistic that is not a known value (an argument): both stay.
// CHECK-LABEL: func @unknown_statistic
// CHECK: pipe.conv
// CHECK: pipe.batch_norm
func.func @unknown_statistic(%x: tensor<1x1x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %w = pipe.constant dense<1.0> : tensor<2x1x1x1xf32>
  %s = pipe.constant dense<1.0> : tensor<2xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>
  %z = pipe.batch_norm %y, %s, %s, %mean, %s : tensor<1x2x3x3xf32>, tensor<2xf32>
  return %z : tensor<1x2x3x3xf32>
}

// -----

module {
  pipe.parameter @w : tensor<2x1x1x1xf32> trainable = #pipe.external<"does-not-exist.onnx", "w">
  func.func @missing_file(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %w = pipe.param_ref @w : tensor<2x1x1x1xf32>
    %s = pipe.constant dense<1.0> : tensor<2xf32>
    // expected-error @+1 {{cannot read the weights to fold batch normalization: }}
    %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>
    %z = pipe.batch_norm %y, %s, %s, %s, %s : tensor<1x2x3x3xf32>, tensor<2xf32>
    return %z : tensor<1x2x3x3xf32>
  }
}
