//===- CPUTarget.h - compile pipe IR into a CPU program ---------*- C++ -*-===//

#ifndef PIPE_TARGET_CPU_CPUTARGET_H
#define PIPE_TARGET_CPU_CPUTARGET_H

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
};

/// Writes the program of `module` (after import and the inference
/// pipeline: one `func.func @main` of pipe graph ops) into `outDir`:
/// `stage0/main.cpp`, `stage0/weights.bin`, `stage0/CMakeLists.txt`-free
/// build by `compile`, `plan.json` and the launcher `run`. Reports errors
/// through the context's diagnostics; nothing is left in `outDir` on
/// failure.
LogicalResult emitCPUProgram(ModuleOp module, llvm::StringRef outDir,
                             const CPUTargetOptions &options);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_CPU_CPUTARGET_H
