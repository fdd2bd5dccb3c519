//===- PipeDialect.h - The pipe dialect -------------------------*- C++ -*-===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEDIALECT_H
#define PIPE_DIALECT_PIPE_IR_PIPEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "pipe/Dialect/Pipe/IR/PipeOpsDialect.h.inc"

#endif // PIPE_DIALECT_PIPE_IR_PIPEDIALECT_H
