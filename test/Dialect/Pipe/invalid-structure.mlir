// RUN: pipe-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'pipe.parameter' op initial value of type 'tensor<2xf32>' does not match the parameter type 'tensor<3xf32>'}}
pipe.parameter @w : tensor<3xf32> = dense<[1.0, 2.0]> : tensor<2xf32>

// -----

// expected-error @+1 {{'pipe.parameter' op initial value of type 'tensor<2xf16>' does not match the parameter type 'tensor<2xf32>'}}
pipe.parameter @w : tensor<2xf32> trainable = dense<[1.0, 2.0]> : tensor<2xf16>

// -----

func.func @param_ref_unknown() -> tensor<2xf32> {
  // expected-error @+1 {{'pipe.param_ref' op 'missing' does not name a pipe.parameter}}
  %0 = pipe.param_ref @missing : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @not_a_parameter() {
  return
}

func.func @param_ref_not_parameter() -> tensor<2xf32> {
  // expected-error @+1 {{'pipe.param_ref' op 'not_a_parameter' does not name a pipe.parameter}}
  %0 = pipe.param_ref @not_a_parameter : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

pipe.parameter @w : tensor<2xf32>

func.func @param_ref_type() -> tensor<3xf32> {
  // expected-error @+1 {{'pipe.param_ref' op type 'tensor<3xf32>' does not match the type 'tensor<2xf32>' of parameter 'w'}}
  %0 = pipe.param_ref @w : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A parameter of another stage is not visible.
pipe.stage @s0 index 0 device "a0" {
  pipe.parameter @w : tensor<2xf32>
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<2xf32> {
    // expected-error @+1 {{'pipe.param_ref' op 'w' does not name a pipe.parameter}}
    %0 = pipe.param_ref @w : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'pipe.stage' op stage index must be non-negative, got -1}}
pipe.stage @s index -1 device "a0" {
}

// -----

// expected-error @+1 {{'pipe.stage' op stage 0 names no device}}
pipe.stage @s index 0 device "" {
}

// -----

// expected-error @+1 {{'pipe.stage' op stage index 0 is also used by stage @s1}}
pipe.stage @s0 index 0 device "a0" {
}
// expected-error @+1 {{'pipe.stage' op stage index 0 is also used by stage @s0}}
pipe.stage @s1 index 0 device "a1" {
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op has no matching pipe.recv from stage 0 on channel 0 in stage 1}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

// The recv of stage 1 is on another channel.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op has no matching pipe.recv from stage 0 on channel 3 in stage 1}}
    pipe.send forward %x to 1 channel 3 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op has no matching pipe.send to stage 1 on channel 2 in stage 0}}
    %0 = pipe.recv forward from 0 channel 2 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op has no matching pipe.send to stage 1 on channel 0 in stage 0}}
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends 'tensor<4xf32>' but stage 1 receives 'tensor<4xf16>' on channel 0}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf16> {
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf16>
    return %0 : tensor<4xf16>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op phase forward differs from the backward phase of its pipe.recv}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    %0 = pipe.recv backward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends to stage 2, which is not a stage of this pipeline}}
    pipe.send forward %x to 2 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op receives from stage 5, which is not a stage of this pipeline}}
    %0 = pipe.recv forward from 5 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

// A stage inside a nested module is not a sibling.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op sends to stage 2, which is not a stage of this pipeline}}
    pipe.send forward %x to 2 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}
module {
  pipe.stage @s2 index 2 device "a2" {
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    // expected-error @+1 {{'pipe.send' op channel 0 to stage 1 is already used}}
    pipe.send forward %x to 1 channel 0 : tensor<4xf32>
    return
  }
}

// -----

pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    %0 = pipe.recv forward from 0 channel 4 : tensor<4xf32>
    // expected-error @+1 {{'pipe.recv' op channel 4 from stage 0 is already used}}
    %1 = pipe.recv backward from 0 channel 4 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'pipe.send' op stage 0 cannot transfer to itself}}
    pipe.send forward %x to 0 channel 0 : tensor<4xf32>
    return
  }
}

