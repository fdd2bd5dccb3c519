// RUN: pipe-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{contracting dimensions differ: [2, 3] x [2, 3]}}
  %0 = pipe.matmul %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @matmul_vector_contracting(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: [4] x [5]}}
  %0 = pipe.matmul %a, %b : tensor<4xf32>, tensor<5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error @+1 {{batch dimensions of [2, 4, 8] and [3, 8, 16] are not broadcast-compatible}}
  %0 = pipe.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32>
  return
}

// -----

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{operands must have rank at least 1}}
  %0 = pipe.matmul %a, %b : tensor<f32>, tensor<8x16xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xf16>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'f16'}}
  %0 = pipe.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf16>
  return
}

// -----

func.func @gemm_not_matrix(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{A and B must be matrices, got [2, 4, 8] and [8, 16]}}
  %0 = pipe.gemm %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @gemm_contracting(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{contracting dimensions differ: 8 vs 16}}
  %0 = pipe.gemm %a, %b trans_b : tensor<4x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @gemm_contracting_trans_a(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{contracting dimensions differ: 4 vs 8}}
  %0 = pipe.gemm %a, %b trans_a : tensor<4x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @gemm_c_not_broadcasting(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.gemm' op C of shape [4] does not broadcast to the result shape [4, 16]}}
  %0 = pipe.gemm %a, %b, %c : tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xf32>
  return
}

// -----

// C may not grow the result.
func.func @gemm_c_grows_result(%a: tensor<4x8xf32>, %b: tensor<8x1xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{'pipe.gemm' op C of shape [4, 16] does not broadcast to the result shape [4, 1]}}
  %0 = pipe.gemm %a, %b, %c : tensor<4x8xf32>, tensor<8x1xf32>, tensor<4x16xf32>
  return
}

// -----

func.func @gemm_element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf16>) {
  // expected-error @+1 {{'pipe.gemm' op operand element types differ: 'f32' vs 'f16'}}
  %0 = pipe.gemm %a, %b, %c : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

func.func @conv_rank(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{input [4, 8] and weight [8, 4] must have the same rank, at least 3}}
  %0 = pipe.conv %x, %w strides [] pads [] dilations [] group 1 : tensor<4x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @conv_rank_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3xf32>) {
  // expected-error @+1 {{input [1, 4, 8, 8] and weight [8, 4, 3] must have the same rank, at least 3}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3xf32>
  return
}

// -----

func.func @conv_group_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{group 3 must divide the input channels 4 and the filters 6}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 3 : tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>
  return
}

// -----

func.func @conv_group_filters(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{group 2 must divide the input channels 4 and the filters 3}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 2 : tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>
  return
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{group 0 must divide the input channels 4 and the filters 8}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 0 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{weight has 4 input channels, expected 2}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 2 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [8]}}
  %0 = pipe.conv %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @conv_bias_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{bias must have shape [8]}}
  %0 = pipe.conv %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<1x8xf32>
  return
}

// -----

func.func @conv_window_too_large(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{window of extent 5 does not fit padded spatial axis 0 of extent 4}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [2, 2] group 1 : tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{strides has 1 entries, expected 2}}
  %0 = pipe.conv %x, %w strides [1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_pads_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{pads has 2 entries, expected 4}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_dilations_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{dilations has 3 entries, expected 2}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = pipe.conv %x, %w strides [1, 0] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_negative_dilation(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [-1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_empty_kernel(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x0x3xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x0x3xf32>
  return
}

// -----

func.func @conv_negative_pads(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, -1] dilations [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv_weight_grad_shape(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) {
  // expected-error @+1 {{'pipe.conv_weight_grad' op gradient type 'tensor<2x4x4x4xf32>' is not the output 'tensor<2x4x8x8xf32>' of a convolution of 'tensor<2x4x8x8xf32>' by 'tensor<4x1x3x3xf32>'}}
  %0 = pipe.conv_weight_grad %x, %dy strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 4 : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<4x1x3x3xf32>
  return
}

// -----

func.func @conv_weight_grad_group(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) {
  // expected-error @+1 {{group 3 must divide the input channels 4 and the filters 4}}
  %0 = pipe.conv_weight_grad %x, %dy strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] group 3 : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<4x1x3x3xf32>
  return
}

// -----

func.func @conv_weight_grad_element(%x: tensor<2x4x8x8xf64>, %dy: tensor<2x4x4x4xf32>) {
  // expected-error @+1 {{'pipe.conv_weight_grad' op input, gradient and result element types differ}}
  %0 = pipe.conv_weight_grad %x, %dy strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] group 4 : tensor<2x4x8x8xf64>, tensor<2x4x4x4xf32> -> tensor<4x1x3x3xf32>
  return
}

// -----

func.func @conv_transpose_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{input [1, 4, 8, 8] and weight [4, 3, 3] must have the same rank, at least 3}}
  %0 = pipe.conv_transpose %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, 0] group 1 : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>
  return
}

