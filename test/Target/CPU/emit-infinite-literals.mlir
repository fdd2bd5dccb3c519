// RUN: rm -rf %t && pipe-opt %s --emit=sources -o %t
// RUN: FileCheck %s --input-file=%t/stage0/main.cpp

// A clip with an infinite bound (as an ONNX Clip's min input may be)
// emits a C++ infinity, not the text formatv prints for it.
func.func @main(%x: tensor<4xf32> {pipe.name = "x"}) -> (tensor<4xf32> {pipe.name = "y"}) {
  %y = pipe.clip %x {min = 0xFFF0000000000000 : f64, max = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK: std::max<float>(v0, -std::numeric_limits<float>::infinity())
// CHECK-SAME: std::numeric_limits<float>::infinity())
