//===- StageEmitter.h - C++ source for one CPU stage ------------*- C++ -*-===//

#ifndef PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
#define PIPE_LIB_TARGET_CPU_STAGEEMITTER_H

#include "pipe/Target/Common/StageEmitter.h"

namespace mlir {
namespace pipe {

/// Emits `func` as the CPU target's C++ function NAME (StageEmitter::run):
/// fused steps are OpenMP loops, kernels those of runtime/cpu/Kernels.h.
LogicalResult emitStage(func::FuncOp func, StringRef name,
                        const llvm::StringMap<std::string> &parameterData,
                        StageArtifacts &artifacts);

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