// -----

pipe.stage @s0 index 0 device "a0" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{'pipe.recv' op stage 0 cannot transfer to itself}}
    %0 = pipe.recv backward from 0 channel 1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

func.func @send_negative_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.send' op peer stage must be non-negative, got -1}}
  pipe.send forward %x to -1 channel 0 : tensor<4xf32>
  return
}

// -----

func.func @send_negative_channel(%x: tensor<4xf32>) {
  // expected-error @+1 {{'pipe.send' op channel must be non-negative, got -2}}
  pipe.send forward %x to 1 channel -2 : tensor<4xf32>
  return
}

// -----

func.func @recv_negative_peer() -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recv' op peer stage must be non-negative, got -3}}
  %0 = pipe.recv forward from -3 channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @recv_negative_channel() -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recv' op channel must be non-negative, got -1}}
  %0 = pipe.recv forward from 1 channel -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Recompute
//===----------------------------------------------------------------------===//

func.func @recompute_arguments(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op region arguments must match the operand types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8xf32>):
    %t = pipe.tanh %a : tensor<8xf32>
    %r = pipe.reshape %t : tensor<8xf32> to tensor<4x2xf32>
    %s = pipe.slice %r offsets [0, 0] sizes [4, 1] strides [1, 1] : tensor<4x2xf32>
    %y = pipe.reshape %s : tensor<4x1xf32> to tensor<4xf32>
    pipe.yield %y : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_argument_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op region arguments must match the operand types}}
  %0 = pipe.recompute (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pipe.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op yielded types must match the result types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %t = pipe.reshape %a : tensor<4xf32> to tensor<2x2xf32>
    pipe.yield %t : tensor<2x2xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @recompute_yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pipe.recompute' op yielded types must match the result types}}
  %0 = pipe.recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pipe.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}


// -----

func.func @split_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{axis 0 is out of range for a rank-0 tensor}}
  %0:1 = pipe.split %a axis 0 : tensor<f32> to tensor<f32>
  return
}

// -----

// Transfers of a nested stage are not the outer stage's: the recv of @s1
// has no matching send in @s0.
pipe.stage @s0 index 0 device "a0" {
  pipe.stage @inner index 7 device "x" {
    func.func @f(%x: tensor<4xf32>) {
      pipe.send forward %x to 1 channel 0 : tensor<4xf32>
      return
    }
  }
}
pipe.stage @s1 index 1 device "a1" {
  func.func @f() -> tensor<4xf32> {
    // expected-error @+1 {{has no matching pipe.send to stage 1 on channel 0 in stage 0}}
    %0 = pipe.recv forward from 0 channel 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// The op's own error comes before pairing, also with sibling stages.
pipe.stage @s0 index 0 device "a0" {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{stage 0 cannot transfer to itself}}
    pipe.send forward %x to 0 channel 0 : tensor<4xf32>
    return
  }
}
pipe.stage @s1 index 1 device "a1" {
}

// -----

