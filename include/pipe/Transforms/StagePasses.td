//===- StagePasses.td - the passes that make a pipeline ----*- tablegen -*-===//
//
// The passes of lib/Transforms/Stages (PipeStageTransforms): plan,
// partition, send/recv, recompute, split into stages, schedule and verify.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TRANSFORMS_STAGEPASSES_TD
#define PIPE_TRANSFORMS_STAGEPASSES_TD

include "mlir/Pass/PassBase.td"

def PlanStages : Pass<"pipe-plan", "::mlir::ModuleOp"> {
  let summary = "Plan the pipeline and record the plan in the IR";
  let description = [{
    Runs the planner (`lib/Plan`) on @main for the devices of `cluster`
    (this host's CPU without one) and records its plan: the module gets
    `pipe.plan`, a `#pipe.plan` with the schedule, the microbatches and one
    `#pipe.stage_plan` per stage (device, kind, arch, recompute and the
    predicted costs), and every op of @main that does work gets its stage
    as `pipe.stage`. Constants and parameter reads get none: they belong to
    every stage that reads them. Plans given by hand (`stages`,
    `cut-after`, `device-order`) and the baseline partitions go through
    the same attribute. `plan.json` is printed from it.

    Before (an MLP of two nodes):
    ```mlir
    %h = pipe.gemm %x, %w1 ... loc("/fc1/Gemm")
    %y = pipe.gemm %h, %w2 ... loc("/fc2/Gemm")
    ```
    After, with `cut-after=/fc1/Gemm`:
    ```mlir
    module attributes {pipe.plan = #pipe.plan<schedule = 1f1b,
        microbatches = 1, training = false, stages = [...], report = {...}>}
    %h = pipe.gemm %x, %w1 {pipe.stage = 0 : i64} ...
    %y = pipe.gemm %h, %w2 {pipe.stage = 1 : i64} ...
    ```
    Errors name what is at fault: the cluster file, an unknown node or
    device, the device that lacks memory.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"",
           "The devices to plan for (cluster.json); empty: this host's CPU">,
    Option<"training", "training", "bool", /*default=*/"false",
           "Plan a training step (forward, backward and optimizer)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "Training schedule: gpipe or 1f1b">,
    Option<"microbatches", "microbatches", "unsigned", /*default=*/"1",
           "Microbatches per step">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"auto\"",
           "auto (the planner chooses per stage), none, selective or full">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"none\"",
           "The optimizer whose state counts in memory: none, sgd, "
           "sgd-momentum or adam">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Precision of contractions: fp32, tf32, bf16 or fp16">,
    Option<"stages", "stages", "unsigned", /*default=*/"0",
           "Number of stages; 0: the planner chooses">,
    ListOption<"cutAfter", "cut-after", "std::string",
               "Cut after these ONNX nodes">,
    ListOption<"deviceOrder", "device-order", "std::string",
               "The device of each stage, in order">,
    Option<"partition", "partition", "std::string", /*default=*/"\"auto\"",
           "auto, or a baseline: uniform, parameters or speed-blind">,
    Option<"exactLayers", "exact-layers", "unsigned", /*default=*/"0",
           "Plan models of up to this many layers exactly; 0: the default">,
    Option<"replaySteps", "replay-steps", "uint64_t",
           /*default=*/"160000000",
           "1F1B: the most pipeline steps the replay search simulates">,
    Option<"timeline", "timeline", "std::string", /*default=*/"",
           "Write the simulated iteration to this file as a Chrome trace">
  ];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def PartitionStages : Pass<"pipe-partition", "::mlir::ModuleOp"> {
  let summary = "Give every op of the training step its stage and phase";
  let description = [{
    Runs on a planned module (`--pipe-plan`), after `--pipe-autodiff` and
    `--pipe-optimizer`. Every op of @main that does work gets its stage
    (`pipe.stage`) and its phase (`pipe.phase`): forward for the ops the
    loss and the other non-gradient results depend on, backward for the
    rest. Constants and parameter reads stay unstaged: every stage that
    uses one gets its own copy.

    - A forward op keeps the stage the plan gave it; one the plan did not
      see (built by canonicalization) goes to the latest stage of its
      operands.
    - A gradient op goes to the stage of the forward op it differentiates
      (it carries that op's location), and never later than the gradients
      it reads: gradients flow from later stages to earlier ones.
    - Each result of @main gets the stage that computes it. The optimizer
      update of a parameter runs on the stage that computes its gradient,
      its owner; the ops of @update, the parameter and its optimizer state
      get the owner's stage.

    Before (two stages, `%h` on stage 0, the loss on stage 1):
    ```mlir
    %h = pipe.matmul %x, %w1 {pipe.stage = 0 : i64} ...
    %l = pipe.reduce_sum %y {pipe.stage = 1 : i64} ...
    %g = pipe.matmul %hT, %dy ...
    ```
    After:
    ```mlir
    %h = pipe.matmul %x, %w1 {pipe.phase = #pipe.phase<forward>,
                              pipe.stage = 0 : i64} ...
    %g = pipe.matmul %hT, %dy {pipe.phase = #pipe.phase<backward>,
                               pipe.stage = 1 : i64} ...
    ```
    Errors: a module without a plan; a forward op that reads a value of a
    later stage.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def InsertComm : Pass<"pipe-insert-comm", "::mlir::ModuleOp"> {
  let summary = "Add a send/recv pair for every tensor that crosses stages";
  let description = [{
    Runs after `--pipe-partition`. For every value of @main that an op of
    another stage reads, the producing stage sends it once to each stage
    that reads it (`pipe.send`) and that stage receives it (`pipe.recv`),
    on a channel of its own; the readers then read the received value.
    Skip connections go straight to the stage that reads them.

    - An activation travels forward: sent in the producer's forward pass,
      received in the reader's forward pass (and stashed there if its
      backward pass reads it).
    - A gradient, or an activation that an earlier stage's backward pass
      reads, travels backward, from a later stage to an earlier one.
    - A parameter that several stages read (tied embeddings) stays one
      parameter: its gradient contributions are summed on its owner, which
      updates it and sends the new value to every other stage that reads
      it (`update` transfers in @update, one more result of @update per
      copy, written over that stage's copy).

    Before:
    ```mlir
    %h = pipe.relu %x {pipe.phase = #pipe.phase<forward>, pipe.stage = 0 : i64}
    %y = pipe.tanh %h {pipe.phase = #pipe.phase<forward>, pipe.stage = 1 : i64}
    ```
    After:
    ```mlir
    %h = pipe.relu %x {..., pipe.stage = 0 : i64}
    pipe.send forward %h to 1 channel 0 {pipe.stage = 0 : i64}
    %r = pipe.recv forward from 0 channel 0 {pipe.stage = 1 : i64}
    %y = pipe.tanh %r {..., pipe.stage = 1 : i64}
    ```
    Errors: a gradient that would travel to a later stage, where no
    schedule could deliver it in time.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def InsertRecompute : Pass<"pipe-insert-recompute", "::mlir::ModuleOp"> {
  let summary = "Recompute forward activations in the backward pass";
  let description = [{
    Runs after `--pipe-insert-comm`, before `--pipe-split-stages`. For each
    stage whose plan says `full` or `selective` recomputation, the forward
    values its backward pass reads are no longer kept from the forward
    pass: one `pipe.recompute` region at the start of the stage's backward
    pass computes them again from what the stage keeps.

    - `full` keeps the stage's inputs: what it receives, and the graph
      inputs and parameters it reads.
    - `selective` also keeps the results of contractions (matmul, gemm,
      convolutions), whose recomputation costs the most, and recomputes
      the cheap ops around them.

    What the backward pass then reads of the forward pass is the stash
    (`--pipe-split-stages`), which is what the planner's memory model
    counts per microbatch in flight.

    Before (stage 0 with `full`):
    ```mlir
    %a = pipe.matmul %x, %w {pipe.phase = #pipe.phase<forward>, ...}
    %b = pipe.tanh %a {pipe.phase = #pipe.phase<forward>, ...}
    %g = pipe.mul %dy, %b {pipe.phase = #pipe.phase<backward>, ...}
    ```
    After:
    ```mlir
    %r = pipe.recompute (%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
    ^bb0(%x2: tensor<2x4xf32>):
      %w2 = pipe.param_ref @w : tensor<4x4xf32>
      %a2 = pipe.matmul %x2, %w2 : ...
      %b2 = pipe.tanh %a2 : ...
      pipe.yield %b2 : tensor<2x4xf32>
    } {pipe.phase = #pipe.phase<backward>, ...}
    %g = pipe.mul %dy, %r {...}
    ```
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect"];
}

def SplitStages : Pass<"pipe-split-stages", "::mlir::ModuleOp"> {
  let summary = "Make one pipe.stage per stage, with its own functions";
  let description = [{
    Runs after `--pipe-insert-comm` (and `--pipe-insert-recompute`). Moves
    the ops of each stage into a `pipe.stage` on the plan's device, with
    copies of the parameters it reads or writes, and these functions:

    - `@forward`: the forward pass of one microbatch. It takes the graph
      inputs the stage reads (`pipe.name`) and returns the graph outputs
      or the loss computed there, then its stash (`pipe.stash = i`: what
      its backward pass reads of the forward pass), then what it writes
      over parameters (`pipe.assign`).
    - `@backward` (training): the backward pass of one microbatch. It
      takes the graph inputs it reads and the stash, and returns the
      gradients of the parameters the stage owns (`pipe.grad_of`).
    - `@update` (training): the optimizer step of those parameters. It
      takes their gradients, averaged over the microbatches, and the step,
      and returns the new parameters and optimizer state, and the copies of
      parameters other stages own.

    Constants and parameter reads are copied into every function that
    uses them. @main, @update and the module's parameters are gone after.

    ```mlir
    pipe.stage @stage0 index 0 device "a0" {
      pipe.parameter @w : tensor<4x4xf32> trainable = ...
      func.func @forward(%x: tensor<2x4xf32> {pipe.name = "x"})
          -> (tensor<2x4xf32> {pipe.stash = 0 : i64}) {
        ...
        pipe.send forward %h to 1 channel 0 : tensor<2x4xf32>
        return %h : tensor<2x4xf32>
      }
      func.func @backward(%x: tensor<2x4xf32> {pipe.name = "x"},
                          %h: tensor<2x4xf32> {pipe.stash = 0 : i64})
          -> (tensor<4x4xf32> {pipe.grad_of = @w, pipe.name = "grad.w"}) {
        %g = pipe.recv backward from 1 channel 1 : tensor<2x4xf32>
        ...
      }
      func.func @update(...) -> (tensor<4x4xf32> {pipe.assign = @w}) { ... }
    }
    ```
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def ScheduleStages : Pass<"pipe-schedule", "::mlir::ModuleOp"> {
  let summary = "Give every stage its program of steps";
  let description = [{
    Runs after `--pipe-split-stages`. Each `pipe.stage` gets its program,
    `pipe.program`: the order of the forward and backward passes of the
    step's microbatches under the schedule, then (training) the optimizer
    update once every microbatch has gone through (the flush). The order
    is the one the planner's simulator replays (`stageProgram`):

    - inference: the forward passes of every microbatch;
    - `gpipe`: every forward pass, then every backward pass;
    - `1f1b`: min(S - 1 - s, M) forward passes on stage s of S, then one
      forward and one backward pass at a time, then the backward passes
      left.

    `schedule` overrides the plan's (and updates it).

    ```mlir
    pipe.stage @stage1 index 1 device "t0" attributes {pipe.program = [
        #pipe.step<forward, 0>, #pipe.step<backward, 0>,
        #pipe.step<forward, 1>, #pipe.step<backward, 1>,
        #pipe.step<update, 0>]} { ... }
    ```
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"",
           "gpipe or 1f1b; empty: the plan's">
  ];
  let dependentDialects = ["::mlir::pipe::PipeDialect"];
}

def VerifySchedule : Pass<"pipe-verify-schedule", "::mlir::ModuleOp"> {
  let summary = "Prove the stages' programs complete and deadlock-free";
  let description = [{
    Runs after `--pipe-schedule`. Reads each stage's program and the
    transfers of its functions, and proves, under the transport's contract
    (NCCL's: messages between two stages match in order per direction with
    no tags, a send may block until its receive is posted, and the
    transfers a stage posts together are waited on as one group), that:

    - every send is matched by exactly one receive of the same type,
      microbatch, phase and channel;
    - a symbolic run of all stages terminates, where before each step a
      stage posts the previous step's sends and this step's receives as one
      group and waits for all of it.

    A schedule that fails is a compile error on the transfer that cannot
    complete, naming its stage and step. Success sets
    `pipe.schedule_verified` on the module.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect"];
}

#endif // PIPE_TRANSFORMS_STAGEPASSES_TD
