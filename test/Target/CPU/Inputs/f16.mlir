func.func @main(%x: tensor<4xf16> {pipe.name = "x"}) -> (tensor<4xf16> {pipe.name = "y"}) {
  %y = pipe.relu %x : tensor<4xf16>
  return %y : tensor<4xf16>
}
