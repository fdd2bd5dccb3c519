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

#endif // PIPE_TRANSFORMS_PASSES_TD
