// RUN: pipe-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{operand shapes [2, 3], [3, 2] are not broadcast-compatible}}
  %0 = pipe.add %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @equal_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{operand shapes [4, 3], [2] are not broadcast-compatible}}
  %0 = pipe.equal %a, %b : tensor<4x3xf32>, tensor<2xf32>
  return
}

// -----

// In the generic form the result type is spelled, and must be the inferred one.
func.func @add_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'pipe.add' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'pipe.add' op failed to infer returned types}}
  %0 = "pipe.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @add_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @+1 {{'pipe.add' op operand element types differ: 'f32' vs 'i32'}}
  %0 = pipe.add %a, %b : tensor<2x3xf32>, tensor<2x3xi32>
  return
}

// -----

func.func @less_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'pipe.less' op operand element types differ: 'f32' vs 'f16'}}
  %0 = pipe.less %a, %b : tensor<3xf32>, tensor<3xf16>
  return
}

// -----

func.func @clip_min_exceeds_max(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.clip' op min 6.000000e+00 exceeds max 0.000000e+00}}
  %0 = pipe.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @prelu_slope_not_broadcasting(%x: tensor<2x3x4xf32>, %s: tensor<5xf32>) {
  // expected-error @+1 {{'pipe.prelu' op slope shape [5] does not broadcast to input shape [2, 3, 4]}}
  %0 = pipe.prelu %x, %s : tensor<2x3x4xf32>, tensor<5xf32>
  return
}

// -----

// The slope may not grow the input.
func.func @prelu_slope_grows_input(%x: tensor<3x1xf32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{'pipe.prelu' op slope shape [3, 4] does not broadcast to input shape [3, 1]}}
  %0 = pipe.prelu %x, %s : tensor<3x1xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @prelu_element_types(%x: tensor<4xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{'pipe.prelu' op operand element types differ: 'f32' vs 'f16'}}
  %0 = pipe.prelu %x, %s : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @where_not_broadcastable(%c: tensor<4x1xi1>, %x: tensor<3xf32>, %y: tensor<2x1xf32>) {
  // expected-error @+1 {{operand shapes [4, 1], [3], [2, 1] are not broadcast-compatible}}
  %0 = pipe.where %c, %x, %y : tensor<4x1xi1>, tensor<3xf32>, tensor<2x1xf32>
  return
}

// -----

func.func @where_element_types(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'pipe.where' op operand element types differ: 'f32' vs 'i64'}}
  %0 = pipe.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xi64>
  return
}

// -----

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

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

// ConstantOp::verify's "value must be a statically shaped tensor" cannot fire:
// the result type is the value's type, and the result constraint rejects it
// first.
func.func @constant_dynamic() {
  // expected-error @+1 {{'pipe.constant' op result #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %0 = pipe.constant dense_resource<blob1> : tensor<?xf32>
  return
}

// -----

func.func @constant_vector() {
  // expected-error @+1 {{'pipe.constant' op result #0 must be statically shaped tensor of any type values, but got 'vector<2xf32>'}}
  %0 = pipe.constant dense<1.0> : vector<2xf32>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'pipe.reshape' op cannot reshape [2, 3, 4] (24 elements) to [5, 4] (20 elements)}}
  %0 = pipe.reshape %x : tensor<2x3x4xf32> to tensor<5x4xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.reshape' op element type changes from 'f32' to 'f16'}}
  %0 = pipe.reshape %x : tensor<2x3xf32> to tensor<6xf16>
  return
}

// -----

func.func @expand_not_broadcasting(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'pipe.expand' op cannot broadcast [3, 2] to [2, 3, 4]}}
  %0 = pipe.expand %x : tensor<3x2xf32> to tensor<2x3x4xf32>
  return
}

// -----

func.func @expand_shrinks(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'pipe.expand' op cannot broadcast [3, 4] to [1, 4]}}
  %0 = pipe.expand %x : tensor<3x4xf32> to tensor<1x4xf32>
  return
}

// -----

func.func @expand_element_type(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{'pipe.expand' op element type changes from 'f32' to 'i32'}}
  %0 = pipe.expand %x : tensor<3x1xf32> to tensor<3x4xi32>
  return
}

// -----

