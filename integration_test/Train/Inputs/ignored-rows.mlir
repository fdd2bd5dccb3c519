// Cross-entropy with ignore_index 0: a microbatch whose labels are all 0
// has no row that counts.
pipe.parameter @w : tensor<3x4xf32> trainable = dense<[[0.5, -0.25, 0.1, 0.2], [0.125, 1.0, -0.3, 0.0], [-0.5, 0.75, 0.2, 0.1]]> : tensor<3x4xf32>
func.func @main(%x: tensor<2x3xf32> {pipe.name = "x"}, %l: tensor<2xi64> {pipe.name = "labels"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<3x4xf32>
  %y = pipe.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %c = pipe.softmax_cross_entropy %y, %l reduction mean {ignore_index = 0 : i64} : tensor<2x4xf32>, tensor<2xi64>
  return %c : tensor<f32>
}
