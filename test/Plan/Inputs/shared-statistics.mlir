// Two batch normalizations sharing one running variance: the training step
// would lose one of its updates.
pipe.parameter @scale : tensor<3xf32> trainable
pipe.parameter @mean1 : tensor<3xf32>
pipe.parameter @mean2 : tensor<3xf32>
pipe.parameter @var : tensor<3xf32>
func.func @main(%x: tensor<2x3x4x4xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %s = pipe.param_ref @scale : tensor<3xf32> loc("bn1")
  %m1 = pipe.param_ref @mean1 : tensor<3xf32> loc("bn1")
  %m2 = pipe.param_ref @mean2 : tensor<3xf32> loc("bn2")
  %v = pipe.param_ref @var : tensor<3xf32> loc("bn1")
  %y, %rm, %rv = pipe.batch_norm_train %x, %s, %s, %m1, %v : tensor<2x3x4x4xf32>, tensor<3xf32> loc("bn1")
  %z, %rm2, %rv2 = pipe.batch_norm_train %y, %s, %s, %m2, %v : tensor<2x3x4x4xf32>, tensor<3xf32> loc("bn2")
  %l = pipe.reduce_mean %z axes [0, 1, 2, 3] : tensor<2x3x4x4xf32> loc("loss")
  return %l : tensor<f32>
}
