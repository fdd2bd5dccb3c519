// RUN: pipe-opt %s | pipe-opt | FileCheck %s
// RUN: pipe-opt %s --mlir-print-op-generic | pipe-opt | FileCheck %s

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<4x8xf32>, %b: tensor<3xi1>, %i: tensor<2xi64>) {
  // CHECK: pipe.neg %{{.*}} : tensor<4x8xf32>
  %0 = pipe.neg %x : tensor<4x8xf32>
  // CHECK: pipe.abs %{{.*}} : tensor<2xi64>
  %1 = pipe.abs %i : tensor<2xi64>
  // CHECK: pipe.exp
  %2 = pipe.exp %x : tensor<4x8xf32>
  // CHECK: pipe.log
  %3 = pipe.log %x : tensor<4x8xf32>
  // CHECK: pipe.sqrt
  %4 = pipe.sqrt %x : tensor<4x8xf32>
  // CHECK: pipe.reciprocal
  %5 = pipe.reciprocal %x : tensor<4x8xf32>
  // CHECK: pipe.relu
  %6 = pipe.relu %x : tensor<4x8xf32>
  // CHECK: pipe.sigmoid
  %7 = pipe.sigmoid %x : tensor<4x8xf32>
  // CHECK: pipe.softplus
  %8 = pipe.softplus %x : tensor<4x8xf32>
  // CHECK: pipe.tanh
  %9 = pipe.tanh %x : tensor<4x8xf32>
  // CHECK: pipe.erf
  %10 = pipe.erf %x : tensor<4x8xf32>
  // CHECK: pipe.not %{{.*}} : tensor<3xi1>
  %11 = pipe.not %b : tensor<3xi1>
  // CHECK: pipe.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
  %12 = pipe.leaky_relu %x {alpha = 0.2 : f32} : tensor<4x8xf32>
  // CHECK: pipe.elu %{{.*}} : tensor<4x8xf32>
  %13 = pipe.elu %x : tensor<4x8xf32>
  // CHECK: pipe.selu %{{.*}} : tensor<4x8xf32>
  %14 = pipe.selu %x : tensor<4x8xf32>
  // CHECK: pipe.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf32>
  %15 = pipe.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x8xf32>
  // CHECK: pipe.cast %{{.*}} : tensor<2xi64> to tensor<2xf32>
  %16 = pipe.cast %i : tensor<2xi64> to tensor<2xf32>
  return
}

// CHECK-LABEL: func @binary
func.func @binary(%x: tensor<4x8xf32>, %r: tensor<8xf32>, %c: tensor<4x1xi1>,
                  %s: tensor<f32>) {
  // CHECK: pipe.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %0 = pipe.add %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.sub
  %1 = pipe.sub %r, %x : tensor<8xf32>, tensor<4x8xf32>
  // CHECK: pipe.mul
  %2 = pipe.mul %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: pipe.div
  %3 = pipe.div %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: pipe.pow
  %4 = pipe.pow %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: pipe.max
  %5 = pipe.max %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.min
  %6 = pipe.min %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.equal
  %7 = pipe.equal %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.less
  %8 = pipe.less %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.greater
  %9 = pipe.greater %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.prelu %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %10 = pipe.prelu %x, %r : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: pipe.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1xi1>, tensor<8xf32>, tensor<f32>
  %11 = pipe.where %c, %r, %s : tensor<4x1xi1>, tensor<8xf32>, tensor<f32>
  // Inferred result types are checked when the result is used.
  %12 = pipe.relu %11 : tensor<4x8xf32>
  %13 = pipe.not %7 : tensor<4x8xi1>
  return
}

