// The training MLP of python/train_reference.py as pipe IR, without its
// weights: mlp.mlir's layers, then the mean squared error against y as the
// loss. Enough to plan, not to run.
pipe.parameter @fc1.weight : tensor<32x16xf32> trainable
pipe.parameter @fc1.bias : tensor<32xf32> trainable
pipe.parameter @fc2.weight : tensor<32x32xf32> trainable
pipe.parameter @fc2.bias : tensor<32xf32> trainable
pipe.parameter @fc3.weight : tensor<4x32xf32> trainable
pipe.parameter @fc3.bias : tensor<4xf32> trainable
func.func @main(%x: tensor<8x16xf32> {pipe.name = "x"}, %y: tensor<8x4xf32> {pipe.name = "y"}) -> (tensor<f32> {pipe.name = "loss"}) {
  %w1 = pipe.param_ref @fc1.weight : tensor<32x16xf32> loc("/fc1/Gemm")
  %b1 = pipe.param_ref @fc1.bias : tensor<32xf32> loc("/fc1/Gemm")
  %h1 = pipe.gemm %x, %w1, %b1 trans_b : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32> loc("/fc1/Gemm")
  %r = pipe.relu %h1 : tensor<8x32xf32> loc("/Relu")
  %w2 = pipe.param_ref @fc2.weight : tensor<32x32xf32> loc("/fc2/Gemm")
  %b2 = pipe.param_ref @fc2.bias : tensor<32xf32> loc("/fc2/Gemm")
  %h2 = pipe.gemm %r, %w2, %b2 trans_b : tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32> loc("/fc2/Gemm")
  %t = pipe.tanh %h2 : tensor<8x32xf32> loc("/Tanh")
  %w3 = pipe.param_ref @fc3.weight : tensor<4x32xf32> loc("/fc3/Gemm")
  %b3 = pipe.param_ref @fc3.bias : tensor<4xf32> loc("/fc3/Gemm")
  %o = pipe.gemm %t, %w3, %b3 trans_b : tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32> loc("/fc3/Gemm")
  %d = pipe.sub %o, %y : tensor<8x4xf32>, tensor<8x4xf32> loc("/Sub")
  %s = pipe.mul %d, %d : tensor<8x4xf32>, tensor<8x4xf32> loc("/Mul")
  %l = pipe.reduce_mean %s axes [0, 1] : tensor<8x4xf32> loc("/ReduceMean")
  return %l : tensor<f32>
}
