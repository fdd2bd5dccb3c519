// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition | FileCheck %s
// Without locations (printed without debug info), the gradient ops only
// have the gradients they read to go by: they all stay on the last stage.
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2" --pipe-training | pipe-opt --pipe-partition | FileCheck %s --check-prefix=DATAFLOW

// RUN: pipe-opt %s --split-input-file --pipe-partition --verify-diagnostics

// Forward ops keep the plan's stage; each gradient op goes to the stage of
// the forward op it differentiates; the tied weight @w, read on stages 0
// and 2, is owned by stage 0, where its gradients are summed.
// CHECK: pipe.parameter @w {{.*}} {pipe.stage = 0 : i64}
// CHECK: pipe.parameter @v {{.*}} {pipe.stage = 1 : i64}
// CHECK-LABEL: func.func @main
// CHECK-SAME: {pipe.name = "loss", pipe.stage = 2 : i64}
// CHECK-SAME: {pipe.grad_of = @w, pipe.name = "grad.w", pipe.stage = 0 : i64}
// CHECK-SAME: {pipe.grad_of = @v, pipe.name = "grad.v", pipe.stage = 1 : i64}
// CHECK: %[[W:.*]] = pipe.param_ref @w
// CHECK-NOT: pipe.stage
// CHECK: %[[A:.*]] = pipe.matmul %{{.*}}, %[[W]] {pipe.phase = #pipe<phase forward>, pipe.stage = 0 : i64}
// CHECK: pipe.tanh %[[A]] {pipe.phase = #pipe<phase forward>, pipe.stage = 0 : i64}
// CHECK: pipe.sigmoid {{.*}} {pipe.phase = #pipe<phase forward>, pipe.stage = 1 : i64}
// CHECK: pipe.reduce_mean {{.*}} {pipe.phase = #pipe<phase forward>, pipe.stage = 2 : i64}
// The gradient of the head's use of @w on stage 2, of the sigmoid on
// stage 1, and their sum with the first node's on stage 0.
// CHECK: pipe.transpose %[[W]] perm [1, 0] {pipe.phase = #pipe<phase backward>, pipe.stage = 2 : i64}
// CHECK: pipe.sub {{.*}} {pipe.phase = #pipe<phase backward>, pipe.stage = 1 : i64}
// CHECK: %[[SUM:.*]] = pipe.add {{.*}} {pipe.phase = #pipe<phase backward>, pipe.stage = 0 : i64} : tensor<16x16xf32>
// CHECK: return %{{.*}}, %[[SUM]],
// CHECK-LABEL: func.func @update
// CHECK-SAME: {pipe.assign = @w, pipe.stage = 0 : i64}
// CHECK-SAME: {pipe.assign = @v, pipe.stage = 1 : i64}
// CHECK: pipe.sgd_update {{.*}} pipe.stage = 0 : i64
// CHECK: pipe.sgd_update {{.*}} pipe.stage = 1 : i64

// DATAFLOW: pipe.parameter @w {{.*}} {pipe.stage = 2 : i64}
// DATAFLOW: pipe.parameter @v {{.*}} {pipe.stage = 2 : i64}
// DATAFLOW-NOT: phase backward>, pipe.stage = {{[01]}}

// expected-error @below {{--pipe-partition needs a plan (pipe.plan); run --pipe-plan first}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A forward op the plan puts before the value it reads.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>, #pipe.stage_plan<index = 1, device = "c1", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = pipe.relu %x {pipe.stage = 1 : i64} : tensor<4xf32>
    // expected-error @below {{the plan puts this op on stage 0, but it reads a value of stage 1; forward values flow from earlier stages to later ones}}
    %b = pipe.tanh %a {pipe.stage = 0 : i64} : tensor<4xf32>
    return %b : tensor<4xf32>
  }
}

// -----

// @update must take @main's gradients, then the step.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = true, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  pipe.parameter @w : tensor<4xf32> trainable = dense<1.0> : tensor<4xf32>
  func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}, tensor<4xf32> {pipe.grad_of = @w, pipe.name = "grad.w"}) {
    %w = pipe.param_ref @w : tensor<4xf32>
    %m = pipe.mul %x, %w {pipe.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
    %l = pipe.reduce_sum %m axes [0] {pipe.stage = 0 : i64} : tensor<4xf32>
    return %l, %x : tensor<f32>, tensor<4xf32>
  }
  // expected-error @below {{@update takes 1 arguments, but @main returns 1 gradients; @update takes them and the step}}
  func.func @update(%g: tensor<4xf32>) -> (tensor<4xf32> {pipe.assign = @w}) {
    return %g : tensor<4xf32>
  }
}

// -----

// Each result of @update belongs to the owner of the gradient it reads.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = true, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  pipe.parameter @w : tensor<4xf32> trainable = dense<1.0> : tensor<4xf32>
  func.func @main(%x: tensor<4xf32>) -> (tensor<f32> {pipe.name = "loss"}, tensor<4xf32> {pipe.grad_of = @w, pipe.name = "grad.w"}) {
    %w = pipe.param_ref @w : tensor<4xf32>
    %m = pipe.mul %x, %w {pipe.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
    %l = pipe.reduce_sum %m axes [0] {pipe.stage = 0 : i64} : tensor<4xf32>
    return %l, %x : tensor<f32>, tensor<4xf32>
  }
  // expected-error @below {{result 0 of @update reads no gradient; nothing says which stage it belongs to}}
  func.func @update(%g: tensor<4xf32>, %step: tensor<i64>) -> (tensor<4xf32> {pipe.assign = @w}) {
    %w = pipe.param_ref @w : tensor<4xf32>
    return %w : tensor<4xf32>
  }
}