// -----

func.func @conv_transpose_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x3x3x3xf32>) {
  // expected-error @+1 {{weight must have 4 input channels divisible by group 1}}
  %0 = pipe.conv_transpose %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, 0] group 1 : tensor<1x4x8x8xf32>, tensor<3x3x3x3xf32>
  return
}

// -----

func.func @conv_transpose_group(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{weight must have 4 input channels divisible by group 3}}
  %0 = pipe.conv_transpose %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, 0] group 3 : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_transpose_attr_lengths(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{strides, dilations and output_padding need 2 entries and pads 4}}
  %0 = pipe.conv_transpose %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0] group 1 : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [6]}}
  %0 = pipe.conv_transpose %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] output_padding [0, 0] group 2 : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @conv_transpose_empty_output(%x: tensor<1x4x1x1xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{output spatial axis 0 would have extent 0}}
  %0 = pipe.conv_transpose %x, %w strides [1, 1] pads [1, 1, 0, 0] dilations [1, 1] output_padding [0, 0] group 1 : tensor<1x4x1x1xf32>, tensor<4x3x1x1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

func.func @max_pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{input must have rank at least 3, got [4, 8]}}
  %0 = pipe.max_pool %x kernel [2] strides [1] pads [0, 0] dilations [1] : tensor<4x8xf32>
  return
}

// -----

func.func @max_pool_kernel_length(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel has 1 entries, expected 2}}
  %0 = pipe.max_pool %x kernel [2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool_zero_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = pipe.max_pool %x kernel [2, 0] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool_window_too_large(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{window of extent 9 does not fit padded spatial axis 1 of extent 8}}
  %0 = pipe.max_pool %x kernel [2, 5] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 2] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @average_pool_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{input must have rank at least 3, got [8]}}
  %0 = pipe.average_pool %x kernel [] strides [] pads [] : tensor<8xf32>
  return
}

// -----

func.func @average_pool_strides_length(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{strides has 3 entries, expected 2}}
  %0 = pipe.average_pool %x kernel [2, 2] strides [2, 2, 2] pads [0, 0, 0, 0] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @average_pool_negative_stride(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = pipe.average_pool %x kernel [2, 2] strides [2, -2] pads [0, 0, 0, 0] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @average_pool_negative_pads(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = pipe.average_pool %x kernel [2, 2] strides [2, 2] pads [-1, 0, 0, 0] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @average_pool_window_too_large(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{window of extent 4 does not fit padded spatial axis 0 of extent 3}}
  %0 = pipe.average_pool %x kernel [4, 1] strides [1, 1] pads [0, 0, 1, 0] : tensor<1x4x2x2xf32>
  return
}

// -----

func.func @global_average_pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{input must have rank at least 3, got [4, 8]}}
  %0 = pipe.global_average_pool %x : tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

