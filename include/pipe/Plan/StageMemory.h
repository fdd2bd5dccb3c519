//===- StageMemory.h - predicted peak memory of a pipeline stage -*- C++ -*-=//

#ifndef PIPE_PLAN_STAGEMEMORY_H
#define PIPE_PLAN_STAGEMEMORY_H

#include "pipe/Dialect/Pipe/IR/PipeEnums.h"

#include <cstdint>

namespace mlir {
namespace pipe {

enum class Optimizer { None, SGD, SGDMomentum, Adam };

/// Where a stage sits in its pipeline and how the pipeline runs.
struct StagePosition {
  unsigned index = 0, numStages = 1;
  int64_t microbatches = 1;
  Schedule schedule = Schedule::OneFOneB;
  bool training = false;
};

/// The predicted peak memory of one stage, by part, in bytes.
struct StageMemory {
  int64_t parameters = 0, gradients = 0, optimizerState = 0;
  /// Activations kept for the backward pass of one microbatch.
  int64_t stashPerMicrobatch = 0;
  /// Microbatches whose stash is alive at once.
  int64_t microbatchesInFlight = 0;
  /// Activations a recomputing stage rebuilds for one microbatch at a time.
  int64_t recomputeBuffer = 0;
  /// The largest single op's activation operands and results, live while
  /// it runs (in the backward pass, their gradients).
  int64_t workspace = 0;

  int64_t total() const {
    return parameters + gradients + optimizerState +
           stashPerMicrobatch * microbatchesInFlight + recomputeBuffer +
           workspace;
  }
};

/// Microbatches in flight on stage `index` of `numStages`: GPipe runs all M
/// forward passes before any backward pass; 1F1B keeps at most
/// numStages - index (never more than M).
int64_t microbatchesInFlight(const StagePosition &position);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_STAGEMEMORY_H
