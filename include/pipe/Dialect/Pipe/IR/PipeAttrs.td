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

/// An activation that a channels-last convolution applies to its result:
/// max(y, 0), min(max(y, lo), hi), or y * sigmoid(y).
def Pipe_ConvActivation : I32EnumAttr<"ConvActivation", "fused activation", [
    I32EnumAttrCase<"relu", 0>,
    I32EnumAttrCase<"clip", 1>,
    I32EnumAttrCase<"silu", 2>]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_ConvActivationAttr : EnumAttr<Pipe_Dialect, Pipe_ConvActivation,
                                       "conv_activation">;

/// The part of a training step an op or a step of a stage's program
/// belongs to, and the role of a tensor crossing a stage boundary: an
/// activation travelling forward, a gradient travelling backward, or an
/// updated parameter sent by its owner to the other stages that read it.
def Pipe_Phase : I32EnumAttr<"Phase", "pipeline phase", [
    I32EnumAttrCase<"Forward", 0, "forward">,
    I32EnumAttrCase<"Backward", 1, "backward">,
    I32EnumAttrCase<"Update", 2, "update">]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_PhaseAttr : EnumAttr<Pipe_Dialect, Pipe_Phase, "phase">;

/// The order in which each stage runs the forward and backward passes of
/// the microbatches of one training step.
def Pipe_Schedule : I32EnumAttr<"Schedule", "pipeline schedule", [
    I32EnumAttrCase<"GPipe", 0, "gpipe">,
    I32EnumAttrCase<"OneFOneB", 1, "1f1b">]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_ScheduleAttr : EnumAttr<Pipe_Dialect, Pipe_Schedule, "schedule">;

/// What a stage keeps of its forward pass for the backward pass: every
/// activation, only the results of contractions (recomputing the rest), or
/// only its inputs (recomputing everything).
def Pipe_Recompute : I32EnumAttr<"Recompute", "activation recomputation", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Selective", 1, "selective">,
    I32EnumAttrCase<"Full", 2, "full">]> {
  let cppNamespace = "::mlir::pipe";
  let genSpecializedAttr = 0;
}
def Pipe_RecomputeAttr : EnumAttr<Pipe_Dialect, Pipe_Recompute, "recompute">;

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

/// One stage of a plan: where it runs and what it keeps.
def Pipe_StagePlanAttr : AttrDef<Pipe_Dialect, "StagePlan"> {
  let mnemonic = "stage_plan";
  let summary = "the device and recomputation of one pipeline stage";
  let description = [{
    Stage `index` of a plan runs on the cluster's device `device`, of
    catalog kind `kind`, compiled for `arch` (`cpu`, or a GPU architecture
    such as `sm_80`) on `host`, with `cores` CPU cores (0 where the cluster
    file gives none), and keeps activations for its backward pass as
    `recompute` says. `report` holds the planner's predictions for the
    stage (costs and memory by part, as `plan.json` prints them).

    ```mlir
    #pipe.stage_plan<index = 0, device = "a0", kind = "A100-80GB",
                     arch = "sm_80", host = "n1", cores = 0,
                     recompute = selective, report = {forward_ms = 1.5}>
    ```
  }];
  let parameters = (ins "int64_t":$index, "::mlir::StringAttr":$device,
                        "::mlir::StringAttr":$kind, "::mlir::StringAttr":$arch,
                        "::mlir::StringAttr":$host, "int64_t":$cores,
                        EnumParameter<Pipe_Recompute>:$recompute,
                        "::mlir::DictionaryAttr":$report);
  let assemblyFormat = "`<` struct(params) `>`";
}