func.func @transpose_perm_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm has 2 entries for a rank-3 tensor}}
  %0 = pipe.transpose %x perm [1, 0] : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_perm_repeated(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [0, 2, 0] is not a permutation}}
  %0 = pipe.transpose %x perm [0, 2, 0] : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_perm_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0, 2] is not a permutation}}
  %0 = pipe.transpose %x perm [0, 2] : tensor<2x3xf32>
  return
}

// -----

// Only the generic form can spell a concat without inputs.
func.func @concat_no_inputs() {
  // expected-error @+2 {{expected at least one input}}
  // expected-error @+1 {{'pipe.concat' op failed to infer returned types}}
  %0 = "pipe.concat"() {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 tensor}}
  %0 = pipe.concat %x, %y axis 2 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_shape_mismatch(%x: tensor<2x3x4xf32>, %y: tensor<2x5x5xf32>) {
  // expected-error @+1 {{input shapes [2, 3, 4] and [2, 5, 5] differ outside axis 1}}
  %0 = pipe.concat %x, %y axis 1 : tensor<2x3x4xf32>, tensor<2x5x5xf32>
  return
}

// -----

func.func @concat_rank_mismatch(%x: tensor<2x3xf32>, %y: tensor<2x3x1xf32>) {
  // expected-error @+1 {{input shapes [2, 3] and [2, 3, 1] differ outside axis 0}}
  %0 = pipe.concat %x, %y axis 0 : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

func.func @concat_element_types(%x: tensor<2x3xf32>, %y: tensor<2x3xi32>) {
  // expected-error @+1 {{inputs have different element types}}
  %0 = pipe.concat %x, %y axis 0 : tensor<2x3xf32>, tensor<2x3xi32>
  return
}

// -----

// Only the generic form can spell a split without results.
func.func @split_no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.split' op expected at least one result}}
  "pipe.split"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @split_axis(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'pipe.split' op axis 2 is out of range for a rank-2 tensor}}
  %0:2 = pipe.split %x axis 2 : tensor<2x5xf32> to tensor<2x2xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @split_sum(%x: tensor<2x5x4xf32>) {
  // expected-error @+1 {{'pipe.split' op results cover 4 elements of axis 1, input has 5}}
  %0:2 = pipe.split %x axis 1 : tensor<2x5x4xf32> to tensor<2x2x4xf32>, tensor<2x2x4xf32>
  return
}

// -----

func.func @split_shape(%x: tensor<2x5x4xf32>) {
  // expected-error @+1 {{'pipe.split' op result 'tensor<2x3x3xf32>' does not match input 'tensor<2x5x4xf32>' outside axis 1}}
  %0:2 = pipe.split %x axis 1 : tensor<2x5x4xf32> to tensor<2x2x4xf32>, tensor<2x3x3xf32>
  return
}

// -----

func.func @split_element_type(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'pipe.split' op result 'tensor<2x3xf16>' does not match input 'tensor<2x5xf32>' outside axis 1}}
  %0:2 = pipe.split %x axis 1 : tensor<2x5xf32> to tensor<2x2xf32>, tensor<2x3xf16>
  return
}

// -----

func.func @slice_sizes_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{sizes has 1 entries for a rank-2 tensor}}
  %0 = pipe.slice %x offsets [0, 0] sizes [1] strides [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_offsets_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op offsets and strides need 2 entries}}
  %0 = pipe.slice %x offsets [0] sizes [1, 1] strides [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_strides_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op offsets and strides need 2 entries}}
  %0 = pipe.slice %x offsets [0, 0] sizes [1, 1] strides [1, 1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op stride of axis 1 is zero}}
  %0 = pipe.slice %x offsets [0, 0] sizes [1, 1] strides [1, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_negative_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{size of axis 0 is negative}}
  %0 = pipe.slice %x offsets [0, 0] sizes [-1, 1] strides [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_past_end(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op axis 1 reads elements 1 to 3 outside [0, 3)}}
  %0 = pipe.slice %x offsets [0, 1] sizes [2, 2] strides [1, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_before_start(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op axis 1 reads elements 1 to -1 outside [0, 3)}}
  %0 = pipe.slice %x offsets [0, 1] sizes [2, 2] strides [1, -2] : tensor<2x3xf32>
  return
}

