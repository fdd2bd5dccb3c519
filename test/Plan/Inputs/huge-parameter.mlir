// 4e9 x 4e9 floats: 6.4e19 bytes, past int64_t.
pipe.parameter @w : tensor<4000000000x4000000000xf32> trainable = dense<0.5> : tensor<4000000000x4000000000xf32>
func.func @main(%x: tensor<2x4000000000xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4000000000x4000000000xf32> loc("first")
  %h = pipe.matmul %x, %w : tensor<2x4000000000xf32>, tensor<4000000000x4000000000xf32> loc("first")
  %l = pipe.reduce_sum %h axes [0, 1] : tensor<2x4000000000xf32> loc("loss")
  return %l : tensor<f32>
}
