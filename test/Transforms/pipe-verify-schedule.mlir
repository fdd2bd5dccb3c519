// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=4 cut-after=first,middle device-order=c0,c1,c2" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm --pipe-split-stages --pipe-schedule | pipe-opt --pipe-verify-schedule | FileCheck %s
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=4 cut-after=first,middle device-order=c0,c1,c2 schedule=gpipe recompute=full" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm --pipe-insert-recompute --pipe-split-stages --pipe-schedule | pipe-opt --pipe-verify-schedule | FileCheck %s
// RUN: pipe-opt %s --split-input-file --pipe-verify-schedule --verify-diagnostics

// CHECK: module attributes {pipe.plan = {{.*}}, pipe.schedule_verified}

// Both stages wait to receive before they send: a deadlock.
module {
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>]} {
    func.func @forward() {
      // expected-error @below {{the schedule does not hold: stage 0: deadlock: stage 0 waits forever to receive from stage 1 on channel 1 (forward 0), while stage 1 waits before its step forward 0}}
      %a = pipe.recv forward from 1 channel 1 : tensor<4xf32>
      pipe.send forward %a to 1 channel 0 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>]} {
    func.func @forward() {
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      pipe.send forward %a to 0 channel 1 : tensor<4xf32>
      return
    }
  }
}

// -----

// The sends and receives of one direction pair up in order: stage 1
// receives on channel 1 first, which stage 0 sends second.
module {
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>, #pipe.post<forward, 0, 1>]} {
    func.func @forward(%x: tensor<4xf32>) {
      // expected-error @below {{the schedule does not hold: stage 0: send 0 to stage 1 (forward 0, channel 0, tensor<4xf32>) would be received as forward 0, channel 1, tensor<4xf32>}}
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      pipe.send forward %x to 1 channel 1 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" attributes {pipe.program = [#pipe.step<forward, 0>]} {
    func.func @forward() {
      %b = pipe.recv forward from 0 channel 1 : tensor<4xf32>
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      return
    }
  }
}

// -----

// The transport matches in the order of posting: stage 0 posts microbatch
// 1's activation first, which stage 1 would take for microbatch 0's.
module {
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.step<forward, 1>, #pipe.post<forward, 1, 0>, #pipe.post<forward, 0, 0>]} {
    func.func @forward(%x: tensor<4xf32>) {
      // expected-error @below {{the schedule does not hold: stage 0: send 0 to stage 1 (forward 1, channel 0, tensor<4xf32>) would be received as forward 0, channel 0, tensor<4xf32>}}
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.step<forward, 1>]} {
    func.func @forward() {
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      return
    }
  }
}

// -----

// Programs whose microbatches disagree: stage 1 runs microbatch 1 where
// stage 0 sends microbatch 0.
module {
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>]} {
    func.func @forward(%x: tensor<4xf32>) {
      // expected-error @below {{send 0 to stage 1 (forward 0, channel 0, tensor<4xf32>) would be received as forward 1, channel 0, tensor<4xf32>}}
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" attributes {pipe.program = [#pipe.step<forward, 1>]} {
    func.func @forward() {
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      return
    }
  }
}

// -----

// A send the program never posts.
module {
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.step<forward, 0>]} {
    func.func @forward(%x: tensor<4xf32>) {
      // expected-error @below {{the schedule does not hold: stage 0: is never posted}}
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
  pipe.stage @s1 index 1 device "c1" attributes {pipe.program = [#pipe.step<forward, 0>]} {
    func.func @forward() {
      %a = pipe.recv forward from 0 channel 0 : tensor<4xf32>
      return
    }
  }
}

// -----

// A send posted before its step has run.
module {
  // expected-error @below {{program entry #pipe.post<forward, 0, 0> names no send of a step that runs before it}}
  pipe.stage @s0 index 0 device "c0" attributes {pipe.program = [#pipe.post<forward, 0, 0>, #pipe.step<forward, 0>]} {
    func.func @forward(%x: tensor<4xf32>) {
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
}

// -----

module {
  // expected-error @below {{has no program (pipe.program); run --pipe-schedule first}}
  pipe.stage @s0 index 0 device "c0" {
  }
}
