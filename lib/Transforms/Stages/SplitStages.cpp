//===- SplitStages.cpp - --pipe-split-stages: one pipe.stage per stage ----===//
//
// Moves the staged, communicating training step into one pipe.stage per
// stage with its forward, backward and update functions. What a stage's
// backward pass reads of its forward pass becomes the stash: results of
// @forward and arguments of @backward.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/StagePasses.h"
#include "pipe/Transforms/Stages.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "pipe-split-stages"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_SPLITSTAGES
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
/// Builds one function of a stage from ops of a source function: their
/// operands become arguments where they are the source's arguments or come
/// from elsewhere (the stash), and constants and parameter reads are
/// copied in.
class StageFunctionBuilder {
public:
  StageFunctionBuilder(OpBuilder &outer, Location loc, StringRef name,
                       func::FuncOp source)
      : source(source), builder(outer.getContext()) {
    func =
        func::FuncOp::create(outer, loc, name, outer.getFunctionType({}, {}));
    builder.setInsertionPointToStart(func.addEntryBlock());
  }

  /// Adds an argument for `value` with `attrs`.
  void addArgument(Value value, DictionaryAttr attrs) {
    BlockArgument argument =
        func.getBody().front().addArgument(value.getType(), value.getLoc());
    mapping.map(value, argument);
    argAttrs.push_back(attrs);
  }

  /// Adds the source's arguments that `ops` read, in the source's order.
  void addSourceArguments(ArrayRef<Operation *> ops) {
    llvm::SmallSetVector<unsigned, 8> used;
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (auto argument = dyn_cast<BlockArgument>(operand);
              argument && argument.getOwner() == &source.getBody().front())
            used.insert(argument.getArgNumber());
      });
    SmallVector<unsigned> sorted(used.begin(), used.end());
    llvm::sort(sorted);
    for (unsigned index : sorted)
      addArgument(source.getArgument(index), source.getArgAttrDict(index));
  }

  /// Copies `op` in, with what it reads; fails on a value from another
  /// stage or phase that no argument provides.
  LogicalResult clone(Operation *op) {
    for (Value operand : op->getOperands())
      if (failed(resolve(operand, op)))
        return failure();
    Operation *copy = builder.clone(*op, mapping);
    copy->removeAttr(kStageAttrName);
    copy->removeAttr(kPhaseAttrName);
    return success();
  }

  /// Copies `ops` in, in order.
  LogicalResult cloneAll(ArrayRef<Operation *> ops) {
    for (Operation *op : ops)
      if (failed(clone(op)))
        return failure();
    return success();
  }

  /// Adds a result: the copy of `value` here (copying in a constant or
  /// parameter read), with `attrs`; `user` is the op that reads it.
  LogicalResult addResult(Value value, DictionaryAttr attrs, Operation *user) {
    if (failed(resolve(value, user)))
      return failure();
    results.push_back(mapping.lookup(value));
    resultAttrs.push_back(attrs);
    return success();
  }

  /// Returns the results and sets the function's type.
  func::FuncOp finish() {
    func::ReturnOp::create(builder, func.getLoc(), results);
    func.setType(
        builder.getFunctionType(func.getBody().front().getArgumentTypes(),
                                ValueRange(results).getTypes()));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(resultAttrs);
    return func;
  }

private:
  LogicalResult resolve(Value value, Operation *user) {
    if (mapping.contains(value))
      return success();
    Operation *producer = value.getDefiningOp();
    if (producer && isUnstaged(producer)) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&func.getBody().front());
      builder.clone(*producer, mapping);
      return success();
    }
    return user->emitError("reads a value of another stage or phase that "
                           "is neither sent nor stashed");
  }

  func::FuncOp source;
  OpBuilder builder;
  func::FuncOp func;
  IRMapping mapping;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  SmallVector<Value> results;
};

struct SplitStagesPass : pipe::impl::SplitStagesBase<SplitStagesPass> {
  void runOnOperation() override;

  /// Builds stage `index` into `stage`.
  LogicalResult buildStage(StageOp stage, int64_t index, func::FuncOp main,
                           func::FuncOp update);
};
} // namespace

/// The attributes of result `index` of `func` without its stage.
static DictionaryAttr attrsOfResult(func::FuncOp func, unsigned index) {
  NamedAttrList list(func.getResultAttrDict(index));
  list.erase(kStageAttrName);
  return list.getDictionary(func.getContext());
}

