// A small training model for the pipelining passes: its weight @w is read
// by the first node and the last (tied, like a GPT's embedding and head),
// and node "skip" adds the first node's result back in (a skip connection
// over the middle node). Cut after "first" and "middle", each node is a
// stage of its own.
pipe.parameter @w : tensor<16x16xf32> trainable = dense<0.125> : tensor<16x16xf32>
pipe.parameter @v : tensor<16x16xf32> trainable = dense<0.25> : tensor<16x16xf32>
func.func @main(%x: tensor<8x16xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<16x16xf32> loc("first")
  %a = pipe.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> loc("first")
  %b = pipe.tanh %a : tensor<8x16xf32> loc("first")
  %v = pipe.param_ref @v : tensor<16x16xf32> loc("middle")
  %c = pipe.matmul %b, %v : tensor<8x16xf32>, tensor<16x16xf32> loc("middle")
  %d = pipe.sigmoid %c : tensor<8x16xf32> loc("middle")
  %e = pipe.add %d, %a : tensor<8x16xf32>, tensor<8x16xf32> loc("skip")
  %f = pipe.matmul %e, %w : tensor<8x16xf32>, tensor<16x16xf32> loc("skip")
  %g = pipe.mul %f, %f : tensor<8x16xf32>, tensor<8x16xf32> loc("skip")
  %l = pipe.reduce_mean %g axes [0, 1] : tensor<8x16xf32> loc("skip")
  return %l : tensor<f32>
}
