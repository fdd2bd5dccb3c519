//===- ScheduleStages.cpp - --pipe-schedule: each stage's program ---------===//

#include "pipe/Transforms/StagePasses.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Plan/Simulator.h"

#include "StagePrograms.h"

#define DEBUG_TYPE "pipe-schedule"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_SCHEDULESTAGES
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct ScheduleStagesPass : pipe::impl::ScheduleStagesBase<ScheduleStagesPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void ScheduleStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan) {
    module.emitError("--pipe-schedule needs a plan (pipe.plan); run "
                     "--pipe-plan first");
    return signalPassFailure();
  }
  if (!schedule.empty()) {
    std::optional<Schedule> chosen = symbolizeSchedule(schedule);
    if (!chosen) {
      module.emitError("--pipe-schedule: unknown schedule '")
          << schedule << "' (known: gpipe, 1f1b)";
      return signalPassFailure();
    }
    plan =
        PlanAttr::get(context, *chosen, plan.getMicrobatches(),
                      plan.getTraining(), plan.getStages(), plan.getReport());
    module->setAttr(kPlanAttrName, plan);
  }
  unsigned numStages = plan.getNumStages();
  SmallVector<StageOp> stages(module.getOps<StageOp>());
  if (stages.size() != numStages) {
    module.emitError("the plan has ")
        << numStages << " stages, but the module has " << stages.size()
        << " pipe.stage ops; run --pipe-split-stages first";
    return signalPassFailure();
  }
  llvm::sort(stages,
             [](StageOp a, StageOp b) { return a.getIndex() < b.getIndex(); });
  std::vector<StageProgram> programs;
  std::vector<SmallVector<SmallVector<Operation *>>> ops(numStages);
  for (auto [index, stage] : llvm::enumerate(stages)) {
    if (stage.getIndex() != static_cast<int64_t>(index)) {
      stage.emitOpError("stages must be numbered 0 to ")
          << numStages - 1 << " in the order of the plan";
      return signalPassFailure();
    }
    StageProgram program;
    auto addStep = [&](Phase phase, unsigned microbatch) -> LogicalResult {
      ops[index].emplace_back();
      FailureOr<ScheduledStep> step =
          readStep(stage, phase, microbatch, ops[index].back());
      if (failed(step))
        return failure();
      program.steps.push_back(std::move(*step));
      return success();
    };
    for (ProgramStep step :
         stageProgram(plan.getSchedule(), plan.getTraining(), index, numStages,
                      plan.getMicrobatches()))
      if (failed(addStep(step.phase, step.microbatch)))
        return signalPassFailure();
    if (plan.getTraining() && failed(addStep(Phase::Update, 0)))
      return signalPassFailure();
    programs.push_back(std::move(program));
  }
  if (std::optional<ScheduleFailure> failure = planSends(programs)) {
    ops[failure->stage][failure->at->step][failure->at->transfer]->emitError(
        "no schedule of the transfers exists: ")
        << failure->message;
    return signalPassFailure();
  }
  for (auto [stage, program] : llvm::zip(stages, programs))
    writeProgram(stage, program);
}
