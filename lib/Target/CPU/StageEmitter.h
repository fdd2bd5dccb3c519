//===- StageEmitter.h - C++ source for one CPU stage ------------*- C++ -*-===//

#ifndef PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
#define PIPE_LIB_TARGET_CPU_STAGEEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
namespace pipe {

/// What emitting a stage produced besides its source.
struct StageArtifacts {
  /// The C++ source of the stage program.
  std::string source;
  /// Parameters and constants, each 64-byte aligned at the offset the
  /// source refers to.
  std::string weights;
  /// Peak bytes of the activation arena under the static memory plan, and
  /// what the same buffers would take without reuse.
  int64_t arenaBytes = 0, arenaBytesWithoutReuse = 0;
  int64_t parameterBytes = 0;
  int64_t numOps = 0, numKernelCalls = 0, numFusedLoops = 0;
  int64_t flops = 0;
};

/// Emits the C++ program that runs `main` (pipe graph ops on static
/// shapes) one microbatch at a time. `parameterData` holds the bytes of
/// every parameter the function reads, keyed by symbol name. Reports
/// unsupported ops and types through diagnostics.
LogicalResult emitStage(func::FuncOp main,
                        const llvm::StringMap<std::string> &parameterData,
                        StageArtifacts &artifacts);

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