// -----

func.func @slice_offset_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pipe.slice' op axis 0 reads elements 2 to 1 outside [0, 2)}}
  %0 = pipe.slice %x offsets [2, 0] sizes [2, 1] strides [-1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<6x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 tensor}}
  %0 = pipe.gather %x, %i axis 2 : tensor<6x4xf32>, tensor<3xi64>
  return
}

// -----

func.func @gather_negative_axis(%x: tensor<6x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{axis -1 is out of range for a rank-2 tensor}}
  %0 = pipe.gather %x, %i axis -1 : tensor<6x4xf32>, tensor<3xi32>
  return
}

// -----

func.func @tile_repeats_length(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{repeats has 3 entries for a rank-2 tensor}}
  %0 = pipe.tile %x repeats [1, 2, 3] : tensor<3x1xf32>
  return
}

// -----

func.func @tile_negative_repeats(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{repeats must be non-negative}}
  %0 = pipe.tile %x repeats [1, -2] : tensor<3x1xf32>
  return
}

// -----

func.func @pad_length(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{pads has 2 entries, expected 4}}
  %0 = pipe.pad %x pads [1, 1] mode constant : tensor<3x4xf32>
  return
}

// -----

func.func @pad_negative_extent(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{pads crop axis 1 to a negative extent}}
  %0 = pipe.pad %x pads [0, -3, 0, -2] mode edge : tensor<3x4xf32>
  return
}

// -----

func.func @pad_reflect_begin(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{reflect pads of axis 0 must be smaller than its extent 3}}
  %0 = pipe.pad %x pads [3, 0, 0, 0] mode reflect : tensor<3x4xf32>
  return
}

// -----

func.func @pad_reflect_end(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{reflect pads of axis 1 must be smaller than its extent 4}}
  %0 = pipe.pad %x pads [0, 0, 0, 4] mode reflect : tensor<3x4xf32>
  return
}

// -----

func.func @trilu_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.trilu' op input must have rank at least 2}}
  %0 = pipe.trilu %x upper : tensor<4xf32>
  return
}

// -----

func.func @dropout_ratio_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.dropout' op ratio 1.000000e+00 must lie in [0, 1)}}
  %0 = pipe.dropout %x {ratio = 1.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @dropout_ratio_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.dropout' op ratio -5.000000e-01 must lie in [0, 1)}}
  %0 = pipe.dropout %x {ratio = -0.5 : f32} : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'pipe.parameter' op initial value of type 'tensor<2xf32>' does not match the parameter type 'tensor<3xf32>'}}
pipe.parameter @w : tensor<3xf32> = dense<[1.0, 2.0]> : tensor<2xf32>

// -----

// expected-error @+1 {{'pipe.parameter' op initial value of type 'tensor<2xf16>' does not match the parameter type 'tensor<2xf32>'}}
pipe.parameter @w : tensor<2xf32> trainable = dense<[1.0, 2.0]> : tensor<2xf16>

// -----

