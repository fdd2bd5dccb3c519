//===- ScheduleCheck.cpp - post and prove a pipeline's transfers ----------===//

#include "pipe/Plan/ScheduleCheck.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::pipe;

std::string mlir::pipe::describeStep(const ScheduledStep &step) {
  if (step.phase == Phase::Update)
    return "update";
  return llvm::formatv("{0} {1}", stringifyPhase(step.phase), step.microbatch)
      .str();
}

namespace {
/// A transfer anywhere in the pipeline.
struct Place {
  unsigned stage = 0;
  TransferRef ref;
  bool operator<(const Place &other) const {
    return std::tie(stage, ref.step, ref.transfer) <
           std::tie(other.stage, other.ref.step, other.ref.transfer);
  }
};

/// The pairing of every send with its receive: the k-th send from one
/// stage to another with the k-th receive there from it, in the order the
/// stages post them (transfers of one direction match in order, with no
/// tags).
class Pairing {
public:
  explicit Pairing(llvm::ArrayRef<StageProgram> programs)
      : programs(programs) {}

  /// Pairs the transfers in program order (step, then transfer), or with
  /// `posted` in the order the posts put them in: group by group, the sends
  /// of a group in their order among its posts, then its receives. The
  /// first mismatch if any.
  std::optional<ScheduleFailure> pair(bool posted = false);

  Place partner(Place place) const { return partners.at(place); }
  const StepTransfer &at(Place place) const {
    return programs[place.stage]
        .steps[place.ref.step]
        .transfers[place.ref.transfer];
  }
  const ScheduledStep &stepOf(Place place) const {
    return programs[place.stage].steps[place.ref.step];
  }

private:
  llvm::ArrayRef<StageProgram> programs;
  std::map<Place, Place> partners;
};
} // namespace

static ScheduleFailure failAt(Place place, std::string message) {
  return ScheduleFailure{place.stage, place.ref, std::move(message)};
}

std::optional<ScheduleFailure> Pairing::pair(bool posted) {
  unsigned numStages = programs.size();
  // The sends and receives of each direction, in order.
  std::map<std::pair<unsigned, unsigned>, std::vector<Place>> sends, recvs;
  auto add = [&](Place place) -> std::optional<ScheduleFailure> {
    const StepTransfer &transfer = at(place);
    if (transfer.peer >= numStages || transfer.peer == place.stage)
      return failAt(place, llvm::formatv("transfers with stage {0}, which "
                                         "is not another stage of the "
                                         "pipeline",
                                         transfer.peer));
    if (transfer.send)
      sends[{place.stage, transfer.peer}].push_back(place);
    else
      recvs[{transfer.peer, place.stage}].push_back(place);
    return std::nullopt;
  };
  for (unsigned s = 0; s < numStages; ++s) {
    const StageProgram &program = programs[s];
    for (unsigned i = 0, e = program.steps.size(); i <= e; ++i) {
      if (posted && i < program.posts.size())
        for (TransferRef ref : program.posts[i])
          if (ref.step < e &&
              ref.transfer < program.steps[ref.step].transfers.size() &&
              program.steps[ref.step].transfers[ref.transfer].send)
            if (auto failure = add({s, ref}))
              return failure;
      if (i == e)
        break;
      for (auto [t, transfer] : llvm::enumerate(program.steps[i].transfers))
        if (!posted || !transfer.send)
          if (auto failure = add({s, {i, unsigned(t)}}))
            return failure;
    }
  }
  std::set<std::pair<unsigned, unsigned>> directions;
  for (auto &[direction, places] : sends)
    directions.insert(direction);
  for (auto &[direction, places] : recvs)
    directions.insert(direction);
  for (std::pair<unsigned, unsigned> direction : directions) {
    std::vector<Place> &from = sends[direction], &to = recvs[direction];
    auto [source, target] = direction;
    for (unsigned k = 0; k < std::max(from.size(), to.size()); ++k) {
      if (k >= to.size())
        return failAt(from[k],
                      llvm::formatv("send {0} to stage {1} has no receive "
                                    "there: stage {1} receives {2} tensors "
                                    "from stage {3}, which sends {4}",
                                    k, target, to.size(), source, from.size()));
      if (k >= from.size())
        return failAt(to[k],
                      llvm::formatv("receive {0} from stage {1} has no send "
                                    "there: stage {1} sends {2} tensors to "
                                    "stage {3}, which receives {4}",
                                    k, source, from.size(), target, to.size()));
      const StepTransfer &send = at(from[k]), &recv = at(to[k]);
      const ScheduledStep &sendStep = stepOf(from[k]),
                          &recvStep = stepOf(to[k]);
      if (send.channel != recv.channel || send.type != recv.type ||
          sendStep.phase != recvStep.phase ||
          sendStep.microbatch != recvStep.microbatch)
        return failAt(
            from[k],
            llvm::formatv("send {0} to stage {1} ({2}, channel {3}, {4}) "
                          "would be received as {5}, channel {6}, {7}",
                          k, target, describeStep(sendStep), send.channel,
                          send.type, describeStep(recvStep), recv.channel,
                          recv.type));
      partners[from[k]] = to[k];
      partners[to[k]] = from[k];
    }
  }
  return std::nullopt;
}

