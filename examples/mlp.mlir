// A two-layer MLP as the ONNX importer produces it from a PyTorch export:
// parameters by name, a Shape -> Gather -> Concat -> Reshape chain that
// flattens the input, and a training-mode dropout.
//
//   pipe-opt examples/mlp.mlir --canonicalize --pipe-inference-mode
//
// folds the shape chain away and drops the dropout.

pipe.parameter @fc1.weight : tensor<32x64xf32> trainable
pipe.parameter @fc1.bias : tensor<32xf32> trainable
pipe.parameter @fc2.weight : tensor<10x32xf32> trainable
pipe.parameter @fc2.bias : tensor<10xf32> trainable

func.func @main(%image: tensor<8x1x8x8xf32>) -> tensor<8x10xf32> {
  %shape = pipe.shape %image : tensor<8x1x8x8xf32>
  %zero = pipe.constant dense<0> : tensor<1xi64>
  %batch = pipe.gather %shape, %zero axis 0 : tensor<4xi64>, tensor<1xi64>
  %rest = pipe.constant dense<-1> : tensor<1xi64>
  %target = pipe.concat %batch, %rest axis 0 : tensor<1xi64>, tensor<1xi64>
  %x = pipe.reshape %image : tensor<8x1x8x8xf32> to tensor<8x64xf32>

  %w1 = pipe.param_ref @fc1.weight : tensor<32x64xf32>
  %b1 = pipe.param_ref @fc1.bias : tensor<32xf32>
  %h = pipe.gemm %x, %w1, %b1 trans_b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>
  %a = pipe.relu %h : tensor<8x32xf32>
  %d = pipe.dropout %a {ratio = 0.1 : f32} : tensor<8x32xf32>

  %w2 = pipe.param_ref @fc2.weight : tensor<10x32xf32>
  %b2 = pipe.param_ref @fc2.bias : tensor<10xf32>
  %y = pipe.gemm %d, %w2, %b2 trans_b : tensor<8x32xf32>, tensor<10x32xf32>, tensor<10xf32>
  return %y : tensor<8x10xf32>
}
