pipe.parameter @w : tensor<4x3x3x3xf32> trainable = dense<0.5> : tensor<4x3x3x3xf32>

func.func @main(%x: tensor<1x3x8x8xf32> {pipe.name = "x"}) -> (tensor<1x4x6x6xf32> {pipe.name = "y"}) {
  %w = pipe.param_ref @w : tensor<4x3x3x3xf32>
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return %y : tensor<1x4x6x6xf32>
}