func.func @param_ref_unknown() -> tensor<2xf32> {
  // expected-error @+1 {{'pipe.param_ref' op 'missing' does not name a pipe.parameter}}
  %0 = pipe.param_ref @missing : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @not_a_parameter() {
  return
}

func.func @param_ref_not_parameter() -> tensor<2xf32> {
  // expected-error @+1 {{'pipe.param_ref' op 'not_a_parameter' does not name a pipe.parameter}}
  %0 = pipe.param_ref @not_a_parameter : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

pipe.parameter @w : tensor<2xf32>

func.func @param_ref_type() -> tensor<3xf32> {
  // expected-error @+1 {{'pipe.param_ref' op type 'tensor<3xf32>' does not match the type 'tensor<2xf32>' of parameter 'w'}}
  %0 = pipe.param_ref @w : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A parameter of another stage is not visible.
pipe.stage @s0 index 0 device "a0" {
  pipe.parameter @w : tensor<2xf32>
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<2xf32> {
    // expected-error @+1 {{'pipe.param_ref' op 'w' does not name a pipe.parameter}}
    %0 = pipe.param_ref @w : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'pipe.stage' op stage index must be non-negative, got -1}}
pipe.stage @s index -1 device "a0" {
}

// -----

// expected-error @+1 {{'pipe.stage' op stage 0 names no device}}
pipe.stage @s index 0 device "" {
}

// -----

// expected-error @+1 {{'pipe.stage' op stage index 0 is also used by stage @s1}}
pipe.stage @s0 index 0 device "a0" {
}
// expected-error @+1 {{'pipe.stage' op stage index 0 is also used by stage @s0}}
pipe.stage @s1 index 0 device "a1" {
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op has no matching pipe.recv from stage 0 on channel 0 in stage 1}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

// The recv of stage 1 is on another channel.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op has no matching pipe.recv from stage 0 on channel 3 in stage 1}}
    pipe.send forward %x to 1 channel 3 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op has no matching pipe.send to stage 1 on channel 2 in stage 0}}
    %0 = pipe.recv forward from 0 channel 2 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op has no matching pipe.send to stage 1 on channel 0 in stage 0}}
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends 'tensor<4xf32>' but stage 1 receives 'tensor<4xf16>' on channel 0}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf16> {
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf16>
    return %0 : tensor<4xf16>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op phase forward differs from the backward phase of its pipe.recv}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    %0 = pipe.recv backward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends to stage 2, which is not a stage of this pipeline}}
    pipe.send forward %x to 2 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op receives from stage 5, which is not a stage of this pipeline}}
    %0 = pipe.recv forward from 5 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

// A stage inside a nested module is not a sibling.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends to stage 2, which is not a stage of this pipeline}}
    pipe.send forward %x to 2 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}
module {
  pipe.stage @s2 index 2 device "a2" {
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    // expected-error @+1 {{'pipe.send' op channel 0 to stage 1 is already used}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}

// -----

pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    %0 = pipe.recv forward from 0 channel 4 : tensor<4xf32>
    // expected-error @+1 {{'pipe.recv' op channel 4 from stage 0 is already used}}
    %1 = pipe.recv backward from 0 channel 4 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op stage 0 cannot transfer to itself}}
    pipe.send forward %x to 0 channel 0 : tensor<4xf32>
    return
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op stage 0 cannot transfer to itself}}
    %0 = pipe.recv backward from 0 channel 1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

func.func @send_negative_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.send' op peer stage must be non-negative, got -1}}
  pipe.send forward %x to -1 channel 0 : tensor<4xf32>
  return
}

// -----

func.func @send_negative_channel(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.send' op channel must be non-negative, got -2}}
  pipe.send forward %x to 1 channel -2 : tensor<4xf32>
  return
}

// -----

func.func @recv_negative_peer() -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recv' op peer stage must be non-negative, got -3}}
  %0 = pipe.recv forward from -3 channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @recv_negative_channel() -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recv' op channel must be non-negative, got -1}}
  %0 = pipe.recv forward from 1 channel -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Recompute
//===----------------------------------------------------------------------===//

func.func @recompute_arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op region arguments must match the operand types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8xf32>):
    %t = pipe.tanh %a : tensor<8xf32>
    %r = pipe.reshape %t : tensor<8xf32> to tensor<4x2xf32>
    %s = pipe.slice %r offsets [0, 0] sizes [4, 1] strides [1, 1] : tensor<4x2xf32>
    %y = pipe.reshape %s : tensor<4x1xf32> to tensor<4xf32>
    pipe.yield %y : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_argument_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op region arguments must match the operand types}}
  %0 = pipe.recompute (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pipe.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op yielded types must match the result types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %t = pipe.reshape %a : tensor<4xf32> to tensor<2x2xf32>
    pipe.yield %t : tensor<2x2xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op yielded types must match the result types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pipe.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}


// -----

func.func @split_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{axis 0 is out of range for a rank-0 tensor}}
  %0:1 = pipe.split %a axis 0 : tensor<f32> to tensor<f32>
  return
}

// -----

