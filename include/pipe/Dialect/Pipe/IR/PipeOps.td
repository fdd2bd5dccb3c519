//===- PipeOps.td - pipe dialect operations ----------------*- tablegen -*-===//
//
// The ops of the `pipe` dialect, grouped by family into several files.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEOPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPEOPS_TD

include "pipe/Dialect/Pipe/IR/PipeDialect.td"
include "pipe/Dialect/Pipe/IR/PipeAttrs.td"
include "pipe/Dialect/Pipe/IR/PipeInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Any statically shaped ranked tensor.
def Pipe_Tensor : StaticShapeTensorOf<[AnyType]>;
def Pipe_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Pipe_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Pipe_BoolTensor : StaticShapeTensorOf<[I1]>;

include "pipe/Dialect/Pipe/IR/PipeElementwiseOps.td"
include "pipe/Dialect/Pipe/IR/PipeNNOps.td"
include "pipe/Dialect/Pipe/IR/PipeOptimizerOps.td"
include "pipe/Dialect/Pipe/IR/PipeShapeOps.td"
include "pipe/Dialect/Pipe/IR/PipeStructureOps.td"

#endif // PIPE_DIALECT_PIPE_IR_PIPEOPS_TD
