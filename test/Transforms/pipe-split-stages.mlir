// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=full" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm --pipe-insert-recompute | pipe-opt --pipe-split-stages | FileCheck %s
// RUN: pipe-opt %s --split-input-file --pipe-split-stages --verify-diagnostics

// Each stage gets the parameters it reads or writes and its functions;
// @main, @update and the module's parameters are gone.
// CHECK-NOT: func.func @main
// CHECK-LABEL: pipe.stage @stage0 index 0 device "c0" {
// CHECK-NEXT: pipe.parameter @w
// CHECK-NOT: pipe.parameter
// Stage 0 stashes nothing under full recomputation: its backward pass
// reads its input again.
// CHECK: func.func @forward(%{{.*}}: tensor<8x16xf32> {pipe.name = "x"}) {
// CHECK: pipe.send forward
// CHECK: func.func @backward(%[[X:.*]]: tensor<8x16xf32> {pipe.name = "x"}) -> (tensor<16x16xf32> {pipe.grad_of = @w, pipe.name = "grad.w"})
// CHECK: pipe.recompute(%[[X]])
// CHECK: func.func @update(%{{.*}}: tensor<16x16xf32> {pipe.name = "grad.w"}, %{{.*}}: tensor<i64> {pipe.name = "step"}) -> (tensor<16x16xf32> {pipe.assign = @w})
// CHECK: pipe.send update

// Stage 1 stashes what it receives.
// CHECK-LABEL: pipe.stage @stage1 index 1 device "c1" {
// CHECK-NEXT: pipe.parameter @v
// CHECK: func.func @forward() -> (tensor<8x16xf32> {pipe.stash = 0 : i64}) {
// CHECK: %[[IN:.*]] = pipe.recv forward from 0 channel 1
// CHECK: return %[[IN]]
// CHECK: func.func @backward(%{{.*}}: tensor<8x16xf32> {pipe.stash = 0 : i64}) -> (tensor<16x16xf32> {pipe.grad_of = @v, pipe.name = "grad.v"})

// Stage 2 computes the loss, and receives its copy of @w after the update.
// CHECK-LABEL: pipe.stage @stage2 index 2 device "c2" {
// CHECK-NEXT: pipe.parameter @w
// CHECK: func.func @forward() -> (tensor<f32> {pipe.name = "loss"}, tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64})
// CHECK: func.func @update() -> (tensor<16x16xf32> {pipe.assign = @w})
// CHECK-NEXT: %[[COPY:.*]] = pipe.recv update from 0 channel 7
// CHECK-NEXT: return %[[COPY]]

// expected-error @below {{--pipe-split-stages needs a planned, partitioned @main; run --pipe-plan, --pipe-partition and --pipe-insert-comm first}}
module {
}

// -----

// A value that moves between stages without a transfer.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>, #pipe.stage_plan<index = 1, device = "c1", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {pipe.stage = 1 : i64}) {
    %a = pipe.relu %x {pipe.stage = 0 : i64, pipe.phase = #pipe<phase forward>} : tensor<4xf32>
    // expected-error @below {{reads a value of another stage or phase that is neither sent nor stashed}}
    %b = pipe.tanh %a {pipe.stage = 1 : i64, pipe.phase = #pipe<phase forward>} : tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// -----

// expected-error @below {{the plan is for training, but the module has no @update}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = true, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {pipe.stage = 0 : i64}) {
    return %x : tensor<4xf32>
  }
}
