// x[4096, 4096] times a trainable w[4096, 4096], summed into a loss: the
// matmul's backward pass needs only the weight's gradient (x is an input),
// as many FLOPs as its forward pass, not twice as many.
pipe.parameter @w : tensor<4096x4096xf32> trainable = dense<0.5> : tensor<4096x4096xf32>
func.func @main(%x: tensor<4096x4096xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<4096x4096xf32> loc("mm")
  %y = pipe.matmul %x, %w : tensor<4096x4096xf32>, tensor<4096x4096xf32> loc("mm")
  %l = pipe.reduce_sum %y axes [0, 1] : tensor<4096x4096xf32> loc("loss")
  return %l : tensor<f32>
}
