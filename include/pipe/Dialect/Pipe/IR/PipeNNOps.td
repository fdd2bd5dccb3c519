//===- PipeNNOps.td - contraction, conv, pool, norm, loss ops *- tablegen -*-=//
//
// The compute-heavy ops of neural networks.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPENNOPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPENNOPS_TD

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Pipe_MatMulOp : Pipe_Op<"matmul", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "isContraction"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "numpy matrix product (ONNX MatMul)";
  let description = [{
    Batched matrix product with numpy semantics: 1-D operands are promoted to
    matrices and the promoted dimension is removed from the result; batch
    dimensions broadcast.

    ```mlir
    %c = pipe.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$lhs, Pipe_Tensor:$rhs);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Pipe_GemmOp : Pipe_Op<"gemm", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "isContraction"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "general matrix multiply (ONNX Gemm)";
  let description = [{
    `alpha * op(A) * op(B) + beta * C`, where `op` transposes when
    `trans_a` / `trans_b` is set and `C` broadcasts to the result.

    ```mlir
    %y = pipe.gemm %a, %b, %c trans_b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$a, Pipe_FloatTensor:$b,
                       Optional<Pipe_FloatTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       UnitAttr:$trans_a, UnitAttr:$trans_b);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? (`trans_a` $trans_a^)? (`trans_b` $trans_b^)?
    attr-dict `:` type($a) `,` type($b) (`,` type($c)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Pipe_ConvOp : Pipe_Op<"conv", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "isContraction"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "N-D grouped convolution (ONNX Conv)";
  let description = [{
    Input `[N, C, D1..Dn]`, weight `[M, C/group, k1..kn]`, optional bias `[M]`.
    `pads` holds the begin pads of every spatial axis, then the end pads. The
    importer resolves ONNX `auto_pad` into explicit pads.

    With `channels_last`, the input is `[N, D1..Dn, C]` and the result
    `[N, O1..On, M]`; the weight keeps its layout. The CPU target's
    `pipe-channels-last` creates these, so that convolutions and the ops
    between them keep one layout, and fuses into them the activation that
    follows (`activation`: relu; clip to [`activation_min`,
    `activation_max`]; silu, y * sigmoid(y)).

    ```mlir
    %y = pipe.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
           group 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$weight,
                       Optional<Pipe_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       UnitAttr:$channels_last,
                       OptionalAttr<Pipe_ConvActivationAttr>:$activation,
                       OptionalAttr<F32Attr>:$activation_min,
                       OptionalAttr<F32Attr>:$activation_max);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads
    `dilations` $dilations `group` $group
    (`channels_last` $channels_last^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)?
  }];
  let builders = [
    // A plain convolution: channels first, no fused activation.
    OpBuilder<(ins "Value":$input, "Value":$weight, "Value":$bias,
                   "DenseI64ArrayAttr":$strides, "DenseI64ArrayAttr":$pads,
                   "DenseI64ArrayAttr":$dilations, "IntegerAttr":$group), [{
      build($_builder, $_state, input, weight, bias, strides, pads, dilations,
            group, UnitAttr(), ConvActivationAttr(), FloatAttr(), FloatAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Pipe_ConvTransposeOp : Pipe_Op<"conv_transpose", [
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "isContraction"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "N-D grouped transposed convolution (ONNX ConvTranspose)";
  let description = [{
    Input `[N, C, D1..Dn]`, weight `[C, M/group, k1..kn]`, optional bias
    `[M]`. Each output extent is
    `stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pad_begin - pad_end`.

    ```mlir
    %y = pipe.conv_transpose %x, %w strides [2, 2] pads [0, 0, 0, 0]
           dilations [1, 1] output_padding [0, 0] group 1
           : tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$weight,
                       Optional<Pipe_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads
    `dilations` $dilations `output_padding` $output_padding `group` $group
    attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)?
  }];
}

def Pipe_ConvWeightGradOp : Pipe_Op<"conv_weight_grad", [
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "isContraction"]>,
    Pure]> {
  let summary = "gradient of pipe.conv with respect to its weight";
  let description = [{
    Given the convolution's input `[N, C, D1..Dn]` and the gradient of its
    output `[N, M, O1..On]`, the gradient of its weight
    `[M, C/group, k1..kn]`: for each filter m of group g and each weight
    position, the sum over samples and output positions of `grad` times
    the input element that position read. One op for every group, so that
    a depthwise convolution's weight gradient is one kernel call.

    ```mlir
    %dw = pipe.conv_weight_grad %x, %dy strides [1, 1] pads [1, 1, 1, 1]
            dilations [1, 1] group 1
            : tensor<2x3x8x8xf32>, tensor<2x16x8x8xf32> -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $grad `strides` $strides `pads` $pads `dilations` $dilations
    `group` $group attr-dict `:` type($input) `,` type($grad) `->`
    type($output)
  }];
  let hasVerifier = 1;
}

def Pipe_MaxPoolOp : Pipe_Op<"max_pool", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "N-D max pooling (ONNX MaxPool)";
  let description = [{
    Padded positions never win. With `ceil_mode`, output extents round up.

    ```mlir
    %y = pipe.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
           dilations [1, 1] : tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `kernel` $kernel_shape `strides` $strides `pads` $pads `dilations`
    $dilations (`ceil_mode` $ceil_mode^)? attr-dict `:` type($input)
  }];
}

