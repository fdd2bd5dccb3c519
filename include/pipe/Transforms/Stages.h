//===- Stages.h - reading the stage and phase of ops ------------*- C++ -*-===//
//
// What --pipe-partition records on each op (`pipe.stage`, `pipe.phase`),
// as the passes after it and the targets read it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TRANSFORMS_STAGES_H
#define PIPE_TRANSFORMS_STAGES_H

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include <optional>

namespace mlir {
namespace pipe {

/// The stage of `op`, if it has one.
inline std::optional<int64_t> stageOf(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}

/// The phase of `op`, if it has one; a transfer's is its own.
inline std::optional<Phase> phaseOf(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return send.getPhase();
  if (auto recv = dyn_cast<RecvOp>(op))
    return recv.getPhase();
  if (auto phase = op->getAttrOfType<PhaseAttr>(kPhaseAttrName))
    return phase.getValue();
  return std::nullopt;
}

/// Whether `op` belongs to no stage: constants and parameter reads, which
/// every stage that uses them has its own copy of.
inline bool isUnstaged(Operation *op) {
  return isa<ConstantOp, ParamRefOp>(op);
}

} // namespace pipe
} // namespace mlir

#endif // PIPE_TRANSFORMS_STAGES_H
