//===- ScheduleCheck.h - post and prove a pipeline's transfers --*- C++ -*-===//
//
// The transfers of a pipeline under the transport's contract (NCCL's):
// messages between two stages match in order per direction, with no tags; a
// send may block until its receive is posted; the transfers a stage posts
// together form a group, which it waits on as a whole. Each stage runs its
// program of steps (stageProgram, the order the simulator replays); before
// each step it posts that step's receives and some sends of earlier steps as
// one group, and waits for it.
//
// planSends decides which group posts each send; checkSchedule proves the
// result: every send matched by one receive, and a symbolic run of all
// stages that terminates.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_SCHEDULECHECK_H
#define PIPE_PLAN_SCHEDULECHECK_H

#include "pipe/Plan/Simulator.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// One transfer of a step, as a stage's function posts it.
struct StepTransfer {
  bool send = false;
  unsigned peer = 0;
  int64_t channel = 0;
  /// The tensor's type as text: a send and its receive must agree.
  std::string type;
};

/// One step of a stage's program: the forward or backward pass of a
/// microbatch, or the update after the last (Phase::Update).
struct ScheduledStep {
  Phase phase = Phase::Forward;
  unsigned microbatch = 0;
  /// The step's transfers in the order its function has them.
  std::vector<StepTransfer> transfers;
};

/// A transfer of a stage's program: its step and its index in the step.
struct TransferRef {
  unsigned step = 0, transfer = 0;
  bool operator==(const TransferRef &other) const {
    return step == other.step && transfer == other.transfer;
  }
};

/// A stage's program and when it posts its sends.
struct StageProgram {
  std::vector<ScheduledStep> steps;
  /// posts[k], k < steps.size(): the sends posted with the receives of
  /// step k; posts[steps.size()]: the sends posted after the last step.
  /// Each is a send of an earlier step.
  std::vector<std::vector<TransferRef>> posts;
};

/// Where a check failed: the stage and the transfer, for the caller to name
/// the operation, and what is wrong.
struct ScheduleFailure {
  unsigned stage = 0;
  /// The transfer at fault, if the failure is one transfer's.
  std::optional<TransferRef> at;
  std::string message;
};

/// Decides when each stage posts each send. It runs the programs with sends
/// buffered, in rounds: in each, every stage whose next step's inputs have
/// all been computed runs it (any pipeline without a cycle of data
/// dependencies completes this way). A send goes out with the group its
/// stage is at when its receiver is about to run the step that reads it.
/// Fills `posts`; fails on unmatched transfers or a cycle of dependencies.
std::optional<ScheduleFailure> planSends(std::vector<StageProgram> &programs);

/// Proves the programs with their posts: every send is posted once, after
/// its step, and matched by exactly one receive of the same type,
/// microbatch, phase and channel; and a symbolic run of all stages, with
/// unbuffered sends and each group waited on whole, terminates. Returns the
/// first failure.
std::optional<ScheduleFailure>
checkSchedule(llvm::ArrayRef<StageProgram> programs);

/// A step as text: "forward 3", "backward 0", "update".
std::string describeStep(const ScheduledStep &step);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_SCHEDULECHECK_H
