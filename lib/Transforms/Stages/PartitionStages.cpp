//===- PartitionStages.cpp - --pipe-partition: stage and phase per op -----===//
//
// Extends the plan, which covers the forward ops of @main, to the whole
// training step: every gradient op, every result and the optimizer update
// of every parameter gets its stage, and every op of @main its phase.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/StagePasses.h"
#include "pipe/Transforms/Stages.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "pipe-partition"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_PARTITIONSTAGES
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct PartitionStagesPass
    : pipe::impl::PartitionStagesBase<PartitionStagesPass> {
  void runOnOperation() override;

  /// Stages the ops of @main; false after an error.
  LogicalResult partitionMain(func::FuncOp main, PlanAttr plan);
  /// Stages @update by the owners of the gradients it takes.
  LogicalResult partitionUpdate(func::FuncOp main, func::FuncOp update);
};
} // namespace

/// The ops of `main` that its non-gradient results depend on.
static llvm::SetVector<Operation *> forwardOps(func::FuncOp main) {
  llvm::SetVector<Operation *> forward;
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  BackwardSliceOptions options;
  options.inclusive = true;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    if (main.getResultAttr(i, kGradOfAttrName))
      continue;
    if (Operation *op = value.getDefiningOp())
      (void)getBackwardSlice(op, &forward, options);
  }
  return forward;
}

LogicalResult PartitionStagesPass::partitionMain(func::FuncOp main,
                                                 PlanAttr plan) {
  MLIRContext *context = &getContext();
  Builder builder(context);
  Block &body = main.getBody().front();
  llvm::SetVector<Operation *> forward = forwardOps(main);
  if (!plan.getTraining())
    for (Operation &op : body.without_terminator())
      forward.insert(&op);
  int64_t lastStage = plan.getNumStages() - 1;

  // The stage of each op the plan saw, by location: the gradient ops of a
  // forward op carry its location. A location that ops of several stages
  // share (none at all, after printing without debug info) says nothing.
  llvm::DenseMap<Location, std::optional<int64_t>> stageOfLocation;
  for (Operation &op : body.without_terminator())
    if (std::optional<int64_t> stage = stageOf(&op)) {
      auto [it, inserted] = stageOfLocation.try_emplace(op.getLoc(), stage);
      if (!inserted && it->second != stage)
        it->second = std::nullopt;
    }

  // Gradient ops found neither by location nor by the gradients they read
  // float: they go to the latest stage that reads them, so that what they
  // compute still flows from later stages to earlier ones.
  SmallVector<Operation *> floating;
  auto setStage = [&](Operation *op, int64_t stage, Phase phase) {
    op->setAttr(kStageAttrName, builder.getI64IntegerAttr(stage));
    op->setAttr(kPhaseAttrName, PhaseAttr::get(context, phase));
  };
  for (Operation &op : body.without_terminator()) {
    if (isUnstaged(&op)) {
      op.removeAttr(kStageAttrName);
      op.removeAttr(kPhaseAttrName);
      continue;
    }
    bool isForward = forward.contains(&op);
    // The latest stage of the forward values and the earliest of the
    // gradients the op reads.
    std::optional<int64_t> latestForward, earliestBackward;
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      std::optional<int64_t> stage =
          producer ? stageOf(producer) : std::nullopt;
      if (!stage)
        continue;
      if (phaseOf(producer) == Phase::Forward)
        latestForward = std::max(latestForward.value_or(0), *stage);
      else
        earliestBackward =
            std::min(earliestBackward.value_or(lastStage), *stage);
    }
    if (isForward) {
      int64_t stage = stageOf(&op).value_or(latestForward.value_or(0));
      if (latestForward && stage < *latestForward)
        return op.emitError("the plan puts this op on stage ")
               << stage << ", but it reads a value of stage " << *latestForward
               << "; forward values flow from earlier stages to later ones";
      setStage(&op, stage, Phase::Forward);
      continue;
    }
    op.removeAttr(kStageAttrName);
    auto it = stageOfLocation.find(op.getLoc());
    if (it != stageOfLocation.end() && it->second)
      setStage(&op, std::min(*it->second, earliestBackward.value_or(lastStage)),
               Phase::Backward);
    else if (earliestBackward)
      setStage(&op, *earliestBackward, Phase::Backward);
    else
      floating.push_back(&op);
  }
  for (Operation *op : llvm::reverse(floating)) {
    std::optional<int64_t> latestReader;
    for (Operation *user : op->getUsers())
      latestReader =
          std::max(latestReader.value_or(0), stageOf(user).value_or(lastStage));
    setStage(op, latestReader.value_or(lastStage), Phase::Backward);
  }

  // Each result on the stage that computes it; one that an unstaged op
  // computes (a constant zero gradient), on the last stage.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Operation *producer = value.getDefiningOp();
    std::optional<int64_t> stage = producer ? stageOf(producer) : std::nullopt;
    main.setResultAttr(i, kStageAttrName,
                       builder.getI64IntegerAttr(stage.value_or(lastStage)));
  }
  return success();
}

