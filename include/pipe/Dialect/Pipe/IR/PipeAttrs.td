//===- PipeAttrs.td - pipe dialect enums and attributes ----*- tablegen -*-===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEATTRS_TD
#define PIPE_DIALECT_PIPE_IR_PIPEATTRS_TD

include "pipe/Dialect/Pipe/IR/PipeDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

/// How a loss reduces over the batch (ONNX `reduction`).
def Pipe_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"mean", 2>]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_ReductionAttr : EnumAttr<Pipe_Dialect, Pipe_Reduction, "reduction">;

/// How `pipe.pad` fills the border (ONNX Pad `mode`).
def Pipe_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"constant", 0>,
    I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"edge", 2>]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_PadModeAttr : EnumAttr<Pipe_Dialect, Pipe_PadMode, "pad_mode">;

/// The role of a tensor crossing a stage boundary: an activation travelling
/// forward, or a gradient travelling backward.
def Pipe_Phase : I32EnumAttr<"Phase", "pipeline phase", [
    I32EnumAttrCase<"forward", 0>,
    I32EnumAttrCase<"backward", 1>]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_PhaseAttr : EnumAttr<Pipe_Dialect, Pipe_Phase, "phase">;

/// A tensor value stored outside the IR: an initializer of an ONNX model.
def Pipe_ExternalAttr : AttrDef<Pipe_Dialect, "External"> {
  let mnemonic = "external";
  let summary = "a tensor stored in an external file";
  let description = [{
    Refers to the initializer `key` of the ONNX model `file` (which may keep
    its data in external-data files beside it). Parameters of imported
    models use it, so the IR text stays small at any model size.

    ```mlir
    pipe.parameter @fc.weight : tensor<16x8xf32> trainable
        = #pipe.external<"model.onnx", "fc.weight">
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$file, "::mlir::StringAttr":$key);
  let assemblyFormat = "`<` $file `,` $key `>`";
}

#endif // PIPE_DIALECT_PIPE_IR_PIPEATTRS_TD
