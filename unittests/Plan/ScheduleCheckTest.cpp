//===- ScheduleCheckTest.cpp - the symbolic run of stage programs ---------===//

#include "pipe/Plan/ScheduleCheck.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pipe;

namespace {

/// The programs of a chain of `numStages` stages under `schedule`: each
/// forward pass receives its activation from the stage before and sends
/// to the stage after, each backward pass the other way round. With
/// `skip`, stage 0 also sends every activation straight to the last stage
/// (a skip connection) and receives its gradient back from there.
std::vector<StageProgram> chainPrograms(Schedule schedule, unsigned numStages,
                                        unsigned microbatches,
                                        bool skip = false) {
  std::vector<StageProgram> programs(numStages);
  unsigned last = numStages - 1;
  for (unsigned s = 0; s < numStages; ++s) {
    for (ProgramStep step : stageProgram(schedule, /*training=*/true, s,
                                         numStages, microbatches)) {
      ScheduledStep scheduled{step.phase, step.microbatch, {}};
      bool forward = step.phase == Phase::Forward;
      auto add = [&](bool send, unsigned peer, int64_t channel) {
        scheduled.transfers.push_back({send, peer, channel, "tensor<4xf32>"});
      };
      if (forward) {
        if (s > 0)
          add(false, s - 1, 2 * (s - 1));
        if (skip && s == last && last > 1)
          add(false, 0, 1000);
        if (s < last)
          add(true, s + 1, 2 * s);
        if (skip && s == 0 && last > 1)
          add(true, last, 1000);
      } else {
        if (s < last)
          add(false, s + 1, 2 * s + 1);
        if (skip && s == 0 && last > 1)
          add(false, last, 1001);
        if (s > 0)
          add(true, s - 1, 2 * (s - 1) + 1);
        if (skip && s == last && last > 1)
          add(true, 0, 1001);
      }
      programs[s].steps.push_back(std::move(scheduled));
    }
    programs[s].steps.push_back({Phase::Update, 0, {}});
  }
  return programs;
}

/// Posts every step's sends with the next step's receives: the obvious
/// runtime, which planSends improves on.
void postWithNextStep(std::vector<StageProgram> &programs) {
  for (StageProgram &program : programs) {
    program.posts.assign(program.steps.size() + 1, {});
    for (auto [i, step] : llvm::enumerate(program.steps))
      for (auto [t, transfer] : llvm::enumerate(step.transfers))
        if (transfer.send)
          program.posts[i + 1].push_back({unsigned(i), unsigned(t)});
  }
}

/// GPipe and 1F1B, as the simulator replays them, with the sends posted
/// as planSends decides, are deadlock-free under unbuffered sends, with and
/// without a skip connection.
TEST(ScheduleCheck, GPipeAndOneFOneBHold) {
  for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB})
    for (unsigned numStages = 1; numStages <= 6; ++numStages)
      for (unsigned microbatches : {1u, 2u, 3u, 4u, 8u})
        for (bool skip : {false, true}) {
          auto programs =
              chainPrograms(schedule, numStages, microbatches, skip);
          std::optional<ScheduleFailure> failure = planSends(programs);
          if (!failure)
            failure = checkSchedule(programs);
          EXPECT_FALSE(failure.has_value())
              << stringifySchedule(schedule).str() << " S=" << numStages
              << " M=" << microbatches << " skip=" << skip << ": "
              << (failure ? failure->message : "");
        }
}

/// Posting each step's sends with the next step's receives deadlocks 1F1B
/// with a skip connection over three stages: the last stage sends the skip
/// gradient of its first backward pass while the first stage is still in
/// its warm-up, and blocks there. The check finds it; planSends's posts
/// do not have it.
TEST(ScheduleCheck, NaivePostsDeadlockOnASkipConnection) {
  auto programs = chainPrograms(Schedule::OneFOneB, 4, 4, /*skip=*/true);
  postWithNextStep(programs);
  std::optional<ScheduleFailure> failure = checkSchedule(programs);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->message.find("deadlock"), std::string::npos)
      << failure->message;
  // Without the skip connection the obvious posts hold.
  programs = chainPrograms(Schedule::OneFOneB, 4, 4);
  postWithNextStep(programs);
  EXPECT_FALSE(checkSchedule(programs).has_value());
}

/// Where each stage receives before it sends to a stage that does the
/// same, there is no order to run them in: planSends says so, naming a
/// stage and its receive.
TEST(ScheduleCheck, ReceiveBeforeSendCycleHasNoSchedule) {
  std::vector<StageProgram> programs(2);
  for (unsigned s = 0; s < 2; ++s) {
    programs[s].steps = {
        {Phase::Forward, 0, {{false, 1 - s, 7, "t"}, {true, 1 - s, 7, "t"}}}};
  }
  std::optional<ScheduleFailure> failure = planSends(programs);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->message.find("can never run its step forward 0"),
            std::string::npos)
      << failure->message;
  ASSERT_TRUE(failure->at.has_value());
  EXPECT_EQ(failure->at->step, 0u);
}

/// A stage that runs two microbatches in swapped order is a mismatch, not
/// a hang.
TEST(ScheduleCheck, SwappedMicrobatchesAreAMismatch) {
  auto programs = chainPrograms(Schedule::GPipe, 3, 4);
  std::swap(programs[1].steps[0].microbatch, programs[1].steps[1].microbatch);
  std::optional<ScheduleFailure> failure = planSends(programs);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->message.find("would be received as"), std::string::npos)
      << failure->message;
}

/// A send without a receive is reported where it is.
TEST(ScheduleCheck, UnmatchedSendIsNamed) {
  std::vector<StageProgram> programs(2);
  programs[0].steps = {
      {Phase::Forward, 0, {{true, 1, 0, "t"}, {true, 1, 1, "t"}}}};
  programs[1].steps = {{Phase::Forward, 0, {{false, 0, 0, "t"}}}};
  std::optional<ScheduleFailure> failure = planSends(programs);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->stage, 0u);
  ASSERT_TRUE(failure->at.has_value());
  EXPECT_EQ(failure->at->transfer, 1u);
}

/// Posts that break the rules are caught: a send posted twice, one posted
/// before its step ran, one never posted.
TEST(ScheduleCheck, BadPostsAreCaught) {
  auto programs = chainPrograms(Schedule::GPipe, 2, 2);
  ASSERT_FALSE(planSends(programs).has_value());
  ASSERT_FALSE(checkSchedule(programs).has_value());
  auto twice = programs;
  twice[0].posts.back().push_back(twice[0].posts[1].front());
  ASSERT_TRUE(checkSchedule(twice).has_value());
  EXPECT_NE(checkSchedule(twice)->message.find("posted twice"),
            std::string::npos);
  auto early = programs;
  TransferRef first = early[0].posts[1].front();
  early[0].posts[1].erase(early[0].posts[1].begin());
  early[0].posts[0].push_back(first);
  ASSERT_TRUE(checkSchedule(early).has_value());
  EXPECT_NE(checkSchedule(early)->message.find("before its step"),
            std::string::npos);
  auto never = programs;
  never[0].posts[1].erase(never[0].posts[1].begin());
  ASSERT_TRUE(checkSchedule(never).has_value());
  EXPECT_NE(checkSchedule(never)->message.find("never posted"),
            std::string::npos);
}

} // namespace