LogicalResult PartitionStagesPass::partitionUpdate(func::FuncOp main,
                                                   func::FuncOp update) {
  ModuleOp module = getOperation();
  Builder builder(&getContext());
  // @update takes @main's gradients in order, then the step.
  SmallVector<int64_t> ownerOfArgument;
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
    if (auto of =
            main.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradOfAttrName)) {
      int64_t owner =
          main.getResultAttrOfType<IntegerAttr>(i, kStageAttrName).getInt();
      ownerOfArgument.push_back(owner);
      if (auto parameter = module.lookupSymbol<ParameterOp>(of.getAttr()))
        parameter->setAttr(kStageAttrName, builder.getI64IntegerAttr(owner));
    }
  if (update.getNumArguments() != ownerOfArgument.size() + 1)
    return update.emitError("@update takes ")
           << update.getNumArguments() << " arguments, but @main returns "
           << ownerOfArgument.size()
           << " gradients; @update takes them and the step";

  Block &body = update.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    // The update of one parameter reads one gradient: its owner's.
    llvm::SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.inclusive = true;
    if (Operation *op = value.getDefiningOp())
      (void)getBackwardSlice(op, &slice, options);
    std::optional<int64_t> owner;
    for (Operation *op : slice)
      for (Value operand : op->getOperands())
        if (auto argument = dyn_cast<BlockArgument>(operand);
            argument && argument.getArgNumber() < ownerOfArgument.size()) {
          int64_t stage = ownerOfArgument[argument.getArgNumber()];
          if (owner && *owner != stage)
            return op->emitError("this update reads the gradients of "
                                 "parameters owned by stages ")
                   << *owner << " and " << stage
                   << "; each parameter's update runs on its owner alone";
          owner = stage;
        }
    if (!owner)
      return update.emitError("result ")
             << i << " of @update reads no gradient; nothing says which "
             << "stage it belongs to";
    for (Operation *op : slice)
      if (!isUnstaged(op))
        op->setAttr(kStageAttrName, builder.getI64IntegerAttr(*owner));
    update.setResultAttr(i, kStageAttrName, builder.getI64IntegerAttr(*owner));
    if (auto assigned =
            update.getResultAttrOfType<FlatSymbolRefAttr>(i, kAssignAttrName))
      if (auto parameter = module.lookupSymbol<ParameterOp>(assigned.getAttr()))
        parameter->setAttr(kStageAttrName, builder.getI64IntegerAttr(*owner));
  }
  return success();
}

void PartitionStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan) {
    module.emitError("--pipe-partition needs a plan (pipe.plan); run "
                     "--pipe-plan first");
    return signalPassFailure();
  }
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main) {
    module.emitError("--pipe-partition: the module has no func.func @main");
    return signalPassFailure();
  }
  if (failed(partitionMain(main, plan)))
    return signalPassFailure();
  if (auto update = module.lookupSymbol<func::FuncOp>("update"))
    if (failed(partitionUpdate(main, update)))
      return signalPassFailure();
}
