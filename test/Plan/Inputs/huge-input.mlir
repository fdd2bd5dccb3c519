// A graph input of 4e9 x 4e9 floats: 6.4e19 bytes, past int64_t.
func.func @main(%x: tensor<4000000000x4000000000xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "y"}) {
  %s = pipe.reduce_sum %x axes [0, 1] : tensor<4000000000x4000000000xf32> loc("sum")
  return %s : tensor<f32>
}
