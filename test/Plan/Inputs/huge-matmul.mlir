// Three tensors of 4 TiB, but 2 * 2^20 * 2^20 * 2^20 = 2^61 FLOPs.
pipe.parameter @w : tensor<1048576x1048576xf32> trainable = dense<0.5> : tensor<1048576x1048576xf32>
func.func @main(%x: tensor<1048576x1048576xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<1048576x1048576xf32> loc("first")
  %h = pipe.matmul %x, %w : tensor<1048576x1048576xf32>, tensor<1048576x1048576xf32> loc("first")
  %l = pipe.reduce_sum %h axes [0, 1] : tensor<1048576x1048576xf32> loc("loss")
  return %l : tensor<f32>
}
