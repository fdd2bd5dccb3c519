// RUN: pipe-opt %s -split-input-file -verify-diagnostics

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