def Pipe_AveragePoolOp : Pipe_Op<"average_pool", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "N-D average pooling (ONNX AveragePool)";
  let description = [{
    With `count_include_pad`, padded positions count in the divisor.

    ```mlir
    %y = pipe.average_pool %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1]
           count_include_pad : tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `kernel` $kernel_shape `strides` $strides `pads` $pads
    (`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)?
    attr-dict `:` type($input)
  }];
}

def Pipe_MaxPoolGradOp : Pipe_Op<"max_pool_grad", [Pure,
    AllTypesMatch<["input", "output"]>]> {
  let summary = "gradient of pipe.max_pool with respect to its input";
  let description = [{
    Routes each element of `grad` (the gradient of the pooled output) to the
    position of its window's maximum in `input`: the first one in row-major
    order on ties, as PyTorch does. Overlapping windows add up.

    ```mlir
    %dx = pipe.max_pool_grad %x, %dy kernel [3, 3] strides [2, 2]
            pads [1, 1, 1, 1] dilations [1, 1]
            : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $grad `kernel` $kernel_shape `strides` $strides `pads` $pads
    `dilations` $dilations attr-dict `:` type($input) `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Pipe_AveragePoolGradOp : Pipe_Op<"average_pool_grad", [Pure]> {
  let summary = "gradient of pipe.average_pool with respect to its input";
  let description = [{
    Spreads each element of `grad` evenly over its window's input
    positions, divided by the same count the forward pass divides by.

    ```mlir
    %dx = pipe.average_pool_grad %dy kernel [2, 2] strides [2, 2]
            pads [0, 0, 0, 0] : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       UnitAttr:$count_include_pad);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `kernel` $kernel_shape `strides` $strides `pads` $pads
    (`count_include_pad` $count_include_pad^)? attr-dict `:` type($grad)
    `->` type($output)
  }];
  let hasVerifier = 1;
}

def Pipe_GlobalAveragePoolOp : Pipe_Op<"global_average_pool",
                                       [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "average over all spatial axes (ONNX GlobalAveragePool)";
  let description = [{
    ```mlir
    %y = pipe.global_average_pool %x : tensor<1x512x7x7xf32>  // tensor<1x512x1x1xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

def Pipe_BatchNormOp : Pipe_Op<"batch_norm", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor,
    AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    ONNX BatchNormalization with `training_mode = 0`: normalizes channel 1 of
    the input with the given mean and variance.

    ```mlir
    %y = pipe.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32}
           : tensor<2x16x8x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$scale,
                       Pipe_FloatTensor:$bias, Pipe_FloatTensor:$mean,
                       Pipe_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Pipe_BatchNormTrainOp : Pipe_Op<"batch_norm_train", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure,
    InferTypeOpAdaptor, AllTypesMatch<["scale", "bias", "mean", "variance",
                                       "running_mean", "running_variance"]>]> {
  let summary = "batch normalization with batch statistics (training)";
  let description = [{
    ONNX BatchNormalization with `training_mode = 1`: normalizes with the
    statistics of the batch and returns the updated running mean and variance,
    `running * momentum + batch * (1 - momentum)`.

    ```mlir
    %y, %rm, %rv = pipe.batch_norm_train %x, %scale, %bias, %mean, %var
           {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32}
           : tensor<2x16x8x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$scale,
                       Pipe_FloatTensor:$bias, Pipe_FloatTensor:$mean,
                       Pipe_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum);
  let results = (outs Pipe_FloatTensor:$output, Pipe_FloatTensor:$running_mean,
                      Pipe_FloatTensor:$running_variance);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Pipe_LayerNormOp : Pipe_Op<"layer_norm", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "layer normalization (ONNX LayerNormalization)";
  let description = [{
    Normalizes over the axes from `axis` to the last. `scale` and the
    optional `bias` broadcast to those trailing axes.

    ```mlir
    %y = pipe.layer_norm %x, %g, %b axis 2 {epsilon = 1.0e-05 : f32}
           : tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$scale,
                       Optional<Pipe_FloatTensor>:$bias, I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? `axis` $axis attr-dict `:` type($input) `,`
    type($scale) (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Pipe_BatchNormTrainGradOp : Pipe_Op<"batch_norm_train_grad", [
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor, AllTypesMatch<["input", "output_grad"]>]> {
  let summary = "gradients of batch normalization with batch statistics";
  let description = [{
    The reverse of `pipe.batch_norm_train` with respect to its input, scale
    and bias, given the gradient of its output: with the batch mean `m` and
    variance `v` of channel 1 over every other axis (`n` elements), `σ =
    sqrt(v + epsilon)` and `x̂ = (x - m) / σ`,

    ```
    bias_grad  = Σ dy
    scale_grad = Σ dy x̂
    input_grad = scale / σ * (dy - bias_grad / n - x̂ scale_grad / n)
    ```

    One op, so that a target computes the statistics and sums once, in a
    wider type, rather than as a chain of elementwise ops and reductions.

    ```mlir
    %dx, %dscale, %dbias = pipe.batch_norm_train_grad %x, %scale, %dy
           {epsilon = 1.0e-05 : f32} : tensor<2x16x8x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$scale,
                       Pipe_FloatTensor:$output_grad,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Pipe_FloatTensor:$input_grad,
                      Pipe_FloatTensor:$scale_grad,
                      Pipe_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $scale `,` $output_grad attr-dict `:` type($input) `,`
    type($scale)
  }];
  let hasVerifier = 1;
}

def Pipe_InstanceNormOp : Pipe_Op<"instance_norm", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor,
    AllTypesMatch<["scale", "bias"]>]> {
  let summary = "instance normalization (ONNX InstanceNormalization)";
  let description = [{
    Normalizes every (sample, channel) over its spatial axes.

    ```mlir
    %y = pipe.instance_norm %x, %scale, %bias : tensor<2x3x8x8xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$scale,
                       Pipe_FloatTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

class Pipe_SoftmaxLikeOp<string mnemonic, string onnxName>
    : Pipe_Op<mnemonic, [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, SameOperandsAndResultType,
                         InferTypeOpInterface]> {
  let summary = onnxName # " along one axis";
  let description = [{
    ONNX `}] # onnxName # [{` with opset-13 semantics: along the single axis
    `axis` (non-negative). The importer rewrites the older flattening form.

    ```mlir
    %y = pipe.}] # mnemonic # [{ %x axis 1 : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::pipe::verifyAxis(*this, getAxis(),
                                      getInput().getType().getRank());
    }
  }];
}

def Pipe_SoftmaxOp : Pipe_SoftmaxLikeOp<"softmax", "Softmax">;
def Pipe_LogSoftmaxOp : Pipe_SoftmaxLikeOp<"log_softmax", "LogSoftmax">;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Pipe_ReduceOp<string mnemonic, string onnxName>
    : Pipe_Op<mnemonic, [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "reduce over axes (ONNX " # onnxName # ")";
  let description = [{
    Reduces over `axes` (non-negative, strictly increasing). The importer
    expands ONNX's "no axes means all" into an explicit list. With `keepdims`
    the reduced axes stay with extent 1.

    ```mlir
    %y = pipe.}] # mnemonic # [{ %x axes [1] keepdims : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = [{
    $input `axes` $axes (`keepdims` $keepdims^)? attr-dict `:` type($input)
  }];
}

