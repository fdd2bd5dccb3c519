//===- Passes.h - pipe transformation passes --------------------*- C++ -*-===//

#ifndef PIPE_TRANSFORMS_PASSES_H
#define PIPE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"

namespace mlir {
namespace pipe {

#define GEN_PASS_DECL
#include "pipe/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pipe/Transforms/Passes.h.inc"

} // namespace pipe
} // namespace mlir

#endif // PIPE_TRANSFORMS_PASSES_H
