func.func @main(%x: tensor<1x1x1x1x1x1x1x2x3xf32> {pipe.name = "x"}) -> (tensor<1x1x1x1x1x1x1x2x3xf32> {pipe.name = "y"}) {
  %y = pipe.softmax %x axis 8 : tensor<1x1x1x1x1x1x1x2x3xf32>
  return %y : tensor<1x1x1x1x1x1x1x2x3xf32>
}
