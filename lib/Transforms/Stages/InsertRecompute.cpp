//===- InsertRecompute.cpp - --pipe-insert-recompute ----------------------===//
//
// Trades a stage's stash for time in its backward pass, as the plan says:
// the forward values the backward pass reads are recomputed there, in one
// pipe.recompute region, from what the stage keeps.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/StagePasses.h"
#include "pipe/Transforms/Stages.h"

#include "pipe/Plan/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "pipe-insert-recompute"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_INSERTRECOMPUTE
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct InsertRecomputePass
    : pipe::impl::InsertRecomputeBase<InsertRecomputePass> {
  void runOnOperation() override;

  /// Recomputes in stage `index`'s backward pass what `recompute` drops.
  void recomputeStage(func::FuncOp main, int64_t index, Recompute recompute);
};
} // namespace

/// Whether stage `index` keeps `value`, a forward value it reads, under
/// `recompute`: what it receives or reads from elsewhere it keeps.
static bool isKept(Value value, int64_t index, Recompute recompute) {
  Operation *producer = value.getDefiningOp();
  if (!producer || isa<RecvOp>(producer) || isUnstaged(producer) ||
      stageOf(producer) != index)
    return true;
  return recompute == Recompute::Selective &&
         estimateOpCost(producer).contraction;
}

void InsertRecomputePass::recomputeStage(func::FuncOp main, int64_t index,
                                         Recompute recompute) {
  Block &body = main.getBody().front();
  // The forward values of the stage its backward pass reads and does not
  // keep, in program order, and the first op that reads one: the region
  // goes there, after every value it reads.
  llvm::SetVector<Value> dropped;
  Operation *firstBackward = nullptr;
  for (Operation &op : body.without_terminator()) {
    if (stageOf(&op) != index || phaseOf(&op) != Phase::Backward)
      continue;
    for (Value operand : op.getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && stageOf(producer) == index &&
          phaseOf(producer) == Phase::Forward &&
          !isKept(operand, index, recompute)) {
        dropped.insert(operand);
        if (!firstBackward)
          firstBackward = &op;
      }
  }
  if (dropped.empty())
    return;

  // The forward ops that compute them from what is kept, and what they
  // read of it.
  llvm::SetVector<Operation *> slice;
  llvm::SetVector<Value> kept;
  SmallVector<Value> worklist(dropped.begin(), dropped.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *producer = value.getDefiningOp();
    if (isKept(value, index, recompute)) {
      if (!(producer && isUnstaged(producer)))
        kept.insert(value);
      continue;
    }
    if (!slice.insert(producer))
      continue;
    for (Value operand : producer->getOperands())
      worklist.push_back(operand);
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  OpBuilder builder(firstBackward);
  Location loc = firstBackward->getLoc();
  SmallVector<Value> inputs(kept.begin(), kept.end());
  auto region = RecomputeOp::create(
      builder, loc, ValueRange(dropped.getArrayRef()).getTypes(), inputs);
  region->setAttr(kStageAttrName, builder.getI64IntegerAttr(index));
  region->setAttr(kPhaseAttrName,
                  PhaseAttr::get(&getContext(), Phase::Backward));
  Block *block = builder.createBlock(&region.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, block->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ordered) {
    // Constants and parameter reads come along: the region is isolated.
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && isUnstaged(producer) && !mapping.contains(operand))
        builder.clone(*producer, mapping);
    Operation *copy = builder.clone(*op, mapping);
    copy->removeAttr(kStageAttrName);
    copy->removeAttr(kPhaseAttrName);
  }
  SmallVector<Value> yielded;
  for (Value value : dropped)
    yielded.push_back(mapping.lookup(value));
  YieldOp::create(builder, loc, yielded);

  // The backward pass reads the recomputed values.
  for (auto [value, recomputed] : llvm::zip(dropped, region.getResults()))
    Value(value).replaceUsesWithIf(recomputed, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return user != region && stageOf(user) == index &&
             phaseOf(user) == Phase::Backward;
    });
}

void InsertRecomputePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!plan || !main) {
    module.emitError("--pipe-insert-recompute needs a planned, partitioned "
                     "@main; run --pipe-plan and --pipe-partition first");
    return signalPassFailure();
  }
  for (unsigned index = 0, e = plan.getNumStages(); index < e; ++index)
    if (Recompute recompute = plan.getStage(index).getRecompute();
        recompute != Recompute::None)
      recomputeStage(main, index, recompute);
}
