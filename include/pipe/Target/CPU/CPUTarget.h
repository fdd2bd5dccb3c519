//===- CPUTarget.h - compile pipe IR into a CPU program ---------*- C++ -*-===//

#ifndef PIPE_TARGET_CPU_CPUTARGET_H
#define PIPE_TARGET_CPU_CPUTARGET_H

#include "pipe/Target/CUDA/CUDATarget.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace pipe {

/// Options of the CPU target.
struct CPUTargetOptions {
  /// Compile the sources into executables (`--emit=binaries`), or stop after
  /// writing them (`--emit=sources`).
  bool compile = true;
  /// The C++ compiler to use.
  std::string compiler = "c++";
  /// For a training program (a module with @update): the microbatches of
  /// one optimizer step.
  int64_t microbatches = 1;
  /// Pipelines: every stage on the CPU target (`--target=cpu`, which
  /// emulates GPU devices), or each stage on its device's (CUDA for GPUs).
  bool allOnCPU = false;
  /// Where to find nvcc for the CUDA stages.
  CUDAToolchainOptions cuda;
};

/// Writes the program of `module` into `outDir`: `stage0/main.cpp`,
/// `stage0/weights.bin` and its index `stage0/weights.json`, the executable
/// `stage0/stage0` (with `compile`), `plan.json` and the launcher `run`.
/// An inference module has one `func.func @main` of pipe graph ops. A
/// training module (after `--pipe-autodiff` and `--pipe-optimizer`) also
/// has @update; its program trains (`run --steps N`), and when its
/// parameters come from an ONNX file, that file is copied to
/// `model.onnx` for `run --save-onnx`. Reports errors
/// through the context's diagnostics; nothing is left in `outDir` on
/// failure.
LogicalResult emitCPUProgram(ModuleOp module, llvm::StringRef outDir,
                             const CPUTargetOptions &options);

/// Writes the pipeline of `module`, split into pipe.stage ops with a
/// verified schedule, into `outDir`: per stage `stage<k>/main.cpp` (its
/// compute functions and the tables the stage driver of runtime/pipeline
/// reads), `stage<k>/weights.bin` and `weights.json`, and with `compile`
/// the executable `stage<k>/stage<k>`; `plan.json`; the launcher `run`,
/// which starts one process per stage with mpirun; and for training from
/// an ONNX file, `model.onnx`. A stage on a GPU device (unless
/// `allOnCPU`) is a CUDA stage instead: `stage<k>/main.cu` and its
/// `fused.h`, built by nvcc for the device's architecture alone. Nothing
/// is left in `outDir` on failure.
LogicalResult emitPipeline(ModuleOp module, llvm::StringRef outDir,
                           const CPUTargetOptions &options);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_CPU_CPUTARGET_H
