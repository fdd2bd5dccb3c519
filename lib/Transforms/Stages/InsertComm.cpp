//===- InsertComm.cpp - --pipe-insert-comm: send/recv across stages -------===//
//
// Makes every transfer between stages explicit, so that splitting the
// module into stages leaves each stage reading only its own values.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/StagePasses.h"
#include "pipe/Transforms/Stages.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <set>

#define DEBUG_TYPE "pipe-insert-comm"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_INSERTCOMM
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct InsertCommPass : pipe::impl::InsertCommBase<InsertCommPass> {
  void runOnOperation() override;

  /// Sends the values of @main that other stages read.
  LogicalResult insertActivationsAndGradients(func::FuncOp main);
  /// Sends updated parameters from their owners to the stages that read
  /// copies of them.
  LogicalResult insertParameterUpdates(func::FuncOp main, func::FuncOp update);

  /// The next free channel of the module.
  int64_t nextChannel = 0;
};
} // namespace

/// A send of `value` from stage `from` to `to`, and its receive, right after
/// `after`'s position in `builder`. Returns the received value.
static Value transfer(OpBuilder &builder, Location loc, Value value,
                      int64_t from, int64_t to, int64_t channel, Phase phase) {
  MLIRContext *context = builder.getContext();
  auto send = SendOp::create(builder, loc, value, builder.getI64IntegerAttr(to),
                             builder.getI64IntegerAttr(channel),
                             PhaseAttr::get(context, phase));
  send->setAttr(kStageAttrName, builder.getI64IntegerAttr(from));
  auto recv = RecvOp::create(
      builder, loc, value.getType(), builder.getI64IntegerAttr(from),
      builder.getI64IntegerAttr(channel), PhaseAttr::get(context, phase));
  recv->setAttr(kStageAttrName, builder.getI64IntegerAttr(to));
  return recv.getValue();
}

LogicalResult InsertCommPass::insertActivationsAndGradients(func::FuncOp main) {
  Block &body = main.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // Where the backward pass starts: an activation that travels backward
  // (to an earlier stage's backward pass) is sent from there, after every
  // forward value, where a recomputation of it can go too.
  Operation *backwardStart = body.getTerminator();
  for (Operation *op : ops)
    if (phaseOf(op) == Phase::Backward) {
      backwardStart = op;
      break;
    }
  OpBuilder builder(&getContext());
  for (Operation *op : ops) {
    std::optional<int64_t> from = stageOf(op);
    if (!from || isa<SendOp, RecvOp>(op))
      continue;
    // The transfers of `op` follow it in order.
    Operation *last = op;
    for (Value result : op->getResults()) {
      // The readers of each other stage, in stage order.
      std::map<int64_t, SmallVector<OpOperand *>> readers;
      for (OpOperand &use : result.getUses())
        if (std::optional<int64_t> to = stageOf(use.getOwner());
            to && *to != *from)
          readers[*to].push_back(&use);
      for (auto &[to, uses] : readers) {
        Phase phase = phaseOf(op) == Phase::Forward && *from < to
                          ? Phase::Forward
                          : Phase::Backward;
        if (*from < to && phase == Phase::Backward)
          return op->emitError("this gradient op of stage ")
                 << *from << " is read by stage " << to
                 << "; gradients flow from later stages to earlier ones";
        bool late = phase == Phase::Backward && phaseOf(op) == Phase::Forward;
        if (late)
          builder.setInsertionPoint(backwardStart);
        else
          builder.setInsertionPointAfter(last);
        Value received = transfer(builder, op->getLoc(), result, *from, to,
                                  nextChannel++, phase);
        if (!late)
          last = received.getDefiningOp();
        for (OpOperand *use : uses)
          use->set(received);
      }
    }
  }
  return success();
}

LogicalResult InsertCommPass::insertParameterUpdates(func::FuncOp main,
                                                     func::FuncOp update) {
  // The stages that read each parameter in @main.
  llvm::MapVector<StringAttr, std::set<int64_t>> readers;
  for (auto ref : main.getBody().getOps<ParamRefOp>())
    for (Operation *user : ref->getUsers())
      if (std::optional<int64_t> stage = stageOf(user))
        readers[ref.getNameAttr().getAttr()].insert(*stage);

  Block &body = update.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  update.getAllResultAttrs(attrs);
  for (unsigned i = 0, e = results.size(); i < e; ++i) {
    auto assigned =
        update.getResultAttrOfType<FlatSymbolRefAttr>(i, kAssignAttrName);
    auto owner = update.getResultAttrOfType<IntegerAttr>(i, kStageAttrName);
    if (!assigned || !owner)
      continue;
    auto it = readers.find(assigned.getAttr());
    if (it == readers.end())
      continue;
    for (int64_t to : it->second) {
      if (to == owner.getInt())
        continue;
      Value received =
          transfer(builder, ret.getLoc(), results[i], owner.getInt(), to,
                   nextChannel++, Phase::Update);
      results.push_back(received);
      attrs.push_back(builder.getDictionaryAttr(
          {builder.getNamedAttr(kAssignAttrName, assigned),
           builder.getNamedAttr(kStageAttrName,
                                builder.getI64IntegerAttr(to))}));
    }
  }
  if (results.size() == ret.getNumOperands())
    return success();
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  update.setType(FunctionType::get(&getContext(), update.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
  update.setAllResultAttrs(attrs);
  return success();
}

void InsertCommPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || !module->hasAttr(kPlanAttrName)) {
    module.emitError("--pipe-insert-comm needs a planned and partitioned "
                     "@main; run --pipe-plan and --pipe-partition first");
    return signalPassFailure();
  }
  if (failed(insertActivationsAndGradients(main)))
    return signalPassFailure();
  if (auto update = module.lookupSymbol<func::FuncOp>("update"))
    if (failed(insertParameterUpdates(main, update)))
      return signalPassFailure();
}
