// Two matmuls with node names: the first reads only the input, so its
// gradient is the weight gradient alone; the second also passes one back.
pipe.parameter @w1 : tensor<16x32xf32> trainable = dense<0.5> : tensor<16x32xf32>
pipe.parameter @w2 : tensor<32x4xf32> trainable = dense<0.25> : tensor<32x4xf32>
func.func @main(%x: tensor<8x16xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w1 = pipe.param_ref @w1 : tensor<16x32xf32> loc("first")
  %h = pipe.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> loc("first")
  %w2 = pipe.param_ref @w2 : tensor<32x4xf32> loc("second")
  %y = pipe.matmul %h, %w2 : tensor<8x32xf32>, tensor<32x4xf32> loc("second")
  %l = pipe.reduce_sum %y axes [0, 1] : tensor<8x4xf32> loc("loss")
  return %l : tensor<f32>
}
