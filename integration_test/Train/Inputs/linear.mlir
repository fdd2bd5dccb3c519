// A linear model with inline parameters (no ONNX file behind it).
pipe.parameter @w : tensor<3x2xf32> trainable = dense<[[0.5, -0.25], [0.125, 1.0], [-0.5, 0.75]]> : tensor<3x2xf32>
func.func @main(%x: tensor<4x3xf32> {pipe.name = "x"}, %t: tensor<4x2xf32> {pipe.name = "t"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<3x2xf32>
  %y = pipe.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %d = pipe.sub %y, %t : tensor<4x2xf32>, tensor<4x2xf32>
  %s = pipe.mul %d, %d : tensor<4x2xf32>, tensor<4x2xf32>
  %l = pipe.reduce_mean %s axes [0, 1] : tensor<4x2xf32>
  return %l : tensor<f32>
}
