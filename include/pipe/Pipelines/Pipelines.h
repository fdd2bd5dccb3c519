//===- Pipelines.h - the compiler's registered pass pipelines ---*- C++ -*-===//
//
// The pass pipelines that take an imported model to each `--emit` level,
// built from one options struct. `pipe-opt --emit=...` only chooses where
// to stop; each pipeline is also registered (`--pipe-prepare`,
// `--pipe-training`, ...) for use on `.mlir` files.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PIPELINES_PIPELINES_H
#define PIPE_PIPELINES_PIPELINES_H

#include "pipe/Plan/PlanDriver.h"
#include "pipe/Transforms/Passes.h"
#include "pipe/Transforms/StagePasses.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// How far a compilation goes.
enum class EmitLevel {
  /// The prepared module, planned: `pipe.plan` and `pipe.stage` are set.
  Plan,
  /// The program a target lowers: prepared and, in training, differentiated
  /// with its optimizer step.
  Program,
  /// A pipeline: planned, then (in training) differentiated, then split
  /// into pipe.stage ops with send/recv, recomputation and a verified
  /// schedule.
  Pipeline,
};

/// Everything the pipelines need to know, set from the command line.
struct CompileOptions {
  /// A training step rather than an inference pipeline.
  bool train = false;
  /// With `train`: the result to train on, and parameters to keep fixed.
  std::string loss;
  std::vector<std::string> freeze;
  /// Without `train`: rewrite training-mode ops into their inference form.
  /// Off for a module that already returns gradients (a training program
  /// given as IR), whose forward pass keeps its training-mode ops.
  bool inferenceMode = true;
  /// With `inferenceMode`, for a program of one stage on the CPU target:
  /// its channels-last layout (--pipe-channels-last). Pipelines of several
  /// stages keep NCHW: the pass's rewrites may erase an unused pipe.recv.
  bool channelsLast = false;
  OptimizerOptions optimizer;
  PlanRequest plan;
};

/// Readies an imported module: with `train` picks the loss and the
/// trainable parameters; canonicalization and CSE; without `train`,
/// inference mode.
void buildPreparePipeline(OpPassManager &pm, const CompileOptions &options);

/// Adds the gradients of the loss, the running statistics' updates and the
/// optimizer step (@update).
void buildTrainingPipeline(OpPassManager &pm, const CompileOptions &options);

/// Splits a planned (and in training, differentiated) module into stages:
/// partition, send/recv, recomputation, one pipe.stage per stage, the
/// schedule, and its proof.
void buildStagePipeline(OpPassManager &pm);

/// Everything from an imported module to `level`.
void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options,
                          EmitLevel level);

/// Registers the pipelines with the pass registry.
void registerPipePipelines();

} // namespace pipe
} // namespace mlir

#endif // PIPE_PIPELINES_PIPELINES_H
