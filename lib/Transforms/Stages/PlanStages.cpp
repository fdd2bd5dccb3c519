//===- PlanStages.cpp - --pipe-plan: plan the pipeline, record it ---------===//
//
// Builds the planning problem from the module and the options, hands it to
// the planner (lib/Plan), which searches, checks and simulates the plan,
// and records the plan in the IR for every later pass.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/PlanStages.h"
#include "pipe/Transforms/StagePasses.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#define DEBUG_TYPE "pipe-plan"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_PLANSTAGES
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct PlanStagesPass : pipe::impl::PlanStagesBase<PlanStagesPass> {
  using Base::Base;
  explicit PlanStagesPass(PlanRequest request)
      : request(std::move(request)), fromRequest(true) {}

  void runOnOperation() override;

private:
  /// The request from the options; false after an error naming the option.
  FailureOr<PlanRequest> requestFromOptions();

  PlanRequest request;
  bool fromRequest = false;
};
} // namespace

FailureOr<PlanRequest> PlanStagesPass::requestFromOptions() {
  ModuleOp module = getOperation();
  PlanRequest result;
  result.clusterPath = cluster;
  result.timelinePath = timeline;
  result.cutAfter.assign(cutAfter.begin(), cutAfter.end());
  result.deviceOrder.assign(deviceOrder.begin(), deviceOrder.end());
  PlanOptions &options = result.options;
  options.training = training;
  options.microbatches = microbatches;
  options.stages = stages;
  options.replaySteps = replaySteps;
  if (exactLayers)
    options.maxExactLayers = exactLayers.getValue();
  auto bad = [&](StringRef option, StringRef value, StringRef known) {
    return module.emitError("--pipe-plan: unknown ")
           << option << " '" << value << "' (known: " << known << ")";
  };
  if (std::optional<Schedule> parsed = symbolizeSchedule(schedule))
    options.schedule = *parsed;
  else
    return bad("schedule", schedule, "gpipe, 1f1b");
  if (recompute != "auto") {
    options.recompute = symbolizeRecompute(recompute);
    if (!options.recompute)
      return bad("recompute", recompute, "auto, none, selective, full");
  }
  if (optimizer == "none")
    options.optimizer = Optimizer::None;
  else if (optimizer == "sgd")
    options.optimizer = Optimizer::SGD;
  else if (optimizer == "sgd-momentum")
    options.optimizer = Optimizer::SGDMomentum;
  else if (optimizer == "adam")
    options.optimizer = Optimizer::Adam;
  else
    return bad("optimizer", optimizer, "none, sgd, sgd-momentum, adam");
  if (precision == "fp32")
    options.precision = Precision::FP32;
  else if (precision == "tf32")
    options.precision = Precision::TF32;
  else if (precision == "bf16")
    options.precision = Precision::BF16;
  else if (precision == "fp16")
    options.precision = Precision::FP16;
  else
    return bad("precision", precision, "fp32, tf32, bf16, fp16");
  if (partition == "auto")
    result.partition = Partition::Auto;
  else if (partition == "uniform")
    result.partition = Partition::Uniform;
  else if (partition == "parameters")
    result.partition = Partition::Parameters;
  else if (partition == "speed-blind")
    result.partition = Partition::SpeedBlind;
  else
    return bad("partition", partition,
               "auto, uniform, parameters, speed-blind");
  if (microbatches < 1 || microbatches > kMaxMicrobatches)
    return module.emitError("--pipe-plan: microbatches must be between 1 and ")
           << kMaxMicrobatches;
  return result;
}

void PlanStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (!fromRequest) {
    FailureOr<PlanRequest> parsed = requestFromOptions();
    if (failed(parsed))
      return signalPassFailure();
    request = std::move(*parsed);
  }
  llvm::Expected<PlanResult> result = planModule(module, request);
  if (!result) {
    module.emitError(llvm::toString(result.takeError()));
    return signalPassFailure();
  }
  if (!request.timelinePath.empty())
    if (llvm::Error error = writeTimeline(*result, request.timelinePath)) {
      module.emitError(llvm::toString(std::move(error)));
      return signalPassFailure();
    }
  recordPlan(module, *result, request.options);
}

std::unique_ptr<Pass> mlir::pipe::createPlanStages(PlanRequest request) {
  return std::make_unique<PlanStagesPass>(std::move(request));
}