// CHECK-LABEL: func @contractions
func.func @contractions(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>,
                        %m: tensor<4x8xf32>, %n: tensor<16x8xf32>,
                        %bias: tensor<16xf32>) {
  // CHECK: pipe.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<8x16xf32>
  %0 = pipe.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32>
  %1 = pipe.relu %0 : tensor<2x4x16xf32>
  // CHECK: pipe.gemm %{{.*}}, %{{.*}}, %{{.*}} trans_b {alpha = 5.000000e-01 : f32} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %2 = pipe.gemm %m, %n, %bias trans_b {alpha = 0.5 : f32} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %3 = pipe.relu %2 : tensor<4x16xf32>
  // CHECK: pipe.gemm %{{.*}}, %{{.*}} trans_a trans_b : tensor<8x4xf32>, tensor<16x8xf32>
  %t = pipe.transpose %m perm [1, 0] : tensor<4x8xf32>
  %4 = pipe.gemm %t, %n trans_a trans_b : tensor<8x4xf32>, tensor<16x8xf32>
  return
}

// CHECK-LABEL: func @conv_pool
func.func @conv_pool(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>,
                     %b: tensor<8xf32>, %x1: tensor<2x3x10xf32>,
                     %w1: tensor<6x3x3xf32>, %tw: tensor<4x3x3x3xf32>) {
  // CHECK: pipe.conv %{{.*}}, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 2 : tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>
  %0 = pipe.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 2 : tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>
  %1 = pipe.relu %0 : tensor<1x8x8x8xf32>
  // Channels last (the input is [N, H, W, C]) with a fused clip; rank 3.
  // CHECK: pipe.conv %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 2 channels_last {activation = #pipe<conv_activation clip>, activation_max = 6.000000e+00 : f32, activation_min = 0.000000e+00 : f32} : tensor<1x8x8x4xf32>, tensor<8x2x3x3xf32>
  %cl = pipe.transpose %x perm [0, 2, 3, 1] : tensor<1x4x8x8xf32>
  %c2 = pipe.conv %cl, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 2 channels_last {activation = #pipe<conv_activation clip>, activation_min = 0.0 : f32, activation_max = 6.0 : f32} : tensor<1x8x8x4xf32>, tensor<8x2x3x3xf32>
  %c3 = pipe.relu %c2 : tensor<1x8x8x8xf32>
  // CHECK: pipe.conv {{.*}} channels_last : tensor<2x10x3xf32>, tensor<6x3x3xf32>
  %x1l = pipe.transpose %x1 perm [0, 2, 1] : tensor<2x3x10xf32>
  %c4 = pipe.conv %x1l, %w1 strides [1] pads [1, 1] dilations [1] group 1 channels_last : tensor<2x10x3xf32>, tensor<6x3x3xf32>
  %c5 = pipe.relu %c4 : tensor<2x10x6xf32>
  // CHECK: pipe.conv %{{.*}}, %{{.*}} strides [2] pads [0, 1] dilations [1] group 1 : tensor<2x3x10xf32>, tensor<6x3x3xf32>
  %2 = pipe.conv %x1, %w1 strides [2] pads [0, 1] dilations [1] group 1 : tensor<2x3x10xf32>, tensor<6x3x3xf32>
  %3 = pipe.relu %2 : tensor<2x6x5xf32>
  // CHECK: pipe.conv_transpose %{{.*}}, %{{.*}} strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] output_padding [1, 1] group 1
  %4 = pipe.conv_transpose %x, %tw strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] output_padding [1, 1] group 1 : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>
  %5 = pipe.relu %4 : tensor<1x3x16x16xf32>
  // CHECK: pipe.max_pool %{{.*}} kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode : tensor<1x4x8x8xf32>
  %6 = pipe.max_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode : tensor<1x4x8x8xf32>
  %7 = pipe.relu %6 : tensor<1x4x5x5xf32>
  // CHECK: pipe.average_pool %{{.*}} kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] count_include_pad : tensor<1x4x8x8xf32>
  %8 = pipe.average_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] count_include_pad : tensor<1x4x8x8xf32>
  %9 = pipe.relu %8 : tensor<1x4x4x4xf32>
  // CHECK: pipe.global_average_pool %{{.*}} : tensor<1x4x8x8xf32>
  %10 = pipe.global_average_pool %x : tensor<1x4x8x8xf32>
  %11 = pipe.relu %10 : tensor<1x4x1x1xf32>
  return
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>,
                 %h: tensor<2x8x64xf32>, %g: tensor<64xf32>) {
  // CHECK: pipe.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  %0 = pipe.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-3 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  // CHECK: pipe.batch_norm_train
  %1:3 = pipe.batch_norm_train %x, %c, %c, %c, %c {momentum = 0.1 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  // CHECK: %input_grad, %scale_grad, %bias_grad = pipe.batch_norm_train_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  %bg:3 = pipe.batch_norm_train_grad %x, %c, %x {epsilon = 1.0e-3 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  // CHECK: pipe.layer_norm %{{.*}}, %{{.*}}, %{{.*}} axis 2 : tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>
  %2 = pipe.layer_norm %h, %g, %g axis 2 : tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>
  // CHECK: pipe.layer_norm %{{.*}}, %{{.*}} axis 2 : tensor<2x8x64xf32>, tensor<64xf32>
  %3 = pipe.layer_norm %h, %g axis 2 : tensor<2x8x64xf32>, tensor<64xf32>
  // CHECK: pipe.instance_norm %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x4x4xf32>, tensor<3xf32>
  %4 = pipe.instance_norm %x, %c, %c : tensor<2x3x4x4xf32>, tensor<3xf32>
  // CHECK: pipe.softmax %{{.*}} axis 2 : tensor<2x8x64xf32>
  %5 = pipe.softmax %h axis 2 : tensor<2x8x64xf32>
  // CHECK: pipe.log_softmax %{{.*}} axis 0 : tensor<2x8x64xf32>
  %6 = pipe.log_softmax %h axis 0 : tensor<2x8x64xf32>
  return
}

// CHECK-LABEL: func @reductions_and_losses
func.func @reductions_and_losses(%x: tensor<4x10xf32>, %l: tensor<4xi64>,
                                 %w: tensor<10xf32>) {
  // CHECK: pipe.reduce_mean %{{.*}} axes [1] keepdims : tensor<4x10xf32>
  %0 = pipe.reduce_mean %x axes [1] keepdims : tensor<4x10xf32>
  %1 = pipe.relu %0 : tensor<4x1xf32>
  // CHECK: pipe.reduce_sum %{{.*}} axes [0, 1] : tensor<4x10xf32>
  %2 = pipe.reduce_sum %x axes [0, 1] : tensor<4x10xf32>
  %3 = pipe.relu %2 : tensor<f32>
  // CHECK: pipe.reduce_max %{{.*}} axes [0] : tensor<4x10xf32>
  %4 = pipe.reduce_max %x axes [0] : tensor<4x10xf32>
  %5 = pipe.relu %4 : tensor<10xf32>
  // CHECK: pipe.softmax_cross_entropy %{{.*}}, %{{.*}} reduction mean {ignore_index = -100 : i64} : tensor<4x10xf32>, tensor<4xi64>
  %6 = pipe.softmax_cross_entropy %x, %l reduction mean {ignore_index = -100 : i64} : tensor<4x10xf32>, tensor<4xi64>
  %7 = pipe.relu %6 : tensor<f32>
  // CHECK: pipe.nll_loss %{{.*}}, %{{.*}}, %{{.*}} reduction none : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  %8 = pipe.nll_loss %x, %l, %w reduction none : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  %9 = pipe.relu %8 : tensor<4xf32>
  return
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>,
                         %ids: tensor<6xi64>, %e: tensor<3x1xf32>) {
  // CHECK: pipe.constant dense<[6, 4]> : tensor<2xi64>
  %c = pipe.constant dense<[6, 4]> : tensor<2xi64>
  // CHECK: pipe.reshape %{{.*}} : tensor<2x3x4xf32> to tensor<6x4xf32>
  %0 = pipe.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
  // CHECK: pipe.transpose %{{.*}} perm [2, 0, 1] : tensor<2x3x4xf32>
  %1 = pipe.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32>
  %2 = pipe.relu %1 : tensor<4x2x3xf32>
  // CHECK: pipe.concat %{{.*}}, %{{.*}} axis 1 : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  %3 = pipe.concat %x, %y axis 1 : tensor<2x3x4xf32>, tensor<2x5x4xf32>
  %4 = pipe.relu %3 : tensor<2x8x4xf32>
  // CHECK: pipe.split %{{.*}} axis 1 : tensor<2x5x4xf32> to tensor<2x2x4xf32>, tensor<2x3x4xf32>
  %5:2 = pipe.split %y axis 1 : tensor<2x5x4xf32> to tensor<2x2x4xf32>, tensor<2x3x4xf32>
  // CHECK: pipe.slice %{{.*}} offsets [0, 2, 3] sizes [2, 2, 2] strides [1, -1, -2] : tensor<2x3x4xf32>
  %6 = pipe.slice %x offsets [0, 2, 3] sizes [2, 2, 2] strides [1, -1, -2] : tensor<2x3x4xf32>
  %7 = pipe.relu %6 : tensor<2x2x2xf32>
  // CHECK: pipe.gather %{{.*}}, %{{.*}} axis 0 : tensor<6x4xf32>, tensor<6xi64>
  %8 = pipe.gather %0, %ids axis 0 : tensor<6x4xf32>, tensor<6xi64>
  %9 = pipe.relu %8 : tensor<6x4xf32>
  // CHECK: pipe.expand %{{.*}} : tensor<3x1xf32> to tensor<2x3x4xf32>
  %10 = pipe.expand %e : tensor<3x1xf32> to tensor<2x3x4xf32>
  // CHECK: pipe.tile %{{.*}} repeats [2, 3] : tensor<3x1xf32>
  %11 = pipe.tile %e repeats [2, 3] : tensor<3x1xf32>
  %12 = pipe.relu %11 : tensor<6x3xf32>
  // CHECK: pipe.pad %{{.*}} pads [1, 0, 1, 0] mode reflect : tensor<3x1xf32>
  %13 = pipe.pad %e pads [1, 0, 1, 0] mode reflect : tensor<3x1xf32>
  // CHECK: pipe.pad %{{.*}} pads [1, 0, 1, 0] mode constant {value = 1.500000e+00 : f64} : tensor<3x1xf32>
  %14 = pipe.pad %e pads [1, 0, 1, 0] mode constant {value = 1.5 : f64} : tensor<3x1xf32>
  %15 = pipe.relu %14 : tensor<5x1xf32>
  // CHECK: pipe.shape %{{.*}} : tensor<2x3x4xf32>
  %16 = pipe.shape %x : tensor<2x3x4xf32>
  %17 = pipe.abs %16 : tensor<3xi64>
  // CHECK: pipe.size %{{.*}} : tensor<2x3x4xf32>
  %18 = pipe.size %x : tensor<2x3x4xf32>
  %19 = pipe.abs %18 : tensor<i64>
  // CHECK: pipe.trilu %{{.*}} upper {k = 1 : i64} : tensor<2x3x4xf32>
  %20 = pipe.trilu %x upper {k = 1 : i64} : tensor<2x3x4xf32>
  // CHECK: pipe.dropout %{{.*}} {ratio = 1.000000e-01 : f32, seed = 7 : i64} : tensor<2x3x4xf32>
  %21 = pipe.dropout %x {ratio = 0.1 : f32, seed = 7 : i64} : tensor<2x3x4xf32>
  return
}

// Large constants stay out of the IR text as resource blobs.
// CHECK-LABEL: func @resource_constant
func.func @resource_constant() -> tensor<2xf32> {
  // CHECK: pipe.constant dense_resource<blob1> : tensor<2xf32>
  %0 = pipe.constant dense_resource<blob1> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK: pipe.parameter @fc.weight : tensor<2xf32> trainable = dense_resource<blob1> : tensor<2xf32>
pipe.parameter @fc.weight : tensor<2xf32> trainable = dense_resource<blob1> : tensor<2xf32>
// CHECK: pipe.parameter @running_mean : tensor<3xf32>{{$}}
pipe.parameter @running_mean : tensor<3xf32>

// CHECK-LABEL: func @parameters
func.func @parameters() -> tensor<2xf32> {
  // CHECK: pipe.param_ref @fc.weight : tensor<2xf32>
  %0 = pipe.param_ref @fc.weight : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func @recompute
func.func @recompute(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: pipe.recompute(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>):
  // CHECK-NEXT: %[[S:.*]] = pipe.add %[[A]], %[[B]]
  // CHECK-NEXT: pipe.yield %[[S]] : tensor<4xf32>
  %0 = pipe.recompute (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = pipe.add %a, %b : tensor<4xf32>, tensor<4xf32>
    pipe.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// CHECK: pipe.stage @s0 index 0 device "a0" {
// CHECK: pipe.send forward %{{.*}} to 1 channel 0 : tensor<4x8xf32>
// CHECK: pipe.recv backward from 1 channel 1 : tensor<4x8xf32>
pipe.stage @s0 index 0 device "a0" {
  pipe.parameter @w : tensor<4x8xf32> trainable
  func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w = pipe.param_ref @w : tensor<4x8xf32>
    %h = pipe.mul %x, %w : tensor<4x8xf32>, tensor<4x8xf32>
    pipe.send forward %h to 1 channel 0 : tensor<4x8xf32>
    %g = pipe.recv backward from 1 channel 1 : tensor<4x8xf32>
    return %g : tensor<4x8xf32>
  }
}
// CHECK: pipe.stage @s1 index 1 device "v0" {
// CHECK: pipe.recv forward from 0 channel 0 : tensor<4x8xf32>
// CHECK: pipe.send backward %{{.*}} to 0 channel 1 : tensor<4x8xf32>
pipe.stage @s1 index 1 device "v0" {
  func.func @step() {
    %h = pipe.recv forward from 0 channel 0 : tensor<4x8xf32>
    %g = pipe.tanh %h : tensor<4x8xf32>
    pipe.send backward %g to 0 channel 1 : tensor<4x8xf32>
    return
  }
}

// CHECK-LABEL: func @pool_grads
func.func @pool_grads(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x3x4x4xf32>) {
  // CHECK: pipe.max_pool_grad %{{.*}}, %{{.*}} kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
  %0 = pipe.max_pool_grad %x, %dy kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
  // CHECK: pipe.average_pool_grad %{{.*}} kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] count_include_pad : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %1 = pipe.average_pool_grad %dy kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] count_include_pad : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return
}

// A depthwise convolution's weight gradient, all groups in one op.
// CHECK-LABEL: func @conv_weight_grad
func.func @conv_weight_grad(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) {
  // CHECK: pipe.conv_weight_grad %{{.*}}, %{{.*}} strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] group 4 : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<4x1x3x3xf32>
  %0 = pipe.conv_weight_grad %x, %dy strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] group 4 : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<4x1x3x3xf32>
  return
}

// CHECK-LABEL: func @optimizers
func.func @optimizers(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>,
                      %b: tensor<8x4xf32>, %v: tensor<8x4xf32>,
                      %step: tensor<i64>) {
  // CHECK: pipe.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64} : tensor<8x4xf32>
  %0 = pipe.sgd_update %p, %g, %step {lr = 0.1 : f64} : tensor<8x4xf32>
  // CHECK: pipe.sgd_update %{{.*}}, %{{.*}}, %{{.*}} momentum_buffer %{{.*}} {lr = 5.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov} : tensor<8x4xf32>, tensor<8x4xf32>
  %1, %2 = pipe.sgd_update %p, %g, %step momentum_buffer %b {lr = 0.05 : f64, momentum = 0.9 : f64, nesterov} : tensor<8x4xf32>, tensor<8x4xf32>
  // CHECK: pipe.adam_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decoupled, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64} : tensor<8x4xf32>
  %3, %4, %5 = pipe.adam_update %p, %g, %b, %v, %step {decoupled, lr = 1.0e-3 : f64, weight_decay = 1.0e-2 : f64} : tensor<8x4xf32>
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
