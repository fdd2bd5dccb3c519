//===- FusedLoop.h - C++ loops of fused elementwise ops ---------*- C++ -*-===//
//
// The CPU target's code for a fused step; StageEmitter.cpp emits the rest.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_LIB_TARGET_CPU_FUSEDLOOP_H
#define PIPE_LIB_TARGET_CPU_FUSEDLOOP_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir {
namespace pipe {

/// The C++ block that computes `ops`, a run of elementwise ops from
/// groupSteps, in one OpenMP loop over the last op's result: its elements
/// in order or, where an operand broadcasts, as rows of splitBroadcastLoop,
/// so that the inner loop vectorizes. `input` and `output` give the C++
/// pointer expressions of the buffers read and written. Fails, with an
/// error on the op, for an element type the CPU target has no C++ type
/// for.
FailureOr<std::string> fusedLoopSource(ArrayRef<Operation *> ops,
                                       function_ref<std::string(Value)> input,
                                       function_ref<std::string(Value)> output);

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_TARGET_CPU_FUSEDLOOP_H
