//===- Passes.td - pipe transformation passes --------------*- tablegen -*-===//
//
// The passes of lib/Transforms (PipeTransforms): training-mode rewrites,
// the loss and its gradients, and the optimizer step. The passes that make
// a pipeline are in StagePasses.td.
//
//===----------------------------------------------------------------------===//

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

def ChannelsLast : Pass<"pipe-channels-last"> {
  let summary = "Keep 2-D convolutions and the ops between them channels-last";
  let description = [{
    The CPU target's layout for inference: every 2-D float32 `pipe.conv`
    becomes a `channels_last` one between transposes (NCHW to NHWC and
    back), and the transposes back to NCHW sink through the ops for which
    the layout does not matter:

    - elementwise ops, whose per-channel or scalar operands move to
      channels last with them (a reshape, for `[N, C, 1, 1]`);
    - `pipe.batch_norm`, as a scale and a shift along the last axis;
    - `pipe.global_average_pool`, as a mean over axes 1 and 2;
    - `pipe.concat` along the channels, as one along the last axis.

    Consecutive transposes then cancel, so that chains of convolutions
    keep their activations in one layout, which oneDNN's kernels read and
    write as they are. A ReLU, a clip between two finite bounds or a SiLU
    (`x * sigmoid(x)`) that alone reads a channels-last convolution's
    result becomes the convolution's `activation`. Transposes remain where an op needs NCHW (pooling
    windows, reshapes, the graph's inputs and outputs).

    Before:
    ```mlir
    %y = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
           group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
    %r = pipe.relu %y : tensor<1x8x4x4xf32>
    %z = pipe.conv %r, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
           group 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>
    ```
    After:
    ```mlir
    %t = pipe.transpose %x perm [0, 2, 3, 1] : tensor<1x8x4x4xf32>
    %y = pipe.conv %t, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
           group 1 channels_last {activation = #pipe<conv_activation relu>}
           : tensor<1x4x4x8xf32>, tensor<8x8x3x3xf32>
    %z = pipe.conv %y, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
           group 1 channels_last : tensor<1x4x4x8xf32>, tensor<8x8x3x3xf32>
    %b = pipe.transpose %z perm [0, 3, 1, 2] : tensor<1x4x4x8xf32>
    ```
    Training programs keep NCHW: the gradient ops have no channels-last
    form.
  }];
  let dependentDialects = ["::mlir::pipe::PipeDialect"];
}

def FoldBatchNorm : Pass<"pipe-fold-batch-norm", "::mlir::ModuleOp"> {
  let summary = "Fold inference batch normalization into the convolution "
                "before it";
  let description = [{
    For an inference program: a `pipe.batch_norm` whose input is a
    `pipe.conv` used by nothing else becomes that convolution with new
    weights and bias,

    ```
    s  = scale / sqrt(variance + epsilon)          (per output channel)
    w' = w * s                                     (along w's dimension 0)
    b' = (b - mean) * s + bias                     (b = 0 without a bias)
    ```

    computed here, in double, from the parameters' and constants' values
    (external parameters are read from their ONNX files), into new
    `pipe.constant`s of the element type. Pairs whose operands are not all
    known values are left alone. The pass must not run where training
    updates the parameters: the pipelines add it only when compiling for
    inference.

    Before:
    ```mlir
    %y = pipe.conv %x, %w, %b strides [1, 1] pads [0, 0, 0, 0]
           dilations [1, 1] group 1 : tensor<2x3x8x8xf32>,
           tensor<4x3x1x1xf32>, tensor<4xf32>
    %z = pipe.batch_norm %y, %scale, %bias, %mean, %var
           : tensor<2x4x8x8xf32>, tensor<4xf32>
    ```
    After:
    ```mlir
    %w2 = pipe.constant dense<...> : tensor<4x3x1x1xf32>
    %b2 = pipe.constant dense<...> : tensor<4xf32>
    %z = pipe.conv %x, %w2, %b2 strides [1, 1] pads [0, 0, 0, 0]
           dilations [1, 1] group 1 : tensor<2x3x8x8xf32>,
           tensor<4x3x1x1xf32>, tensor<4xf32>
    ```
  }];
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
    says what they cover. An op on a path from a trainable parameter to
    the loss that has no rule, or whose rule declines this use of it, is an
    error that names its ONNX node.
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

#endif // PIPE_TRANSFORMS_PASSES_TD
