//===- StageEmitter.h - C++ source for one CPU stage ------------*- C++ -*-===//

#ifndef PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
#define PIPE_LIB_TARGET_CPU_STAGEEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// Where a parameter lives in the weights blob.
struct WeightEntry {
  std::string name;
  int64_t offset = 0;
  RankedTensorType type;
  bool trainable = false;
};

/// What emitting a stage produced besides its source. Several functions
/// of one stage (the microbatch and the optimizer update) share it: they
/// share the weights blob, each parameter once, and one arena.
struct StageArtifacts {
  /// The C++ source of the stage's functions.
  std::string source;
  /// Parameters and constants, each 64-byte aligned at the offset the
  /// source refers to.
  std::string weights;
  /// The parameters in `weights`, in the order they were added.
  std::vector<WeightEntry> parameters;
  llvm::StringMap<size_t> parameterIndex;
  /// Peak bytes of the activation arena under the static memory plan (the
  /// largest of the functions'), and what the same buffers would take
  /// without reuse.
  int64_t arenaBytes = 0, arenaBytesWithoutReuse = 0;
  int64_t parameterBytes = 0;
  int64_t numOps = 0, numKernelCalls = 0, numFusedLoops = 0;
  int64_t flops = 0;
};

/// Emits `func` (pipe graph ops on static shapes) as the C++ function
///
///   bool NAME(char *arena, char *weights, const void *const *in,
///             void *const *out, int64_t microbatch, std::string &error);
///
/// `in` and `out` point at its arguments and results. A result with a
/// `pipe.assign = @parameter` attribute is written over that parameter in
/// `weights` instead. `microbatch` numbers the rows of the inputs in error
/// messages. `parameterData` holds the bytes of every parameter the
/// function reads, keyed by symbol name. Reports unsupported ops and types
/// through diagnostics.
LogicalResult emitStage(func::FuncOp func, StringRef name,
                        const llvm::StringMap<std::string> &parameterData,
                        StageArtifacts &artifacts);

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_TARGET_CPU_STAGEEMITTER_H
