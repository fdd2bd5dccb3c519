// Swaps @a and @b on every call, and returns x + a.
pipe.parameter @a : tensor<1xf32> = dense<1.0> : tensor<1xf32>
pipe.parameter @b : tensor<1xf32> = dense<2.0> : tensor<1xf32>
func.func @main(%x: tensor<1xf32> {pipe.name = "x"}) -> (tensor<1xf32> {pipe.name = "y"}, tensor<1xf32> {pipe.assign = @a}, tensor<1xf32> {pipe.assign = @b}) {
  %a = pipe.param_ref @a : tensor<1xf32>
  %b = pipe.param_ref @b : tensor<1xf32>
  %y = pipe.add %x, %a : tensor<1xf32>, tensor<1xf32>
  return %y, %b, %a : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
