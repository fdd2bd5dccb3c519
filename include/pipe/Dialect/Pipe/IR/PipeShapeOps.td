//===- PipeShapeOps.td - data movement and constant ops ----*- tablegen -*-===//
//
// Ops that move, select or create data without arithmetic on it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPESHAPEOPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPESHAPEOPS_TD

def Pipe_ConstantOp : Pipe_Op<"constant", [
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "getBytesRead", "getBytesWritten"]>,
    Pure, ConstantLike,
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Small constants (shapes, scalars) are inline `dense` attributes. Large
    ones are `dense_resource` blobs, so IR stays readable at any model size.

    ```mlir
    %shape = pipe.constant dense<[2, 64]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Pipe_ReshapeOp : Pipe_Op<"reshape", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "getBytesRead", "getBytesWritten"]>,
    Pure]> {
  let summary = "reinterpret a tensor with a new static shape";
  let description = [{
    ONNX Reshape, Flatten, Squeeze and Unsqueeze all become this op. The
    element count is unchanged.

    ```mlir
    %y = pipe.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pipe_TransposeOp : Pipe_Op<"transpose", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "permute the axes (ONNX Transpose)";
  let description = [{
    Result axis `i` is input axis `perm[i]`.

    ```mlir
    %y = pipe.transpose %x perm [1, 0] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input `perm` $perm attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Pipe_ConcatOp : Pipe_Op<"concat", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "join tensors along an axis (ONNX Concat)";
  let description = [{
    ```mlir
    %y = pipe.concat %a, %b axis 0 : tensor<2x3xf32>, tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Pipe_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$inputs `axis` $axis attr-dict `:` type($inputs)";
  let hasFolder = 1;
}

def Pipe_SplitOp : Pipe_Op<"split", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure]> {
  let summary = "split a tensor along an axis (ONNX Split)";
  let description = [{
    The result types give the size of every piece; they add up to the
    input's extent along `axis`.

    ```mlir
    %a, %b = pipe.split %x axis 1 : tensor<2x8xf32> to tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Pipe_Tensor>:$outputs);
  let assemblyFormat = [{
    $input `axis` $axis attr-dict `:` type($input) `to` type($outputs)
  }];
  let hasVerifier = 1;
}

def Pipe_SliceOp : Pipe_Op<"slice", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "getBytesRead"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "strided window of a tensor (ONNX Slice)";
  let description = [{
    For every axis: start at `offsets[i]`, take `sizes[i]` elements, stepping
    by `strides[i]` (non-zero, may be negative). The importer resolves ONNX's
    clamped starts/ends into this exact form.

    ```mlir
    %y = pipe.slice %x offsets [0, 1] sizes [2, 2] strides [1, 1] : tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = [{
    $input `offsets` $offsets `sizes` $sizes `strides` $strides attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pipe_GatherOp : Pipe_Op<"gather", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "getBytesRead"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "gather slices along an axis by index (ONNX Gather)";
  let description = [{
    The result shape is `data[:axis] + indices + data[axis+1:]`. Negative
    indices count from the end.

    ```mlir
    %y = pipe.gather %table, %ids axis 0 : tensor<100x16xf32>, tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$data, Pipe_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `axis` $axis attr-dict `:` type($data) `,` type($indices)
  }];
  let hasFolder = 1;
}

def Pipe_ExpandOp : Pipe_Op<"expand", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure]> {
  let summary = "broadcast a tensor to a larger shape (ONNX Expand)";
  let description = [{
    ```mlir
    %y = pipe.expand %x : tensor<3x1xf32> to tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pipe_TileOp : Pipe_Op<"tile", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "repeat a tensor along every axis (ONNX Tile)";
  let description = [{
    ```mlir
    %y = pipe.tile %x repeats [2, 1] : tensor<3x4xf32>  // tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input `repeats` $repeats attr-dict `:` type($input)";
}

def Pipe_PadOp : Pipe_Op<"pad", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, InferTypeOpAdaptor]> {
  let summary = "pad a tensor (ONNX Pad)";
  let description = [{
    `pads` holds the begin pads of every axis, then the end pads; negative
    pads crop. `value` fills in `constant` mode.

    ```mlir
    %y = pipe.pad %x pads [0, 1, 0, 1] mode constant {value = 0.0 : f64} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DenseI64ArrayAttr:$pads,
                       Pipe_PadModeAttr:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input `pads` $pads `mode` `` $mode attr-dict `:` type($input)";
}

def Pipe_ShapeOp : Pipe_Op<"shape", [Pure, InferTypeOpAdaptor]> {
  let summary = "the shape of a tensor as an i64 tensor (ONNX Shape)";
  let description = [{
    Always folds to a constant, since shapes are static.

    ```mlir
    %s = pipe.shape %x : tensor<2x3xf32>  // tensor<2xi64>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input);
  let results = (outs StaticShapeTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Pipe_SizeOp : Pipe_Op<"size", [Pure, InferTypeOpAdaptor]> {
  let summary = "the element count of a tensor (ONNX Size)";
  let description = [{
    Always folds to a constant, since shapes are static.

    ```mlir
    %n = pipe.size %x : tensor<2x3xf32>  // tensor<i64>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input);
  let results = (outs StaticShapeTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Pipe_TriluOp : Pipe_Op<"trilu", [
    Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, SameOperandsAndResultType,
                                     InferTypeOpInterface]> {
  let summary = "keep the upper or lower triangle (ONNX Trilu)";
  let description = [{
    Keeps elements on and above (`upper`) or on and below the `k`-th diagonal
    of the last two axes and zeroes the rest.

    ```mlir
    %y = pipe.trilu %x upper {k = 1 : i64} : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$k,
                       UnitAttr:$upper);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input (`upper` $upper^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Pipe_DropoutOp : Pipe_Op<"dropout", [SameOperandsAndResultType,
                                         InferTypeOpInterface]> {
  let summary = "random dropout in training (ONNX Dropout)";
  let description = [{
    Zeroes each element with probability `ratio` and scales the rest by
    `1 / (1 - ratio)`. Dropout outside training is no op at all, so the
    importer only creates this op for training-mode dropout.

    ```mlir
    %y = pipe.dropout %x {ratio = 0.1 : f32} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // PIPE_DIALECT_PIPE_IR_PIPESHAPEOPS_TD
