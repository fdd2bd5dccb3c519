// RUN: pipe-opt %s --pipe-plan="cluster=%S/../Plan/Inputs/two-gpus.json training=true microbatches=4 cut-after=first device-order=t0,a0 recompute=full" | pipe-opt | FileCheck %s

// The plan goes on the module, the stage of each op that does work on the
// op; parameter reads get none.
// CHECK-LABEL: module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 4, training = true, stages = [
// CHECK-SAME:    #pipe.stage_plan<index = 0, device = "t0", kind = "T4", arch = "sm_75", host = "n1", cores = 0, recompute = full, report = {
// CHECK-SAME:    #pipe.stage_plan<index = 1, device = "a0", kind = "A100-80GB", arch = "sm_80", host = "n1", cores = 0, recompute = full, report = {
// CHECK-SAME:    predicted_iteration_ms =
pipe.parameter @w1 : tensor<16x32xf32> trainable = dense<0.5> : tensor<16x32xf32>
pipe.parameter @w2 : tensor<32x4xf32> trainable = dense<0.25> : tensor<32x4xf32>
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<8x16xf32> {pipe.name = "x"}) -> (tensor<f32> {pipe.name = "loss"}) {
  // CHECK: pipe.param_ref @w1 : tensor<16x32xf32>
  %w1 = pipe.param_ref @w1 : tensor<16x32xf32> loc("first")
  // CHECK: pipe.matmul {{.*}} {pipe.stage = 0 : i64}
  %h = pipe.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> loc("first")
  %w2 = pipe.param_ref @w2 : tensor<32x4xf32> loc("second")
  // CHECK: pipe.matmul {{.*}} {pipe.stage = 1 : i64}
  %y = pipe.matmul %h, %w2 : tensor<8x32xf32>, tensor<32x4xf32> loc("second")
  // CHECK: pipe.reduce_sum {{.*}} {pipe.stage = 1 : i64}
  %l = pipe.reduce_sum %y axes [0, 1] : tensor<8x4xf32> loc("loss")
  return %l : tensor<f32>
}