// Transfers of a nested stage are not the outer stage's: the recv of @s1
// has no matching send in @s0.
pipe.stage @s0 index 0 device "a0" {
  pipe.stage @inner index 7 device "x" {
    func.func @f(%x: tensor<4xf32>) {
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{has no matching pipe.send to stage 1 on channel 0 in stage 0}}
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// The op's own error comes before pairing, also with sibling stages.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{stage 0 cannot transfer to itself}}
    pipe.send forward %x to 0 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

func.func @conv_transpose_zero_stride(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = pipe.conv_transpose %x, %w strides [0] pads [0, 0] dilations [1] output_padding [0] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @conv_transpose_negative_pads(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = pipe.conv_transpose %x, %w strides [1] pads [-1, 0] dilations [1] output_padding [0] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{output_padding 2 of spatial axis 0 must lie in [0, max(stride, dilation))}}
  %0 = pipe.conv_transpose %x, %w strides [2] pads [0, 0] dilations [1] output_padding [2] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @clip_nan(%x: tensor<4xf32>) {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = pipe.clip %x {min = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @batch_norm_nan_momentum(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{momentum must lie in [0, 1]}}
  %0:3 = pipe.batch_norm_train %x, %c, %c, %c, %c {momentum = 0x7FC00000 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @pad_edge_empty_axis(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{axis 0 is empty; only constant mode can pad it}}
  %0 = pipe.pad %x pads [1, 0, 0, 0] mode edge : tensor<0x3xf32>
  return
}

// -----

func.func @max_pool_dynamic(%x: tensor<1x1x?xf32>) {
  // expected-error @+1 {{operand of type 'tensor<1x1x?xf32>' is not a statically shaped tensor}}
  %0 = pipe.max_pool %x kernel [2] strides [1] pads [0, 0] dilations [1] : tensor<1x1x?xf32>
  return
}

// -----

func.func @add_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand of type 'tensor<?xf32>' is not a statically shaped tensor}}
  %0 = pipe.add %x, %x : tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @sgd_momentum_without_buffer(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{has a momentum buffer exactly when momentum is not zero}}
  %0 = pipe.sgd_update %p, %p, %step {lr = 0.1 : f64, momentum = 0.9 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{nesterov needs a momentum and zero dampening}}
  %0, %1 = pipe.sgd_update %p, %p, %step momentum_buffer %p {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_buffer_type(%p: tensor<4xf32>, %b: tensor<2xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{momentum buffer type 'tensor<2xf32>' differs from the parameter type 'tensor<4xf32>'}}
  %0, %1 = pipe.sgd_update %p, %p, %step momentum_buffer %b {lr = 0.1 : f64, momentum = 0.9 : f64} : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

func.func @adam_betas(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{betas must be in [0, 1)}}
  %0, %1, %2 = pipe.adam_update %p, %p, %p, %p, %step {lr = 0.1 : f64, beta2 = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adam_negative_lr(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{lr, eps and weight_decay must not be negative}}
  %0, %1, %2 = pipe.adam_update %p, %p, %p, %p, %step {lr = -0.1 : f64} : tensor<4xf32>
  return
}

// -----

func.func @max_pool_grad_shape(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{gradient type 'tensor<1x3x3x3xf32>' is not the pooled shape of 'tensor<1x3x8x8xf32>'}}
  %0 = pipe.max_pool_grad %x, %dy kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>
  return
}

// -----

func.func @average_pool_grad_shape(%dy: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{gradient type 'tensor<1x3x4x4xf32>' is not the pooled shape of 'tensor<1x3x11x11xf32>'}}
  %0 = pipe.average_pool_grad %dy kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] : tensor<1x3x4x4xf32> -> tensor<1x3x11x11xf32>
  return
}

// -----

// expected-error @+1 {{a plan needs at least one microbatch, not 0}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 0, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{a plan needs at least one stage}}
module attributes {pipe.plan = #pipe.plan<schedule = "gpipe", microbatches = 1, training = true, stages = [], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 has index 1; stages come in order}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 1, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 names no device}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 is not a #pipe.stage_plan: 3 : i64}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [3], report = {}>} {
}

// -----

// expected-error @+2 {{unknown schedule 'zigzag'}}
// expected-error @+1 {{failed to parse Pipe_PlanAttr parameter 'schedule'}}
module attributes {pipe.plan = #pipe.plan<schedule = "zigzag", microbatches = 1, training = false, stages = [], report = {}>} {
}
