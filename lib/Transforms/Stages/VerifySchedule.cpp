//===- VerifySchedule.cpp - --pipe-verify-schedule: prove it deadlock-free ===//
//
// Reads the programs and transfers of the stages into the problem
// lib/Plan's schedule check solves, and reports a failure on the transfer
// that cannot complete.
//
//===----------------------------------------------------------------------===//

#include "pipe/Transforms/StagePasses.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Plan/ScheduleCheck.h"

#include "StagePrograms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "pipe-verify-schedule"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_VERIFYSCHEDULE
#include "pipe/Transforms/StagePasses.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct VerifySchedulePass : pipe::impl::VerifyScheduleBase<VerifySchedulePass> {
  void runOnOperation() override;
};
} // namespace

void VerifySchedulePass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<StageOp> stages(module.getOps<StageOp>());
  llvm::sort(stages,
             [](StageOp a, StageOp b) { return a.getIndex() < b.getIndex(); });
  std::vector<StageProgram> programs;
  // Per stage and step, the transfer ops, for the error.
  std::vector<SmallVector<SmallVector<Operation *>>> opsOf(stages.size());
  for (auto [index, stage] : llvm::enumerate(stages)) {
    if (stage.getIndex() != static_cast<int64_t>(index)) {
      stage.emitOpError("stages must be numbered 0 to ")
          << stages.size() - 1 << " without gaps; stage " << index
          << " is missing";
      return signalPassFailure();
    }
    FailureOr<StageProgram> program = readProgram(stage, opsOf[index]);
    if (failed(program))
      return signalPassFailure();
    programs.push_back(std::move(*program));
  }
  if (std::optional<ScheduleFailure> failure = checkSchedule(programs)) {
    InFlightDiagnostic diag =
        failure->at
            ? opsOf[failure->stage][failure->at->step][failure->at->transfer]
                  ->emitError()
            : stages[failure->stage].emitOpError();
    diag << "the schedule does not hold: stage " << failure->stage << ": "
         << failure->message;
    return signalPassFailure();
  }
  module->setAttr(kScheduleVerifiedAttrName, UnitAttr::get(&getContext()));
}
