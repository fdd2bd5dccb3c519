//===- PipeEnums.h - pipe dialect enums -------------------------*- C++ -*-===//
//
// The dialect's enums (Phase, Schedule, Recompute, ...) without the rest of
// the dialect, for libraries such as the planner that only need the enums.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEENUMS_H
#define PIPE_DIALECT_PIPE_IR_PIPEENUMS_H

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include "pipe/Dialect/Pipe/IR/PipeEnums.h.inc"

#endif // PIPE_DIALECT_PIPE_IR_PIPEENUMS_H
