//===- PipeDialect.td - The pipe dialect definition --------*- tablegen -*-===//
//
// The `pipe` dialect: ONNX-semantics tensor compute on static shapes, model
// parameters, and the structure of a pipelined program (stages, send/recv,
// recompute regions).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEDIALECT_TD
#define PIPE_DIALECT_PIPE_IR_PIPEDIALECT_TD

include "mlir/IR/OpBase.td"

def Pipe_Dialect : Dialect {
  let name = "pipe";
  let cppNamespace = "::mlir::pipe";
  let summary = "Pipelined compilation of ONNX models for heterogeneous devices";
  let description = [{
    The `pipe` dialect carries a model through every level of the compiler:

    1. **Graph**: tensor compute ops with ONNX semantics on statically shaped
       ranked tensors, plus named parameters whose values live outside the IR
       text.
    2. **Training**: the same ops plus gradient and optimizer-update ops.
    3. **Staged**: `pipe.stage` containers, one per device, that talk through
       paired `pipe.send` / `pipe.recv` ops, and `pipe.recompute` regions.

    Broadcasting follows ONNX (numpy) rules throughout.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Pipe_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pipe_Dialect, mnemonic, traits>;

#endif // PIPE_DIALECT_PIPE_IR_PIPEDIALECT_TD
