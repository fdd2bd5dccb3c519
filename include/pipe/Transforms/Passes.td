//===- Passes.td - pipe transformation passes --------------*- tablegen -*-===//

#ifndef PIPE_TRANSFORMS_PASSES_TD
#define PIPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def InferenceMode : Pass<"pipe-inference-mode"> {
  let summary = "Rewrite training-mode ops into their inference form";
  let description = [{
    An exported training graph carries ops whose behaviour differs between
    training and inference. For an inference pipeline this pass:

    - replaces `pipe.dropout` by its input;
    - replaces `pipe.batch_norm_train` whose updated running statistics are
      unused by `pipe.batch_norm`, which normalizes with the running
      statistics.

    Before:
    ```mlir
    %d = pipe.dropout %x {ratio = 0.1 : f32} : tensor<4x8xf32>
    %y, %m, %v = pipe.batch_norm_train %a, %s, %b, %mean, %var
        : tensor<2x3x4x4xf32>, tensor<3xf32>
    ```
    After:
    ```mlir
    %y = pipe.batch_norm %a, %s, %b, %mean, %var
        : tensor<2x3x4x4xf32>, tensor<3xf32>
    ```
    (`%x` replaces `%d`.) With `strict`, a `pipe.batch_norm_train` whose
    running statistics are used is an error rather than left alone.
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Fail on training-mode ops that cannot be rewritten">
  ];
  let dependentDialects = ["::mlir::pipe::PipeDialect"];
}

def PrepareTraining : Pass<"pipe-prepare-training", "::mlir::ModuleOp"> {
  let summary = "Pick the loss and the trainable parameters of @main";
  let description = [{
    Readies an exported model for training (`pipe-opt --train`):

    - The loss is @main's result named `loss` by the option (its
      `pipe.name`), or else its only scalar floating-point result. @main is
      rewritten to return just the loss, and what no longer feeds it is
      erased.
    - Trainable parameters are the floating-point `pipe.parameter`s marked
      `trainable`, minus those whose names match a `freeze` glob pattern
      (`*`, `?`, `[...]`), and minus the running statistics of batch
      normalization (parameters only read as its mean or variance); those
      lose the mark.

    Errors: no scalar output, or several without `loss`; a `loss` that names
    no output or a non-scalar one; a `freeze` pattern that matches no
    trainable parameter; no trainable parameter left.

    ```mlir
    pipe.parameter @w : tensor<4x4xf32> trainable
    pipe.parameter @emb : tensor<10x4xf32> trainable
    func.func @main(%x: tensor<2x4xf32>) -> (tensor<f32> {pipe.name = "loss"},
                                            tensor<2x4xf32> {pipe.name = "h"})
    ```
    With `freeze=emb`, @main returns only `loss`, and `@emb` is no longer
    `trainable`.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"",
           "The result of @main to train on, by name">,
    ListOption<"freeze", "freeze", "std::string",
               "Glob patterns of parameters to keep fixed">
  ];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def Autodiff : Pass<"pipe-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode gradients of @main's loss";
  let description = [{
    Rewrites @main, whose single result is a scalar loss (see
    `--pipe-prepare-training`), to return the loss followed by the gradient
    of the loss with respect to every trainable parameter, in declaration
    order. Gradient results are named `grad.<parameter>` and carry
    `pipe.grad_of = @<parameter>`.

    Adjoints are accumulated walking @main backwards. Each op's adjoints
    come from its gradient rule, `GradientOpInterface`: the op reference
    lists the interface on every op that has one, and docs/training.md
    says where the rules follow PyTorch's choices. An op without a rule on
    a path from a trainable parameter to the loss is an error that names
    its ONNX node.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def UpdateStatistics : Pass<"pipe-update-statistics", "::mlir::ModuleOp"> {
  let summary = "Write batch normalization's running statistics back";
  let description = [{
    In training, `pipe.batch_norm_train` returns the updated running mean
    and variance. For each one whose mean and variance operands read
    parameters, this pass appends them to @main's results, marked
    `pipe.assign = @<parameter>`, so that every microbatch writes them back
    (as PyTorch updates its buffers on every forward pass). Results already
    returned are left alone. A statistic that is also trained, or that
    another batch normalization (or result) updates too, is an error.

    ```mlir
    %y, %m, %v = pipe.batch_norm_train %x, %s, %b, %mean, %var
        : tensor<2x3x4x4xf32>, tensor<3xf32>
    ```
    makes @main also return `%m {pipe.assign = @bn.running_mean}` and
    `%v {pipe.assign = @bn.running_var}` after its other results.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

def Optimizer : Pass<"pipe-optimizer", "::mlir::ModuleOp"> {
  let summary = "Add @update: one optimizer step for every trainable parameter";
  let description = [{
    Runs after `--pipe-autodiff`. For every gradient result of @main (a
    result with `pipe.grad_of`), @update takes the gradient, averaged over
    the step's microbatches by the caller, and a final `step` argument
    (`tensor<i64>`, counting from 1). It applies `pipe.sgd_update` or
    `pipe.adam_update` and returns the new parameter and optimizer state,
    each result marked `pipe.assign = @<parameter>`: the caller writes it
    over that parameter. The state lives in new zero-initialized
    parameters `@"opt.<parameter>.momentum_buffer"`, `.exp_avg` and
    `.exp_avg_sq`.

    The formulas are those of `torch.optim.SGD`, `Adam` and `AdamW`; an
    option left at -1 takes PyTorch's default (lr: 0.01 for SGD, 0.001
    for Adam and AdamW; weight_decay: 0, or 0.01 for AdamW).

    ```mlir
    func.func @update(%g: tensor<4x4xf32> {pipe.name = "grad.w"},
                      %step: tensor<i64> {pipe.name = "step"})
        -> (tensor<4x4xf32> {pipe.assign = @w}) {
      %w = pipe.param_ref @w : tensor<4x4xf32>
      %new = pipe.sgd_update %w, %g, %step {lr = 1.0e-02 : f64}
          : tensor<4x4xf32>
      return %new : tensor<4x4xf32>
    }
    ```
    Errors: @main without gradient results, an @update already there, a
    state parameter name already taken, and hyperparameters torch.optim
    rejects (negative lr, betas outside [0, 1), Nesterov without momentum
    or with dampening).
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, adam or adamw">,
    Option<"lr", "lr", "double", /*default=*/"-1.0", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD with Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (decoupled for AdamW)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">
  ];
  let dependentDialects = ["::mlir::pipe::PipeDialect",
                           "::mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// Pipelining (lib/Transforms/Stages)
//===----------------------------------------------------------------------===//

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

#endif // PIPE_TRANSFORMS_PASSES_TD
