func.func @main(%x: tensor<4xf32> {pipe.name = "x"}) -> (tensor<4xf32> {pipe.name = "y"}) {
  pipe.send forward %x to 1 channel 0 : tensor<4xf32>
  %y = pipe.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
