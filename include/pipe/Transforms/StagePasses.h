//===- StagePasses.h - the passes that make a pipeline ----------*- C++ -*-===//
//
// The passes of PipeStageTransforms (StagePasses.td): their options, their
// create functions, and registerPipeStagePasses() for pipe-opt.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TRANSFORMS_STAGEPASSES_H
#define PIPE_TRANSFORMS_STAGEPASSES_H

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pipe {
#define GEN_PASS_DECL
#include "pipe/Transforms/StagePasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace mlir::pipe

#endif // PIPE_TRANSFORMS_STAGEPASSES_H
