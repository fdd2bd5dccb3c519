//===- PipeOptimizerOps.td - optimizer update ops ----------*- tablegen -*-===//
//
// One optimizer step for one parameter, exactly as `torch.optim` computes
// it. `--pipe-optimizer` emits them into @update; their state (momentum
// buffers, moments) lives in non-trainable `pipe.parameter`s.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEOPTIMIZEROPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPEOPTIMIZEROPS_TD

/// The step number, counting from 1.
def Pipe_StepTensor : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

def Pipe_SGDUpdateOp : Pipe_Op<"sgd_update", [Pure, InferTypeOpAdaptor,
    AllTypesMatch<["param", "grad", "new_param"]>]> {
  let summary = "one step of torch.optim.SGD";
  let description = [{
    With `g = grad + weight_decay * param`:

    - without momentum, `param' = param - lr * g`;
    - with momentum, `buf' = g` at step 1 and
      `buf' = momentum * buf + (1 - dampening) * g` after, and
      `param' = param - lr * (nesterov ? g + momentum * buf' : buf')`.

    `step` counts from 1. The momentum buffer is an operand and a result
    exactly when `momentum` is not zero.

    ```mlir
    %p2, %b2 = pipe.sgd_update %p, %g, %step momentum_buffer %b
        {lr = 5.0e-02 : f64, momentum = 9.0e-01 : f64, nesterov}
        : tensor<8x4xf32>, tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$param, Pipe_FloatTensor:$grad,
                       Pipe_StepTensor:$step,
                       Optional<Pipe_FloatTensor>:$momentum_buffer,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$nesterov);
  let results = (outs Pipe_FloatTensor:$new_param,
                      Optional<Pipe_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $step (`momentum_buffer` $momentum_buffer^)?
    attr-dict `:` type($param) (`,` type($momentum_buffer)^)?
  }];
  let hasVerifier = 1;
}

def Pipe_AdamUpdateOp : Pipe_Op<"adam_update", [Pure,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "one step of torch.optim.Adam or AdamW";
  let description = [{
    At step t (from 1), Adam first adds `weight_decay * param` to the
    gradient; AdamW (`decoupled`) instead scales the parameter by
    `1 - lr * weight_decay`. Then

    ```
    m' = beta1 * m + (1 - beta1) * g
    v' = beta2 * v + (1 - beta2) * g * g
    param' = param - lr / (1 - beta1^t) * m' / (sqrt(v') / sqrt(1 - beta2^t) + eps)
    ```

    ```mlir
    %p2, %m2, %v2 = pipe.adam_update %p, %g, %m, %v, %step
        {lr = 1.0e-03 : f64, weight_decay = 1.0e-02 : f64, decoupled}
        : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$param, Pipe_FloatTensor:$grad,
                       Pipe_FloatTensor:$exp_avg, Pipe_FloatTensor:$exp_avg_sq,
                       Pipe_StepTensor:$step,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$decoupled);
  let results = (outs Pipe_FloatTensor:$new_param,
                      Pipe_FloatTensor:$new_exp_avg,
                      Pipe_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step attr-dict `:`
    type($param)
  }];
  let hasVerifier = 1;
}

#endif // PIPE_DIALECT_PIPE_IR_PIPEOPTIMIZEROPS_TD
