//===- StageMemory.cpp - predicted peak memory of a pipeline stage --------===//

#include "pipe/Plan/StageMemory.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pipe;

int64_t mlir::pipe::microbatchesInFlight(const StagePosition &position) {
  if (!position.training)
    return 0;
  if (position.schedule == Schedule::GPipe)
    return position.microbatches;
  return std::min<int64_t>(position.numStages - position.index,
                           position.microbatches);
}
