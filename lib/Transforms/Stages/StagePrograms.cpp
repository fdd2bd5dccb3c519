//===- StagePrograms.cpp - stage programs in the IR and in lib/Plan -------===//

#include "StagePrograms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::pipe;

/// The function of a stage that runs steps of `phase`.
static StringRef functionName(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Update:
    return "update";
  }
  return "";
}

FailureOr<ScheduledStep>
mlir::pipe::readStep(StageOp stage, Phase phase, int64_t microbatch,
                     SmallVectorImpl<Operation *> &ops) {
  auto func = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(stage, functionName(phase)));
  if (!func)
    return stage.emitOpError("has no @") << functionName(phase) << " for its "
                                         << stringifyPhase(phase) << " steps";
  ScheduledStep step;
  step.phase = phase;
  step.microbatch = microbatch;
  ops.clear();
  func.walk([&](Operation *op) {
    StepTransfer transfer;
    std::string type;
    llvm::raw_string_ostream os(type);
    if (auto send = dyn_cast<SendOp>(op)) {
      transfer.send = true;
      transfer.peer = send.getPeer();
      transfer.channel = send.getChannel();
      os << send.getValue().getType();
    } else if (auto recv = dyn_cast<RecvOp>(op)) {
      transfer.peer = recv.getPeer();
      transfer.channel = recv.getChannel();
      os << recv.getType();
    } else {
      return;
    }
    transfer.type = type;
    step.transfers.push_back(std::move(transfer));
    ops.push_back(op);
  });
  return step;
}

FailureOr<StageProgram>
mlir::pipe::readProgram(StageOp stage,
                        SmallVectorImpl<SmallVector<Operation *>> &ops) {
  auto entries = stage->getAttrOfType<ArrayAttr>(kProgramAttrName);
  if (!entries)
    return stage.emitOpError(
        "has no program (pipe.program); run --pipe-schedule first");
  StageProgram program;
  ops.clear();
  // Posts name their step, which comes before them.
  SmallVector<PostAttr> pending;
  auto resolve = [&](PostAttr post) -> FailureOr<TransferRef> {
    for (auto [i, step] : llvm::enumerate(program.steps)) {
      if (step.phase != post.getPhase() ||
          step.microbatch != static_cast<unsigned>(post.getMicrobatch()))
        continue;
      int64_t sends = 0;
      for (auto [t, transfer] : llvm::enumerate(step.transfers))
        if (transfer.send && sends++ == post.getSend())
          return TransferRef{unsigned(i), unsigned(t)};
    }
    return stage.emitOpError("program entry ")
           << post << " names no send of a step that runs before it";
  };
  auto flush = [&]() -> LogicalResult {
    program.posts.emplace_back();
    for (PostAttr post : pending) {
      FailureOr<TransferRef> ref = resolve(post);
      if (failed(ref))
        return failure();
      program.posts.back().push_back(*ref);
    }
    pending.clear();
    return success();
  };
  for (Attribute entry : entries) {
    if (auto post = dyn_cast<PostAttr>(entry)) {
      pending.push_back(post);
      continue;
    }
    auto step = dyn_cast<StepAttr>(entry);
    if (!step)
      return stage.emitOpError("program entry ")
             << entry << " is neither a #pipe.step nor a #pipe.post";
    if (failed(flush()))
      return failure();
    ops.emplace_back();
    FailureOr<ScheduledStep> scheduled =
        readStep(stage, step.getPhase(), step.getMicrobatch(), ops.back());
    if (failed(scheduled))
      return failure();
    program.steps.push_back(std::move(*scheduled));
  }
  if (failed(flush()))
    return failure();
  return program;
}

void mlir::pipe::writeProgram(StageOp stage, const StageProgram &program) {
  MLIRContext *context = stage.getContext();
  SmallVector<Attribute> entries;
  auto addPosts = [&](unsigned k) {
    for (TransferRef ref : program.posts[k]) {
      const ScheduledStep &step = program.steps[ref.step];
      int64_t send = 0;
      for (unsigned t = 0; t < ref.transfer; ++t)
        send += step.transfers[t].send;
      entries.push_back(
          PostAttr::get(context, step.phase, step.microbatch, send));
    }
  };
  for (auto [k, step] : llvm::enumerate(program.steps)) {
    addPosts(k);
    entries.push_back(StepAttr::get(context, step.phase, step.microbatch));
  }
  addPosts(program.steps.size());
  stage->setAttr(kProgramAttrName, ArrayAttr::get(context, entries));
}
