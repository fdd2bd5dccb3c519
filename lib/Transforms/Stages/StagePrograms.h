//===- StagePrograms.h - stage programs in the IR and in lib/Plan -*- C++ -*-=//
//
// Reads a stage's program (pipe.program) with the transfers of its
// functions into the form lib/Plan's schedule check takes, and writes it
// back.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_TRANSFORMS_STAGES_STAGEPROGRAMS_H
#define LIB_TRANSFORMS_STAGES_STAGEPROGRAMS_H

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Plan/ScheduleCheck.h"

namespace mlir {
namespace pipe {

/// The step (`phase`, `microbatch`) of `stage` with the transfers of its
/// function in order, and those transfer ops in `ops`; fails, naming the
/// stage, if it has no such function.
FailureOr<ScheduledStep> readStep(StageOp stage, Phase phase,
                                  int64_t microbatch,
                                  SmallVectorImpl<Operation *> &ops);

/// The program of `stage`: its steps and posts, and per step the transfer
/// ops. Fails, naming the stage, on a missing or malformed program.
FailureOr<StageProgram>
readProgram(StageOp stage, SmallVectorImpl<SmallVector<Operation *>> &ops);

/// Sets `stage`'s pipe.program to `program`.
void writeProgram(StageOp stage, const StageProgram &program);

} // namespace pipe
} // namespace mlir

#endif // LIB_TRANSFORMS_STAGES_STAGEPROGRAMS_H