func.func @batch_norm_channels(%x: tensor<2x3x4x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.batch_norm' op per-channel operands must have shape [3], got [4]}}
  %0 = pipe.batch_norm %x, %c, %c, %c, %c : tensor<2x3x4x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<2x3x4x4xf32>, %c: tensor<1x3xf32>) {
  // expected-error @+1 {{'pipe.batch_norm' op per-channel operands must have shape [3], got [1, 3]}}
  %0 = pipe.batch_norm %x, %c, %c, %c, %c : tensor<2x3x4x4xf32>, tensor<1x3xf32>
  return
}

// -----

func.func @batch_norm_train_grad_channels(%x: tensor<2x3x4x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.batch_norm_train_grad' op per-channel operands must have shape [3], got [4]}}
  %0:3 = pipe.batch_norm_train_grad %x, %c, %x : tensor<2x3x4x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_train_grad_types(%x: tensor<2x3x4x4xf32>, %dy: tensor<2x3x4x5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'pipe.batch_norm_train_grad' op failed to verify that all of {input, output_grad} have same type}}
  %0:3 = "pipe.batch_norm_train_grad"(%x, %c, %dy) : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2x3x4x5xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_input_rank(%x: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'pipe.batch_norm' op input must have rank at least 2, got [3]}}
  %0 = pipe.batch_norm %x, %c, %c, %c, %c : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @batch_norm_element_type(%x: tensor<2x3xf32>, %c: tensor<3xf16>) {
  // expected-error @+1 {{'pipe.batch_norm' op per-channel operands must have element type 'f32'}}
  %0 = pipe.batch_norm %x, %c, %c, %c, %c : tensor<2x3xf32>, tensor<3xf16>
  return
}

// -----

func.func @batch_norm_train_momentum(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'pipe.batch_norm_train' op momentum must lie in [0, 1]}}
  %0:3 = pipe.batch_norm_train %x, %c, %c, %c, %c {momentum = 1.5 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @batch_norm_train_negative_momentum(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'pipe.batch_norm_train' op momentum must lie in [0, 1]}}
  %0:3 = pipe.batch_norm_train %x, %c, %c, %c, %c {momentum = -0.1 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @batch_norm_train_channels(%x: tensor<2x3x4x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.batch_norm_train' op per-channel operands must have shape [3], got [4]}}
  %0:3 = pipe.batch_norm_train %x, %c, %c, %c, %c : tensor<2x3x4x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @instance_norm_rank(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'pipe.instance_norm' op input must have rank at least 3}}
  %0 = pipe.instance_norm %x, %c, %c : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @instance_norm_channels(%x: tensor<2x3x4xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'pipe.instance_norm' op per-channel operands must have shape [3], got [2]}}
  %0 = pipe.instance_norm %x, %c, %c : tensor<2x3x4xf32>, tensor<2xf32>
  return
}

// -----

func.func @layer_norm_axis(%h: tensor<2x8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'pipe.layer_norm' op axis 3 is out of range for a rank-3 tensor}}
  %0 = pipe.layer_norm %h, %g axis 3 : tensor<2x8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @layer_norm_negative_axis(%h: tensor<2x8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'pipe.layer_norm' op axis -1 is out of range for a rank-3 tensor}}
  %0 = pipe.layer_norm %h, %g axis -1 : tensor<2x8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%h: tensor<2x8x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'pipe.layer_norm' op scale and bias must broadcast to the normalized shape [64], got [32]}}
  %0 = pipe.layer_norm %h, %g axis 2 : tensor<2x8x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_scale_too_large(%h: tensor<2x8x64xf32>, %g: tensor<8x64xf32>) {
  // expected-error @+1 {{'pipe.layer_norm' op scale and bias must broadcast to the normalized shape [64], got [8, 64]}}
  %0 = pipe.layer_norm %h, %g axis 2 : tensor<2x8x64xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%h: tensor<2x8x64xf32>, %g: tensor<8x64xf32>, %b: tensor<8x1x64xf32>) {
  // expected-error @+1 {{'pipe.layer_norm' op scale and bias must broadcast to the normalized shape [8, 64], got [8, 1, 64]}}
  %0 = pipe.layer_norm %h, %g, %b axis 1 : tensor<2x8x64xf32>, tensor<8x64xf32>, tensor<8x1x64xf32>
  return
}