std::optional<ScheduleFailure>
mlir::pipe::planSends(std::vector<StageProgram> &programs) {
  Pairing pairing(programs);
  if (std::optional<ScheduleFailure> failure = pairing.pair())
    return failure;
  unsigned numStages = programs.size();
  for (StageProgram &program : programs)
    program.posts.assign(program.steps.size() + 1, {});
  // Run the steps with sends buffered, in rounds: in each, every stage
  // whose next step's inputs have all been computed runs it. Before any of
  // them runs, each send one of them receives goes out with the group its
  // sender is at: the earliest that still lets the sender's group complete
  // (a round's steps wait on nothing but steps of earlier rounds).
  std::vector<unsigned> next(numStages, 0);
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<unsigned> ready;
    for (unsigned s = 0; s < numStages; ++s) {
      StageProgram &program = programs[s];
      if (next[s] >= program.steps.size())
        continue;
      const ScheduledStep &step = program.steps[next[s]];
      bool inputsComputed = true;
      for (auto [t, transfer] : llvm::enumerate(step.transfers)) {
        if (transfer.send)
          continue;
        Place send = pairing.partner({s, {next[s], unsigned(t)}});
        inputsComputed &= send.ref.step < next[send.stage];
      }
      if (inputsComputed)
        ready.push_back(s);
    }
    for (unsigned s : ready) {
      const ScheduledStep &step = programs[s].steps[next[s]];
      for (auto [t, transfer] : llvm::enumerate(step.transfers))
        if (!transfer.send) {
          Place send = pairing.partner({s, {next[s], unsigned(t)}});
          programs[send.stage].posts[next[send.stage]].push_back(send.ref);
        }
    }
    for (unsigned s : ready)
      ++next[s];
    progress = !ready.empty();
  }
  for (unsigned s = 0; s < numStages; ++s) {
    if (next[s] >= programs[s].steps.size())
      continue;
    const ScheduledStep &step = programs[s].steps[next[s]];
    for (auto [t, transfer] : llvm::enumerate(step.transfers)) {
      Place place{s, {next[s], unsigned(t)}};
      if (transfer.send ||
          pairing.partner(place).ref.step < next[pairing.partner(place).stage])
        continue;
      Place send = pairing.partner(place);
      return failAt(
          place,
          llvm::formatv("stage {0} can never run its step {1}: it receives "
                        "on channel {2} what stage {3} sends in its step "
                        "{4}, which waits on it in turn",
                        s, describeStep(step), transfer.channel, send.stage,
                        describeStep(pairing.stepOf(send))));
    }
  }
  return std::nullopt;
}

