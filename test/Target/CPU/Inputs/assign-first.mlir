pipe.parameter @p : tensor<4xf32> = dense<0.0> : tensor<4xf32>
func.func @main(%x: tensor<4xf32> {pipe.name = "x"}) -> (tensor<4xf32> {pipe.assign = @p}, tensor<4xf32> {pipe.name = "y"}) {
  %y = pipe.relu %x : tensor<4xf32>
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}
