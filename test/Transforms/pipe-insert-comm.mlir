// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition | pipe-opt --pipe-insert-comm | FileCheck %s
// RUN: pipe-opt %s --split-input-file --pipe-insert-comm --verify-diagnostics

// Activations go forward once to each stage that reads them, the skip
// connection straight from stage 0 to stage 2; gradients go backward; the
// tied weight's new value goes from its owner, stage 0, to stage 2 after
// the update.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = pipe.matmul {{.*}} pipe.stage = 0
// CHECK-NEXT: pipe.send forward %[[A]] to 2 channel 0 {pipe.stage = 0 : i64} : tensor<8x16xf32>
// CHECK-NEXT: %[[A2:.*]] = pipe.recv forward from 0 channel 0 {pipe.stage = 2 : i64} : tensor<8x16xf32>
// CHECK: %[[B:.*]] = pipe.tanh %[[A]]
// CHECK-NEXT: pipe.send forward %[[B]] to 1 channel 1 {pipe.stage = 0 : i64}
// CHECK-NEXT: %[[B1:.*]] = pipe.recv forward from 0 channel 1 {pipe.stage = 1 : i64}
// CHECK: pipe.matmul %[[B1]], {{.*}} pipe.stage = 1
// CHECK: %[[D:.*]] = pipe.sigmoid
// CHECK-NEXT: pipe.send forward %[[D]] to 2 channel 2
// CHECK-NEXT: %[[D2:.*]] = pipe.recv forward from 1 channel 2
// CHECK: pipe.add %[[D2]], %[[A2]] {{.*}} pipe.stage = 2
// The gradient of the add goes to both stages that fed it.
// CHECK: pipe.send backward %[[G:.*]] to 0 channel 3 {pipe.stage = 2 : i64}
// CHECK: pipe.send backward %[[G]] to 1 channel 4 {pipe.stage = 2 : i64}
// CHECK-LABEL: func.func @update
// CHECK-SAME: -> (tensor<16x16xf32> {pipe.assign = @w, pipe.stage = 0 : i64}, tensor<16x16xf32> {pipe.assign = @v, pipe.stage = 1 : i64}, tensor<16x16xf32> {pipe.assign = @w, pipe.stage = 2 : i64})
// CHECK: %[[NEW:.*]] = pipe.sgd_update {{.*}} pipe.stage = 0
// CHECK: pipe.send update %[[NEW]] to 2 channel 7 {pipe.stage = 0 : i64}
// CHECK: %[[COPY:.*]] = pipe.recv update from 0 channel 7 {pipe.stage = 2 : i64}
// CHECK: return %[[NEW]], %{{.*}}, %[[COPY]]

// A gradient that a later stage reads could never arrive in time.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = true, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>, #pipe.stage_plan<index = 1, device = "c1", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{this gradient op of stage 0 is read by stage 1; gradients flow from later stages to earlier ones}}
    %a = pipe.relu %x {pipe.stage = 0 : i64, pipe.phase = #pipe<phase backward>} : tensor<4xf32>
    %b = pipe.tanh %a {pipe.stage = 1 : i64, pipe.phase = #pipe<phase backward>} : tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// -----

// expected-error @below {{--pipe-insert-comm needs a planned and partitioned @main; run --pipe-plan and --pipe-partition first}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
