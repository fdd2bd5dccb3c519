//===- PipeElementwiseOps.td - elementwise ops -------------*- tablegen -*-===//
//
// Unary, binary (numpy broadcasting) and ternary elementwise ops.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEELEMENTWISEOPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPEELEMENTWISEOPS_TD

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

/// Differentiable unless `traits` says otherwise.
class Pipe_UnaryOp<string mnemonic, string onnxName, Type operandType,
                   list<Trait> traits = [Pipe_Differentiable]>
    : Pipe_Op<mnemonic, traits # [Pure, Elementwise, Pipe_Pointwise,
                                  SameOperandsAndResultType,
                                  InferTypeOpInterface]> {
  let summary = "elementwise " # onnxName;
  let description = [{
    Applies ONNX `}] # onnxName # [{` to every element. The result has the
    operand's type.

    ```mlir
    %y = pipe.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Pipe_NegOp : Pipe_UnaryOp<"neg", "Neg", Pipe_Tensor>;
def Pipe_AbsOp : Pipe_UnaryOp<"abs", "Abs", Pipe_Tensor>;
def Pipe_ExpOp : Pipe_UnaryOp<"exp", "Exp", Pipe_FloatTensor>;
def Pipe_LogOp : Pipe_UnaryOp<"log", "Log", Pipe_FloatTensor>;
def Pipe_SqrtOp : Pipe_UnaryOp<"sqrt", "Sqrt", Pipe_FloatTensor>;
def Pipe_ReciprocalOp
    : Pipe_UnaryOp<"reciprocal", "Reciprocal", Pipe_FloatTensor>;
def Pipe_ReluOp : Pipe_UnaryOp<"relu", "Relu", Pipe_Tensor>;
def Pipe_SigmoidOp : Pipe_UnaryOp<"sigmoid", "Sigmoid", Pipe_FloatTensor>;
def Pipe_SoftplusOp : Pipe_UnaryOp<"softplus", "Softplus", Pipe_FloatTensor>;
def Pipe_TanhOp : Pipe_UnaryOp<"tanh", "Tanh", Pipe_FloatTensor>;
def Pipe_ErfOp : Pipe_UnaryOp<"erf", "Erf", Pipe_FloatTensor>;
def Pipe_NotOp : Pipe_UnaryOp<"not", "Not", Pipe_BoolTensor, []>;

class Pipe_UnaryAlphaOp<string mnemonic, string onnxName, string alphaDefault>
    : Pipe_Op<mnemonic, [Pipe_Differentiable, Pure, Elementwise,
                         Pipe_Pointwise, SameOperandsAndResultType,
                         InferTypeOpInterface]> {
  let summary = "elementwise " # onnxName # " with a slope `alpha`";
  let description = [{
    Applies ONNX `}] # onnxName # [{` to every element.

    ```mlir
    %y = pipe.}] # mnemonic # [{ %x {alpha = 0.1 : f32} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, alphaDefault>:$alpha);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Pipe_LeakyReluOp : Pipe_UnaryAlphaOp<"leaky_relu", "LeakyRelu", "0.01">;
def Pipe_EluOp : Pipe_UnaryAlphaOp<"elu", "Elu", "1.0">;

def Pipe_SeluOp : Pipe_Op<"selu", [Pipe_Differentiable, Pure, Elementwise,
    Pipe_Pointwise, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "elementwise scaled exponential linear unit (ONNX Selu)";
  let description = [{
    `gamma * (x > 0 ? x : alpha * (exp(x) - 1))`.

    ```mlir
    %y = pipe.selu %x : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Pipe_ClipOp : Pipe_Op<"clip", [Pipe_Differentiable, Pure, Elementwise,
    Pipe_Pointwise, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "clamp every element to [min, max] (ONNX Clip)";
  let description = [{
    Either bound may be absent. The importer turns ONNX's bound inputs, which
    must be constants, into these attributes.

    ```mlir
    %y = pipe.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pipe_CastOp : Pipe_Op<"cast", [Pipe_Differentiable,
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops"]>,
    Pure, Elementwise, Pipe_Pointwise, SameOperandsAndResultShape]> {
  let summary = "convert the element type (ONNX Cast)";
  let description = [{
    ```mlir
    %y = pipe.cast %x : tensor<4xi64> to tensor<4xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$input);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

class Pipe_BroadcastOp<string mnemonic, string onnxName, Type operandType,
                       Type resultType, string resultElement,
                       list<Trait> traits = []>
    : Pipe_Op<mnemonic, traits # [Pure, Pipe_Pointwise, InferTypeOpAdaptor]> {
  let summary = "elementwise " # onnxName # " with numpy broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{`. The operands broadcast to a common shape by
    numpy rules; the result has that shape.

    ```mlir
    %z = pipe.}] # mnemonic # [{ %x, %y : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(::mlir::pipe::requireStaticShapes(loc, adaptor.getOperands())))
        return ::mlir::failure();
      return ::mlir::pipe::inferBroadcastResult(
          loc, {adaptor.getLhs().getType(), adaptor.getRhs().getType()},
          }] # resultElement # [{, types);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::pipe::verifySameElementType(*this, {getLhs(), getRhs()});
    }
  }];
}

class Pipe_ArithOp<string mnemonic, string onnxName>
    : Pipe_BroadcastOp<mnemonic, onnxName, Pipe_Tensor, Pipe_Tensor,
                       "::mlir::Type()", [Pipe_Differentiable]> {
  let hasFolder = 1;
}

def Pipe_AddOp : Pipe_ArithOp<"add", "Add">;
def Pipe_SubOp : Pipe_ArithOp<"sub", "Sub">;
def Pipe_MulOp : Pipe_ArithOp<"mul", "Mul">;
def Pipe_DivOp : Pipe_ArithOp<"div", "Div">;
def Pipe_MaxOp : Pipe_ArithOp<"max", "Max">;
def Pipe_MinOp : Pipe_ArithOp<"min", "Min">;
def Pipe_PowOp : Pipe_BroadcastOp<"pow", "Pow", Pipe_Tensor, Pipe_Tensor,
                                  "::mlir::Type()", [Pipe_Differentiable]> {
  let hasFolder = 1;
}

class Pipe_CompareOp<string mnemonic, string onnxName>
    : Pipe_BroadcastOp<mnemonic, onnxName, Pipe_Tensor, Pipe_BoolTensor,
                       "::mlir::IntegerType::get(context, 1)"> {
  let hasFolder = 1;
}

def Pipe_EqualOp : Pipe_CompareOp<"equal", "Equal">;
def Pipe_LessOp : Pipe_CompareOp<"less", "Less">;
def Pipe_GreaterOp : Pipe_CompareOp<"greater", "Greater">;

def Pipe_PReluOp : Pipe_Op<"prelu", [Pipe_Differentiable, Pure,
    Pipe_Pointwise, InferTypeOpAdaptor]> {
  let summary = "parametric ReLU (ONNX PRelu)";
  let description = [{
    `x < 0 ? slope * x : x`, where `slope` broadcasts to the shape of `x`
    (unidirectional broadcasting). The result has the type of `x`.

    ```mlir
    %y = pipe.prelu %x, %slope : tensor<2x3x4xf32>, tensor<3x1xf32>
    ```
  }];
  let arguments = (ins Pipe_FloatTensor:$input, Pipe_FloatTensor:$slope);
  let results = (outs Pipe_FloatTensor:$output);
  let assemblyFormat = "$input `,` $slope attr-dict `:` type($input) `,` type($slope)";
  let hasVerifier = 1;
}

def Pipe_WhereOp : Pipe_Op<"where", [Pipe_Differentiable, Pure,
    Pipe_Pointwise, InferTypeOpAdaptor]> {
  let summary = "select elements by a condition (ONNX Where)";
  let description = [{
    All three operands broadcast to a common shape by numpy rules.

    ```mlir
    %z = pipe.where %c, %x, %y : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Pipe_BoolTensor:$condition, Pipe_Tensor:$lhs,
                       Pipe_Tensor:$rhs);
  let results = (outs Pipe_Tensor:$output);
  let hasFolder = 1;
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,` type($lhs)
    `,` type($rhs)
  }];
  let hasVerifier = 1;
}

#endif // PIPE_DIALECT_PIPE_IR_PIPEELEMENTWISEOPS_TD
