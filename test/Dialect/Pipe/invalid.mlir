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