// -----

func.func @layer_norm_element_types(%h: tensor<2x8x64xf32>, %g: tensor<64xf16>) {
  // expected-error @+1 {{'pipe.layer_norm' op operand element types differ: 'f16' vs 'f32'}}
  %0 = pipe.layer_norm %h, %g axis 2 : tensor<2x8x64xf32>, tensor<64xf16>
  return
}

// -----

func.func @softmax_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'pipe.softmax' op axis 2 is out of range for a rank-2 tensor}}
  %0 = pipe.softmax %x axis 2 : tensor<4x10xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'pipe.log_softmax' op axis -1 is out of range for a rank-2 tensor}}
  %0 = pipe.log_softmax %x axis -1 : tensor<4x10xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

func.func @reduce_axis_out_of_range(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 tensor}}
  %0 = pipe.reduce_mean %x axes [2] : tensor<4x10xf32>
  return
}

// -----

func.func @reduce_negative_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{axis -1 is out of range for a rank-2 tensor}}
  %0 = pipe.reduce_sum %x axes [-1] : tensor<4x10xf32>
  return
}

// -----

func.func @reduce_axes_not_increasing(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{axes must be strictly increasing}}
  %0 = pipe.reduce_max %x axes [1, 0] : tensor<4x10xf32>
  return
}

// -----

func.func @reduce_axes_repeated(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{axes must be strictly increasing}}
  %0 = pipe.reduce_sum %x axes [1, 1] keepdims : tensor<4x10xf32>
  return
}

// -----

func.func @loss_scores_rank(%x: tensor<10xf32>, %l: tensor<1xi64>) {
  // expected-error @+1 {{scores must have rank at least 2, got [10]}}
  %0 = pipe.softmax_cross_entropy %x, %l reduction mean : tensor<10xf32>, tensor<1xi64>
  return
}

// -----

func.func @loss_labels_shape(%x: tensor<4x10xf32>, %l: tensor<10xi64>) {
  // expected-error @+1 {{'pipe.softmax_cross_entropy' op labels must have shape [4], got [10]}}
  %0 = pipe.softmax_cross_entropy %x, %l reduction mean : tensor<4x10xf32>, tensor<10xi64>
  return
}

// -----

func.func @nll_loss_labels_shape(%x: tensor<4x10x5xf32>, %l: tensor<4x10xi64>) {
  // expected-error @+1 {{'pipe.nll_loss' op labels must have shape [4, 5], got [4, 10]}}
  %0 = pipe.nll_loss %x, %l reduction none : tensor<4x10x5xf32>, tensor<4x10xi64>
  return
}

// -----

func.func @nll_loss_weight_shape(%x: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.nll_loss' op weight must have shape [10], got [4]}}
  %0 = pipe.nll_loss %x, %l, %w reduction sum : tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>
  return
}

// -----

func.func @loss_weight_rank(%x: tensor<4x10xf32>, %l: tensor<4xi32>, %w: tensor<1x10xf32>) {
  // expected-error @+1 {{'pipe.softmax_cross_entropy' op weight must have shape [10], got [1, 10]}}
  %0 = pipe.softmax_cross_entropy %x, %l, %w reduction mean : tensor<4x10xf32>, tensor<4xi32>, tensor<1x10xf32>
  return
}

// -----

func.func @conv_activation_channels_first(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) {
  // expected-error @+1 {{'pipe.conv' op a fused activation needs channels_last}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 {activation = #pipe<conv_activation relu>} : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>
  return
}

// -----

func.func @conv_clip_bounds(%x: tensor<1x4x4x2xf32>, %w: tensor<2x2x1x1xf32>) {
  // expected-error @+1 {{'pipe.conv' op activation_min and activation_max go with a clip activation, both}}
  %0 = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 channels_last {activation = #pipe<conv_activation clip>, activation_min = 0.0 : f32} : tensor<1x4x4x2xf32>, tensor<2x2x1x1xf32>
  return
}
