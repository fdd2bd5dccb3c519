// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm --pipe-split-stages | pipe-opt --pipe-schedule | FileCheck %s --check-prefix=ONEFONEB
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm --pipe-split-stages | pipe-opt --pipe-schedule="schedule=gpipe" | FileCheck %s --check-prefix=GPIPE
// RUN: pipe-opt %s --split-input-file --pipe-schedule --verify-diagnostics
// RUN: not pipe-opt %s --split-input-file --pipe-schedule="schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: --pipe-schedule: unknown schedule 'zigzag' (known: gpipe, 1f1b)

// 1F1B: stage s of 3 runs 2 - s forward passes (at most M = 2) first, then
// one of each, then the backward passes left; the update follows. Each
// send goes out with the group its stage posts when the receiver is about
// to need it: stage 0's activation for stage 2 over the skip connection
// (send 0 of its forward passes) goes out only when stage 2 gets to its
// forward pass, after stage 1's.
// ONEFONEB: pipe.plan = #pipe.plan<schedule = "1f1b"
// ONEFONEB: pipe.stage @stage0 {{.*}} attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 1>, #pipe.step<forward, 1>, #pipe.post<forward, 1, 1>, #pipe.post<forward, 0, 0>, #pipe.post<forward, 1, 0>, #pipe.step<backward, 0>, #pipe.step<backward, 1>, #pipe.step<update, 0>, #pipe.post<update, 0, 0>]}
// ONEFONEB: pipe.stage @stage1 {{.*}} attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>, #pipe.step<forward, 1>, #pipe.post<forward, 1, 0>, #pipe.step<backward, 0>, #pipe.post<backward, 0, 0>, #pipe.step<backward, 1>, #pipe.post<backward, 1, 0>, #pipe.step<update, 0>]}
// ONEFONEB: pipe.stage @stage2 {{.*}} attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.step<backward, 0>, #pipe.post<backward, 0, 1>, #pipe.step<forward, 1>, #pipe.post<backward, 0, 0>, #pipe.post<backward, 0, 2>, #pipe.step<backward, 1>, #pipe.post<backward, 1, 1>, #pipe.post<backward, 1, 0>, #pipe.post<backward, 1, 2>, #pipe.step<update, 0>]}

// GPipe: every forward pass, then every backward pass; the plan follows.
// GPIPE: pipe.plan = #pipe.plan<schedule = "gpipe"
// GPIPE: pipe.stage @stage2 {{.*}} attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.step<forward, 1>, #pipe.step<backward, 0>, {{.*}}#pipe.step<backward, 1>, {{.*}}#pipe.step<update, 0>]}

// expected-error @below {{--pipe-schedule needs a plan (pipe.plan); run --pipe-plan first}}
module {
}

// -----

// expected-error @below {{the plan has 2 stages, but the module has 0 pipe.stage ops; run --pipe-split-stages first}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>, #pipe.stage_plan<index = 1, device = "c1", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// Stages that each wait to receive what the other sends only after: no
// order of the transfers works.
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>, #pipe.stage_plan<index = 1, device = "c1", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
  pipe.stage @s0 index 0 device "c0" {
    func.func @forward() {
      // expected-error @below {{no schedule of the transfers exists: stage 0 can never run its step forward 0: it receives on channel 1 what stage 1 sends in its step forward 0, which waits on it in turn}}
      %a = pipe.recv forward from 1 channel 1 : tensor<4xf32>
      pipe.send forward %a to 1 channel 0 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" {
    func.func @forward() {
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      pipe.send forward %a to 0 channel 1 : tensor<4xf32>
      return
    }
  }
}
