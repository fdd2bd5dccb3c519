// A convolution with no output channels: no work, and no division by zero
// in its FLOP count.
pipe.parameter @w : tensor<0x3x3x3xf32> trainable = dense<0.5> : tensor<0x3x3x3xf32>
func.func @main(%x: tensor<1x3x8x8xf32> {pipe.name = "x"}) -> (tensor<1x0x6x6xf32> {pipe.name = "y"}) {
  %w = pipe.param_ref @w : tensor<0x3x3x3xf32> loc("conv")
  %y = pipe.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] group 1 : tensor<1x3x8x8xf32>, tensor<0x3x3x3xf32> loc("conv")
  return %y : tensor<1x0x6x6xf32>
}
