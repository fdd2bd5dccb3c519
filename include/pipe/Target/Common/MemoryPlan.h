//===- MemoryPlan.h - static buffer assignment for a stage ------*- C++ -*-===//

#ifndef PIPE_TARGET_COMMON_MEMORYPLAN_H
#define PIPE_TARGET_COMMON_MEMORYPLAN_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace pipe {

/// One buffer the plan must place: its size, the step that writes it and
/// the last step that reads it.
struct BufferRequest {
  Value value;
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// Offsets into one arena, reused by liveness.
struct MemoryPlan {
  llvm::DenseMap<Value, int64_t> offsets;
  int64_t peakBytes = 0;
  /// The sum of all buffer sizes: the arena a plan without reuse needs.
  int64_t totalBytes = 0;
};

/// Places `requests` in one arena: a buffer may reuse the bytes of any
/// buffer whose last read comes before its first write. Offsets are
/// aligned to `alignment` bytes. Greedy by size (largest first), then
/// first fit against the already placed buffers whose lifetimes overlap.
MemoryPlan planMemory(llvm::ArrayRef<BufferRequest> requests,
                      int64_t alignment = 64);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_COMMON_MEMORYPLAN_H
