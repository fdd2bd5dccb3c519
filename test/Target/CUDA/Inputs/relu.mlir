func.func @main(%x: tensor<4x8xf32> {pipe.name = "x"}) -> (tensor<4x8xf32> {pipe.name = "y"}) {
  %y = pipe.relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