func.func @conv_transpose_zero_stride(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = pipe.conv_transpose %x, %w strides [0] pads [0, 0] dilations [1] output_padding [0] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @conv_transpose_negative_pads(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = pipe.conv_transpose %x, %w strides [1] pads [-1, 0] dilations [1] output_padding [0] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x3xf32>, %w: tensor<4x2x3xf32>) {
  // expected-error @+1 {{output_padding 2 of spatial axis 0 must lie in [0, max(stride, dilation))}}
  %0 = pipe.conv_transpose %x, %w strides [2] pads [0, 0] dilations [1] output_padding [2] group 1 : tensor<1x4x3xf32>, tensor<4x2x3xf32>
  return
}

// -----

func.func @clip_nan(%x: tensor<4xf32>) {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = pipe.clip %x {min = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @batch_norm_nan_momentum(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{momentum must lie in [0, 1]}}
  %0:3 = pipe.batch_norm_train %x, %c, %c, %c, %c {momentum = 0x7FC00000 : f32} : tensor<2x3x4x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @pad_edge_empty_axis(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{axis 0 is empty; only constant mode can pad it}}
  %0 = pipe.pad %x pads [1, 0, 0, 0] mode edge : tensor<0x3xf32>
  return
}

// -----

func.func @max_pool_dynamic(%x: tensor<1x1x?xf32>) {
  // expected-error @+1 {{operand of type 'tensor<1x1x?xf32>' is not a statically shaped tensor}}
  %0 = pipe.max_pool %x kernel [2] strides [1] pads [0, 0] dilations [1] : tensor<1x1x?xf32>
  return
}

// -----

func.func @add_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand of type 'tensor<?xf32>' is not a statically shaped tensor}}
  %0 = pipe.add %x, %x : tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @sgd_momentum_without_buffer(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{has a momentum buffer exactly when momentum is not zero}}
  %0 = pipe.sgd_update %p, %p, %step {lr = 0.1 : f64, momentum = 0.9 : f64} : tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{nesterov needs a momentum and zero dampening}}
  %0, %1 = pipe.sgd_update %p, %p, %step momentum_buffer %p {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_buffer_type(%p: tensor<4xf32>, %b: tensor<2xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{momentum buffer type 'tensor<2xf32>' differs from the parameter type 'tensor<4xf32>'}}
  %0, %1 = pipe.sgd_update %p, %p, %step momentum_buffer %b {lr = 0.1 : f64, momentum = 0.9 : f64} : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

func.func @adam_betas(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{betas must be in [0, 1)}}
  %0, %1, %2 = pipe.adam_update %p, %p, %p, %p, %step {lr = 0.1 : f64, beta2 = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @adam_negative_lr(%p: tensor<4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{lr, eps and weight_decay must not be negative}}
  %0, %1, %2 = pipe.adam_update %p, %p, %p, %p, %step {lr = -0.1 : f64} : tensor<4xf32>
  return
}

// -----

func.func @max_pool_grad_shape(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{gradient type 'tensor<1x3x3x3xf32>' is not the pooled shape of 'tensor<1x3x8x8xf32>'}}
  %0 = pipe.max_pool_grad %x, %dy kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>
  return
}

// -----

func.func @average_pool_grad_shape(%dy: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{gradient type 'tensor<1x3x4x4xf32>' is not the pooled shape of 'tensor<1x3x11x11xf32>'}}
  %0 = pipe.average_pool_grad %dy kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] : tensor<1x3x4x4xf32> -> tensor<1x3x11x11xf32>
  return
}

// -----

// expected-error @+1 {{a plan needs at least one microbatch, not 0}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 0, training = false, stages = [#pipe.stage_plan<index = 0, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{a plan needs at least one stage}}
module attributes {pipe.plan = #pipe.plan<schedule = "gpipe", microbatches = 1, training = true, stages = [], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 has index 1; stages come in order}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 1, device = "c0", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 names no device}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [#pipe.stage_plan<index = 0, device = "", kind = "cpu", arch = "cpu", host = "", cores = 1, recompute = none, report = {}>], report = {}>} {
}

// -----

// expected-error @+1 {{stage 0 is not a #pipe.stage_plan: 3 : i64}}
module attributes {pipe.plan = #pipe.plan<schedule = "1f1b", microbatches = 1, training = false, stages = [3], report = {}>} {
}

// -----

// expected-error @+2 {{unknown schedule 'zigzag'}}
// expected-error @+1 {{failed to parse Pipe_PlanAttr parameter 'schedule'}}
module attributes {pipe.plan = #pipe.plan<schedule = "zigzag", microbatches = 1, training = false, stages = [], report = {}>} {
}
