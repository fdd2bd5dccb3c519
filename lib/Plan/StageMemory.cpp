//===- StageMemory.cpp - predicted peak memory of a pipeline stage --------===//

#include "pipe/Plan/StageMemory.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

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

StageMemory mlir::pipe::estimateStageMemory(ArrayRef<Operation *> ops,
                                            const StagePosition &position,
                                            Recompute recompute,
                                            Optimizer optimizer) {
  StageMemory memory;
  llvm::DenseSet<Operation *> inStage(ops.begin(), ops.end());
  llvm::StringSet<> seenParameters;
  int64_t allResults = 0, contractionResults = 0, stageInputs = 0;
  llvm::DenseSet<Value> countedInputs;
  for (Operation *op : ops) {
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      if (seenParameters.insert(ref.getName()).second)
        memory.parameters += tensorBytes(ref.getType());
      continue;
    }
    if (isa<ConstantOp>(op))
      continue;
    int64_t results = 0;
    for (Value result : op->getResults())
      results += tensorBytes(result.getType());
    memory.workspace = std::max(memory.workspace, results);
    // Reshapes alias their input: nothing new to keep.
    if (!isa<ReshapeOp>(op)) {
      allResults += results;
      if (isa<MatMulOp, GemmOp, ConvOp, ConvTransposeOp>(op))
        contractionResults += results;
    }
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      bool fromOutside = !producer || !inStage.contains(producer);
      if (fromOutside && countedInputs.insert(operand).second)
        stageInputs += tensorBytes(operand.getType());
    }
  }

  memory.microbatchesInFlight = microbatchesInFlight(position);
  if (!position.training)
    return memory;
  memory.gradients = memory.parameters;
  switch (optimizer) {
  case Optimizer::None:
  case Optimizer::SGD:
    break;
  case Optimizer::SGDMomentum:
    memory.optimizerState = memory.parameters;
    break;
  case Optimizer::Adam:
    memory.optimizerState = 2 * memory.parameters;
    break;
  }
  switch (recompute) {
  case Recompute::None:
    memory.stashPerMicrobatch = allResults;
    break;
  case Recompute::Selective:
    memory.stashPerMicrobatch = stageInputs + contractionResults;
    memory.recomputeBuffer = allResults - contractionResults;
    break;
  case Recompute::Full:
    memory.stashPerMicrobatch = stageInputs;
    memory.recomputeBuffer = allResults;
    break;
  }
  return memory;
}
