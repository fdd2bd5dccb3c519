//===- PipeInterfaces.td - interfaces of pipe ops ----------*- tablegen -*-===//
//
// What the passes and the targets ask of every op, answered where the op is
// defined: its gradient rule, for `--pipe-autodiff`; its work, for the
// planner's cost model; and whether a loop over its result computes it
// point by point.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_TD
#define PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Pipe_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::pipe";
  let description = [{
    The work of one execution of an op, as the planner's cost model counts
    it (lib/Plan/Model/CostModel.cpp): its floating-point operations, the
    bytes it reads and writes, and whether it is a contraction, which runs
    near a device's matrix peak. Every method has a default: one operation
    per result element, and every operand read and every result written
    once. Ops whose work differs declare the methods they answer otherwise
    and implement them beside their definition. Counts saturate at
    INT64_MAX rather than overflow.
  }];
  let methods = [
    InterfaceMethod<"The floating-point operations.", "int64_t", "getFlops",
      (ins), [{}], [{ return ::mlir::pipe::resultElements($_op); }]>,
    InterfaceMethod<"Whether the op is a contraction (a matrix product or a "
      "convolution).", "bool", "isContraction", (ins), [{}],
      [{ return false; }]>,
    InterfaceMethod<"The bytes the op reads.", "int64_t", "getBytesRead",
      (ins), [{}], [{ return ::mlir::pipe::operandBytes($_op); }]>,
    InterfaceMethod<"The bytes the op writes.", "int64_t", "getBytesWritten",
      (ins), [{}], [{ return ::mlir::pipe::resultBytes($_op); }]>,
  ];
}

def Pipe_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::pipe";
  let description = [{
    The reverse-mode gradient rule of an op, which `--pipe-autodiff` applies
    while it walks the function backwards. Given the adjoints of the op's
    results (a zero tensor for a result the loss does not read), the rule
    builds the adjoints of its operands with the GradientBuilder, at the
    builder's insertion point and the op's location. An op without this
    interface, or whose rule declines (fails), has no gradient: autodiff
    reports it when the op lies between a trainable parameter and the
    loss.

    The rules are implemented by op family beside the ops' definitions:
    PipeElementwiseGradients.cpp, PipeNNGradients.cpp and
    PipeShapeGradients.cpp in lib/Dialect/Pipe/IR.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands with `builder`, which holds
        the adjoints of the op's results (`grad(i)`) and collects those of
        its operands (`operandGrad(i)`, null on entry). An operand left
        null gets no gradient (an integer index, a condition). Fails where
        the rule does not cover this instance of the op (for example a
        cast from an integer type).
      }], "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::pipe::GradientBuilder &":$builder)>,
  ];
}

/// Shorthand for an op that implements its gradient rule.
defvar Pipe_Differentiable =
    DeclareOpInterfaceMethods<Pipe_GradientOpInterface>;

/// Each element of the result is computed from the operands' elements at
/// the same index, numpy-broadcast: a chain of such ops is one loop over
/// the result (the targets fuse them; lib/Target/Common/ElementwiseFusion).
def Pipe_Pointwise : NativeOpTrait<"Pointwise"> {
  let cppNamespace = "::mlir::pipe";
}

#endif // PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_TD
