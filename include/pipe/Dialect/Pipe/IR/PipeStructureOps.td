//===- PipeStructureOps.td - parameters and pipeline ops ---*- tablegen -*-===//
//
// Model parameters, and the ops that describe a pipelined program: stages on
// devices, point-to-point transfers between them, and recompute regions.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPESTRUCTUREOPS_TD
#define PIPE_DIALECT_PIPE_IR_PIPESTRUCTUREOPS_TD

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Pipe_ParameterOp : Pipe_Op<"parameter", [Symbol]> {
  let summary = "a named model parameter (an ONNX initializer)";
  let description = [{
    Declares a parameter of the model: its name, type, whether training
    updates it, and optionally its initial value: an elements attribute
    (`dense_resource` blobs for large values) or a reference to an external
    file, so the IR text stays small.

    ```mlir
    pipe.parameter @fc.weight : tensor<16x8xf32> trainable
        = #pipe.external<"model.onnx", "fc.weight">
    pipe.parameter @steps : tensor<i64>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Pipe_Tensor>:$type,
                       UnitAttr:$trainable,
                       OptionalAttr<AnyAttrOf<[ElementsAttr, Pipe_ExternalAttr]>>:$initial_value);
  let assemblyFormat = [{
    $sym_name `:` $type (`trainable` $trainable^)?
    (`=` $initial_value^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Pipe_ParamRefOp : Pipe_Op<"param_ref", [
    DeclareOpInterfaceMethods<Pipe_CostOpInterface,
        ["getFlops", "getBytesRead", "getBytesWritten"]>,
    Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read the current value of a parameter";
  let description = [{
    ```mlir
    %w = pipe.param_ref @"fc.weight" : tensor<16x8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Pipe_Tensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
}

//===----------------------------------------------------------------------===//
// Stages and communication
//===----------------------------------------------------------------------===//

def Pipe_StageOp : Pipe_Op<"stage", [Symbol, SymbolTable, IsolatedFromAbove,
    NoTerminator, SingleBlock, NoRegionArguments,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "the program of one pipeline stage, on one device";
  let description = [{
    A container, like a module, for everything one stage runs: its
    parameters and functions. `index` orders the stages of a pipeline from
    0; `device` names the device of the cluster it runs on. Sibling stages
    talk only through `pipe.send` / `pipe.recv`; the verifier checks that
    every transfer between two visible stages has exactly one matching end
    with the same type.

    ```mlir
    pipe.stage @s0 index 0 device "a0" {
      func.func @forward(%x: tensor<4x8xf32>) {
        pipe.send forward %x to 1 channel 0 : tensor<4x8xf32>
        return
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$index,
                       StrAttr:$device);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `index` $index `device` $device attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "int64_t":$index,
                   "::llvm::StringRef":$device)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

class Pipe_CommOp<string mnemonic, list<Trait> traits = []>
    : Pipe_Op<mnemonic, traits> {
  let hasVerifier = 1;
}

def Pipe_SendOp : Pipe_CommOp<"send", [MemoryEffects<[MemWrite]>]> {
  let summary = "send a tensor to another stage";
  let description = [{
    Sends `value` to stage `peer` on `channel`. A channel identifies one
    tensor of one stage boundary; `phase` says whether it carries an
    activation (forward) or a gradient (backward). Its matching
    `pipe.recv` in stage `peer` names this stage and the same channel.

    ```mlir
    pipe.send forward %act to 1 channel 0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Pipe_Tensor:$value, I64Attr:$peer, I64Attr:$channel,
                       Pipe_PhaseAttr:$phase);
  let assemblyFormat = [{
    `` $phase $value `to` $peer `channel` $channel attr-dict `:` type($value)
  }];
}

def Pipe_RecvOp : Pipe_CommOp<"recv", [MemoryEffects<[MemRead]>]> {
  let summary = "receive a tensor from another stage";
  let description = [{
    Receives the tensor that stage `peer` sends on `channel`.

    ```mlir
    %act = pipe.recv forward from 0 channel 0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins I64Attr:$peer, I64Attr:$channel, Pipe_PhaseAttr:$phase);
  let results = (outs Pipe_Tensor:$value);
  let assemblyFormat = [{
    `` $phase `from` $peer `channel` $channel attr-dict `:` type($value)
  }];
}

//===----------------------------------------------------------------------===//
// Recomputation
//===----------------------------------------------------------------------===//

def Pipe_RecomputeOp : Pipe_Op<"recompute", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "a forward region whose activations are recomputed";
  let description = [{
    The body computes the results from the operands, which it receives as
    block arguments. Its intermediate activations are not stashed for the
    backward pass; the backward pass runs the body again from the operands.

    ```mlir
    %y = pipe.recompute (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      %t = pipe.tanh %a : tensor<4x8xf32>
      pipe.yield %t : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Pipe_Tensor>:$inputs);
  let results = (outs Variadic<Pipe_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
}

def Pipe_YieldOp : Pipe_Op<"yield", [Pure, Terminator,
                                     HasParent<"RecomputeOp">]> {
  let summary = "return values from a pipe region";
  let description = [{
    ```mlir
    pipe.yield %a, %b : tensor<4xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Pipe_Tensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // PIPE_DIALECT_PIPE_IR_PIPESTRUCTUREOPS_TD