def Pipe_ReduceMeanOp : Pipe_ReduceOp<"reduce_mean", "ReduceMean">;
def Pipe_ReduceSumOp : Pipe_ReduceOp<"reduce_sum", "ReduceSum">;
def Pipe_ReduceMaxOp : Pipe_ReduceOp<"reduce_max", "ReduceMax">;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

class Pipe_LossOp<string mnemonic, string onnxName, string what>
    : Pipe_Op<mnemonic, [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = what # " (ONNX " # onnxName # ")";
  let description = [{
    Scores `[N, C, d1..dk]`, integer labels `[N, d1..dk]` and optional class
    weights `[C]`. Labels equal to `ignore_index` contribute nothing. With
    reduction `none` the result is `[N, d1..dk]`; otherwise a scalar.

    ```mlir
    %l = pipe.}] # mnemonic # [{ %scores, %labels reduction mean
           : tensor<4x10xf32>, tensor<4xi64>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_IndexTensor:$labels,
                       Optional<Pipe_FloatTensor>:$weight,
                       Pipe_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $labels (`,` $weight^)? `reduction` `` $reduction attr-dict `:`
    type($input) `,` type($labels) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(::mlir::pipe::requireStaticShapes(loc, adaptor.getOperands())))
        return ::mlir::failure();
      return ::mlir::pipe::inferLossResult(
          loc, ::llvm::cast<::mlir::RankedTensorType>(adaptor.getInput().getType()),
          adaptor.getReduction(), types);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::pipe::verifyLoss(*this, getInput().getType(),
                                      getLabels().getType(),
                                      getWeight() ? getWeight().getType()
                                                  : ::mlir::RankedTensorType());
    }
  }];
}

def Pipe_SoftmaxCrossEntropyLossOp
    : Pipe_LossOp<"softmax_cross_entropy", "SoftmaxCrossEntropyLoss",
                  "cross entropy of softmax(scores) and labels">;
def Pipe_NegativeLogLikelihoodLossOp
    : Pipe_LossOp<"nll_loss", "NegativeLogLikelihoodLoss",
                  "negative log likelihood of log-probabilities">;

#endif // PIPE_DIALECT_PIPE_IR_PIPENNOPS_TD
