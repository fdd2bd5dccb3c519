// A matmul, a reshape and a matmul, each its own node: cut after the first
// two, the middle stage only reshapes, and takes no time either way.
pipe.parameter @w1 : tensor<16x32xf32> trainable = dense<0.5> : tensor<16x32xf32>
pipe.parameter @w2 : tensor<16x4xf32> trainable = dense<0.25> : tensor<16x4xf32>
func.func @main(%x: tensor<8x16xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w1 = pipe.param_ref @w1 : tensor<16x32xf32> loc("first")
  %h = pipe.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> loc("first")
  %r = pipe.reshape %h : tensor<8x32xf32> to tensor<16x16xf32> loc("flat")
  %w2 = pipe.param_ref @w2 : tensor<16x4xf32> loc("second")
  %y = pipe.matmul %r, %w2 : tensor<16x16xf32>, tensor<16x4xf32> loc("second")
  %l = pipe.reduce_sum %y axes [0, 1] : tensor<16x4xf32> loc("loss")
  return %l : tensor<f32>
}