std::optional<ScheduleFailure>
mlir::pipe::checkSchedule(llvm::ArrayRef<StageProgram> programs) {
  unsigned numStages = programs.size();

  // The groups: group k of a stage holds posts[k] and, before its last
  // step, the receives of step k. Every send is posted once, after its step.
  std::vector<std::vector<std::vector<Place>>> groups(numStages);
  std::map<Place, unsigned> groupOf;
  for (unsigned s = 0; s < numStages; ++s) {
    const StageProgram &program = programs[s];
    unsigned numSteps = program.steps.size();
    if (program.posts.size() != numSteps + 1)
      return ScheduleFailure{s, std::nullopt,
                             llvm::formatv("has {0} groups of sends "
                                           "for {1} steps; it needs "
                                           "one per step and one "
                                           "after the last",
                                           program.posts.size(), numSteps)};
    groups[s].resize(numSteps + 1);
    for (unsigned k = 0; k <= numSteps; ++k) {
      for (TransferRef ref : program.posts[k]) {
        Place place{s, ref};
        if (ref.step >= numSteps ||
            ref.transfer >= program.steps[ref.step].transfers.size() ||
            !program.steps[ref.step].transfers[ref.transfer].send)
          return ScheduleFailure{s, std::nullopt,
                                 llvm::formatv("posts a send that "
                                               "is not one: step {0}, "
                                               "transfer {1}",
                                               ref.step, ref.transfer)};
        if (ref.step >= k)
          return failAt(place,
                        llvm::formatv("is posted before its step {0} "
                                      "has computed it",
                                      describeStep(program.steps[ref.step])));
        if (!groupOf.try_emplace(place, k).second)
          return failAt(place, "is posted twice");
        groups[s][k].push_back(place);
      }
      if (k < numSteps)
        for (auto [t, transfer] : llvm::enumerate(program.steps[k].transfers))
          if (!transfer.send) {
            Place place{s, {k, unsigned(t)}};
            groupOf[place] = k;
            groups[s][k].push_back(place);
          }
    }
    for (auto [i, step] : llvm::enumerate(program.steps))
      for (auto [t, transfer] : llvm::enumerate(step.transfers))
        if (transfer.send && !groupOf.count({s, {unsigned(i), unsigned(t)}}))
          return failAt({s, {unsigned(i), unsigned(t)}}, "is never posted");
  }
  // The transport matches in the order the posts put the transfers in.
  Pairing pairing(programs);
  if (std::optional<ScheduleFailure> failure = pairing.pair(/*posted=*/true))
    return failure;

  // The symbolic run: each stage at a group; a transfer completes when its
  // partner is posted in the partner stage's current group.
  std::vector<unsigned> current(numStages, 0);
  std::set<Place> done;
  auto posted = [&](Place place) {
    return current[place.stage] == groupOf.at(place);
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (unsigned s = 0; s < numStages; ++s) {
      if (current[s] >= groups[s].size())
        continue;
      bool complete = true;
      for (Place place : groups[s][current[s]]) {
        if (done.count(place))
          continue;
        Place other = pairing.partner(place);
        if (posted(other)) {
          done.insert(place);
          done.insert(other);
          continue;
        }
        complete = false;
      }
      if (complete) {
        ++current[s];
        progress = true;
      }
    }
  }
  for (unsigned s = 0; s < numStages; ++s) {
    if (current[s] >= groups[s].size())
      continue;
    for (Place place : groups[s][current[s]]) {
      if (done.count(place))
        continue;
      const StepTransfer &transfer = pairing.at(place);
      Place other = pairing.partner(place);
      unsigned otherGroup = current[other.stage];
      unsigned otherSteps = programs[other.stage].steps.size();
      std::string where =
          otherGroup > otherSteps ? "has finished"
          : otherGroup < otherSteps
              ? "waits before its step " +
                    describeStep(programs[other.stage].steps[otherGroup])
              : "waits after its last step";
      return failAt(
          place,
          llvm::formatv("deadlock: stage {0} waits forever to {1} stage {2} "
                        "on channel {3} ({4}), while stage {2} {5}",
                        s, transfer.send ? "send to" : "receive from",
                        transfer.peer, transfer.channel,
                        describeStep(pairing.stepOf(place)), where));
    }
  }
  return std::nullopt;
}