/// One step of a stage's program.
def Pipe_StepAttr : AttrDef<Pipe_Dialect, "Step"> {
  let mnemonic = "step";
  let summary = "a step of a stage's program";
  let description = [{
    The forward or backward pass of microbatch `microbatch`, or (phase
    `update`, microbatch 0) the optimizer update after the last. A stage's
    program is the list of its steps (`pipe.program`, set by
    `--pipe-schedule`).

    ```mlir
    pipe.stage @stage0 index 0 device "a0" attributes {pipe.program = [
        #pipe.step<forward, 0>, #pipe.step<forward, 1>,
        #pipe.step<backward, 0>, #pipe.step<backward, 1>,
        #pipe.step<update, 0>]} { ... }
    ```
  }];
  let parameters = (ins EnumParameter<Pipe_Phase>:$phase,
                        "int64_t":$microbatch);
  let assemblyFormat = "`<` $phase `,` $microbatch `>`";
}

/// When a stage posts a send of one of its steps.
def Pipe_PostAttr : AttrDef<Pipe_Dialect, "Post"> {
  let mnemonic = "post";
  let summary = "a send of an earlier step, posted with a step's receives";
  let description = [{
    In a stage's program (`pipe.program`), the send number `send` (counting
    the sends of its function in order) of the step `phase`, `microbatch`,
    which has already run. The posts listed before a step go out as one
    group with that step's receives, and the stage waits for the whole
    group before it runs the step; those after the last step go out at the
    end. `--pipe-schedule` chooses them so that the transfers cannot
    deadlock with unbuffered sends.

    ```mlir
    [#pipe.step<forward, 0>, #pipe.post<forward, 0, 0>,
     #pipe.step<forward, 1>, ...]
    ```
  }];
  let parameters = (ins EnumParameter<Pipe_Phase>:$phase,
                        "int64_t":$microbatch, "int64_t":$send);
  let assemblyFormat = "`<` $phase `,` $microbatch `,` $send `>`";
}

/// A schedule as an attribute parameter, quoted: "1f1b" is no keyword.
def Pipe_ScheduleParameter : AttrParameter<"::mlir::pipe::Schedule",
                                           "pipeline schedule"> {
  let printer = [{ $_printer.printString(stringifySchedule($_self)) }];
  let parser = [{
    [&]() -> ::mlir::FailureOr<::mlir::pipe::Schedule> {
      ::llvm::SMLoc loc = $_parser.getCurrentLocation();
      std::string name;
      if (::mlir::failed($_parser.parseKeywordOrString(&name)))
        return ::mlir::failure();
      if (auto schedule = ::mlir::pipe::symbolizeSchedule(name))
        return *schedule;
      $_parser.emitError(loc, "unknown schedule '") << name << "'";
      return ::mlir::failure();
    }()
  }];
}

/// A pipeline plan: the schedule, the microbatches and the stages.
def Pipe_PlanAttr : AttrDef<Pipe_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "how a module runs as a pipeline";
  let description = [{
    Set on the module as `pipe.plan` by `--pipe-plan`, and read by every
    later pass: a training step (`training`) runs `microbatches`
    microbatches through `stages` (`#pipe.stage_plan`, in pipeline order)
    under `schedule`; an inference pipeline runs forward passes only.
    `report` holds the planner's predictions for the whole pipeline
    (iteration time, bounds, bubble), as `plan.json` prints them. Each op
    of `@main` carries its stage as `pipe.stage`.

    ```mlir
    module attributes {pipe.plan = #pipe.plan<schedule = 1f1b,
        microbatches = 4, training = true,
        stages = [#pipe.stage_plan<...>, #pipe.stage_plan<...>],
        report = {predicted_iteration_ms = 3.2}>} { ... }
    ```
  }];
  let parameters = (ins Pipe_ScheduleParameter:$schedule,
                        "int64_t":$microbatches, "bool":$training,
                        "::mlir::ArrayAttr":$stages,
                        "::mlir::DictionaryAttr":$report);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The plan of stage `index`.
    StagePlanAttr getStage(unsigned index) const {
      return ::llvm::cast<StagePlanAttr>(getStages()[index]);
    }
    unsigned getNumStages() const { return getStages().size(); }
  }];
}

#endif // PIPE_DIALECT_PIPE_IR_PIPEATTRS_TD
