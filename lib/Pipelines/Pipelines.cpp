//===- Pipelines.cpp - the compiler's registered pass pipelines -----------===//

#include "pipe/Pipelines/Pipelines.h"
#include "pipe/Transforms/PlanStages.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::pipe;

void mlir::pipe::buildPreparePipeline(OpPassManager &pm,
                                      const CompileOptions &options) {
  if (options.train) {
    PrepareTrainingOptions prepare;
    prepare.loss = options.loss;
    prepare.freeze.assign(options.freeze.begin(), options.freeze.end());
    pm.addPass(createPrepareTraining(prepare));
  }
  pm.addPass(createCanonicalizerPass());
  // Training-mode batch normalization whose updated statistics the model
  // returns stays.
  if (!options.train && options.inferenceMode)
    pm.addPass(createInferenceMode());
  if (!options.train)
    pm.addPass(createFoldBatchNorm());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::pipe::buildTrainingPipeline(OpPassManager &pm,
                                       const CompileOptions &options) {
  pm.addPass(createAutodiff());
  pm.addPass(createUpdateStatistics());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createOptimizer(options.optimizer));
}

void mlir::pipe::buildStagePipeline(OpPassManager &pm) {
  pm.addPass(createPartitionStages());
  pm.addPass(createInsertComm());
  pm.addPass(createInsertRecompute());
  pm.addPass(createSplitStages());
  pm.addPass(createScheduleStages());
  pm.addPass(createVerifySchedule());
}

/// The CPU target's layout, and CSE for the transposes it duplicates.
static void addChannelsLast(OpPassManager &pm) {
  pm.addPass(createChannelsLast());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::pipe::buildCompilePipeline(OpPassManager &pm,
                                      const CompileOptions &options,
                                      EmitLevel level) {
  buildPreparePipeline(pm, options);
  switch (level) {
  case EmitLevel::Plan:
    pm.addPass(createPlanStages(options.plan));
    return;
  case EmitLevel::Program:
    if (options.train)
      buildTrainingPipeline(pm, options);
    else if (options.channelsLast && options.inferenceMode)
      addChannelsLast(pm);
    return;
  case EmitLevel::Pipeline:
    pm.addPass(createPlanStages(options.plan));
    if (options.train)
      buildTrainingPipeline(pm, options);
    buildStagePipeline(pm);
    return;
  }
}

namespace {
/// The options of the registered pipelines, as pass-pipeline text.
struct PrepareOptions : public PassPipelineOptions<PrepareOptions> {
  Option<bool> train{*this, "train", llvm::cl::desc("Prepare a training step"),
                     llvm::cl::init(false)};
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("With train: the result to train "
                                          "on, by name")};
  ListOption<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("With train: glob patterns of parameters to keep fixed")};
  Option<bool> inferenceMode{
      *this, "inference-mode",
      llvm::cl::desc("Without train: rewrite training-mode ops into their "
                     "inference form"),
      llvm::cl::init(true)};

  CompileOptions compileOptions() const {
    CompileOptions options;
    options.train = train;
    options.loss = loss;
    options.freeze.assign(freeze.begin(), freeze.end());
    options.inferenceMode = inferenceMode;
    return options;
  }
};

struct TrainingOptions : public PassPipelineOptions<TrainingOptions> {
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adam or adamw"),
                                llvm::cl::init("sgd")};
  Option<double> lr{*this, "lr",
                    llvm::cl::desc("Learning rate (-1: the default)"),
                    llvm::cl::init(-1.0)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay (-1: the default)"),
                             llvm::cl::init(-1.0)};

  CompileOptions compileOptions() const {
    CompileOptions options;
    options.train = true;
    options.optimizer.optimizer = optimizer;
    options.optimizer.lr = lr;
    options.optimizer.momentum = momentum;
    options.optimizer.weightDecay = weightDecay;
    return options;
  }
};
} // namespace

void mlir::pipe::registerPipePipelines() {
  PassPipelineRegistration<PrepareOptions>(
      "pipe-prepare",
      "Ready an imported model: loss and trainable parameters (train), "
      "canonicalization, CSE, inference mode (inference)",
      [](OpPassManager &pm, const PrepareOptions &options) {
        buildPreparePipeline(pm, options.compileOptions());
      });
  PassPipelineRegistration<>(
      "pipe-stages",
      "Split a planned module into verified pipeline stages: partition, "
      "send/recv, recomputation, split, schedule and its proof",
      [](OpPassManager &pm) { buildStagePipeline(pm); });
  PassPipelineRegistration<TrainingOptions>(
      "pipe-training",
      "Gradients of the loss, running statistics and the optimizer step",
      [](OpPassManager &pm, const TrainingOptions &options) {
        buildTrainingPipeline(pm, options.compileOptions());
      });
}