/// The stage of result `index` of `func`.
static std::optional<int64_t> resultStage(func::FuncOp func, unsigned index) {
  if (auto stage = func.getResultAttrOfType<IntegerAttr>(index, kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}

LogicalResult SplitStagesPass::buildStage(StageOp stage, int64_t index,
                                          func::FuncOp main,
                                          func::FuncOp update) {
  MLIRContext *context = &getContext();
  OpBuilder builder = OpBuilder::atBlockEnd(stage.getBodyBlock());
  Builder attrs(context);
  Block &body = main.getBody().front();
  auto mainReturn = cast<func::ReturnOp>(body.getTerminator());

  SmallVector<Operation *> forwardOps, backwardOps;
  for (Operation &op : body.without_terminator())
    if (stageOf(&op) == index)
      (phaseOf(&op) == Phase::Forward ? forwardOps : backwardOps)
          .push_back(&op);
  llvm::DenseSet<Operation *> forwardSet(forwardOps.begin(), forwardOps.end());

  // The stash: forward values of this stage its backward pass reads.
  llvm::SetVector<Value> stash;
  for (Operation *op : backwardOps)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *producer = operand.getDefiningOp();
            producer && forwardSet.contains(producer))
          stash.insert(operand);
    });

  auto stashAttrs = [&](int64_t j) {
    return attrs.getDictionaryAttr(
        attrs.getNamedAttr(kStashAttrName, attrs.getI64IntegerAttr(j)));
  };

  // @forward: outputs (or the loss), the stash, then what it assigns.
  StageFunctionBuilder forward(builder, main.getLoc(), "forward", main);
  forward.addSourceArguments(forwardOps);
  if (failed(forward.cloneAll(forwardOps)))
    return failure();
  SmallVector<unsigned> assigns, backwardResults;
  for (auto [i, value] : llvm::enumerate(mainReturn.getOperands())) {
    if (resultStage(main, i) != index)
      continue;
    Operation *producer = value.getDefiningOp();
    bool computedForward = !producer
                               ? true
                               : forwardSet.contains(producer) ||
                                     (isUnstaged(producer) &&
                                      !main.getResultAttr(i, kGradOfAttrName));
    if (!computedForward)
      backwardResults.push_back(i);
    else if (main.getResultAttr(i, kAssignAttrName))
      assigns.push_back(i);
    else if (failed(
                 forward.addResult(value, attrsOfResult(main, i), mainReturn)))
      return failure();
  }
  for (auto [j, value] : llvm::enumerate(stash))
    if (failed(forward.addResult(value, stashAttrs(j), mainReturn)))
      return failure();
  for (unsigned i : assigns)
    if (failed(forward.addResult(mainReturn.getOperand(i),
                                 attrsOfResult(main, i), mainReturn)))
      return failure();
  forward.finish();

  if (!update)
    return success();

  // @backward: the graph inputs it reads, then the stash; the gradients.
  StageFunctionBuilder backward(builder, main.getLoc(), "backward", main);
  backward.addSourceArguments(backwardOps);
  for (auto [j, value] : llvm::enumerate(stash))
    backward.addArgument(value, stashAttrs(j));
  if (failed(backward.cloneAll(backwardOps)))
    return failure();
  for (unsigned i : backwardResults)
    if (failed(backward.addResult(mainReturn.getOperand(i),
                                  attrsOfResult(main, i), mainReturn)))
      return failure();
  backward.finish();

  // @update: the gradients of the parameters this stage owns and the step.
  Block &updateBody = update.getBody().front();
  auto updateReturn = cast<func::ReturnOp>(updateBody.getTerminator());
  SmallVector<Operation *> updateOps;
  for (Operation &op : updateBody.without_terminator())
    if (stageOf(&op) == index)
      updateOps.push_back(&op);
  StageFunctionBuilder step(builder, update.getLoc(), "update", update);
  step.addSourceArguments(updateOps);
  if (failed(step.cloneAll(updateOps)))
    return failure();
  for (auto [i, value] : llvm::enumerate(updateReturn.getOperands()))
    if (resultStage(update, i) == index &&
        failed(step.addResult(value, attrsOfResult(update, i), updateReturn)))
      return failure();
  step.finish();
  return success();
}

/// Copies into `stage` the parameters its functions read or write.
static void copyParameters(StageOp stage, ModuleOp module) {
  llvm::SetVector<StringAttr> names;
  stage.walk(
      [&](ParamRefOp ref) { names.insert(ref.getNameAttr().getAttr()); });
  for (auto func : stage.getBodyBlock()->getOps<func::FuncOp>())
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto assigned =
              func.getResultAttrOfType<FlatSymbolRefAttr>(i, kAssignAttrName))
        names.insert(assigned.getAttr());
  OpBuilder builder = OpBuilder::atBlockBegin(stage.getBodyBlock());
  for (ParameterOp parameter : module.getOps<ParameterOp>())
    if (names.contains(parameter.getSymNameAttr())) {
      Operation *copy = builder.clone(*parameter);
      copy->removeAttr(kStageAttrName);
    }
}

void SplitStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!plan || !main) {
    module.emitError("--pipe-split-stages needs a planned, partitioned "
                     "@main; run --pipe-plan, --pipe-partition and "
                     "--pipe-insert-comm first");
    return signalPassFailure();
  }
  auto update = module.lookupSymbol<func::FuncOp>("update");
  if (plan.getTraining() != static_cast<bool>(update)) {
    module.emitError("the plan is for ")
        << (plan.getTraining() ? "training, but the module has no @update"
                               : "inference, but the module has an @update");
    return signalPassFailure();
  }
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (unsigned index = 0, e = plan.getNumStages(); index < e; ++index) {
    StagePlanAttr stagePlan = plan.getStage(index);
    auto stage = StageOp::create(builder, module.getLoc(),
                                 "stage" + std::to_string(index), index,
                                 stagePlan.getDevice().getValue());
    if (failed(buildStage(stage, index, main, update)))
      return signalPassFailure();
    copyParameters(stage, module);
  }
  main.erase();
  if (update)
    update.erase();
  for (ParameterOp parameter :
       llvm::make_early_inc_range(module.getOps<ParameterOp>()))
    parameter.erase();
}
