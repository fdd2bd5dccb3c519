func.func @main(%x: tensor<4x8xf32> {pipe.name = "x"}) -> (tensor<4x8xf32> {pipe.name = "y"}) {
  %s = pipe.softmax %x axis 1 : tensor<4x8xf32>
  %y = pipe.softmax %s axis 1 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
