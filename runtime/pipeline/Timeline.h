//===- Timeline.h - the measured timeline of a stage ------------*- C++ -*-===//
//
// Part of the pipe runtime. With `run --trace FILE`, every stage records
// its steps and its waits for transfers (each on a track of its own) and a
// counter of the bytes it stashes; stage 0 gathers them into one Chrome
// trace, in the format of the planner's simulated timeline.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_PIPELINE_TIMELINE_H
#define PIPE_RUNTIME_PIPELINE_TIMELINE_H

#include <chrono>
#include <cstdint>
#include <string>

namespace pipe_rt {

class Transport;
struct StageTable;

class Timeline {
public:
  using Clock = std::chrono::steady_clock;

  /// Records nothing unless enabled.
  void enable(const StageTable &stage) {
    table = &stage;
    epoch = Clock::now();
  }
  bool enabled() const { return table != nullptr; }
  /// Times are from here on: when the stages start together.
  void start() { epoch = Clock::now(); }

  /// [start, now) as an event: a step, or (`transfer`) a wait.
  void record(const std::string &name, bool transfer, Clock::time_point start);
  /// The bytes the stage stashes from now on.
  void stash(int64_t bytes);

  /// Gathers every stage's events at stage 0, which writes `path`
  /// atomically; an error text, or empty.
  std::string write(Transport &transport, const std::string &path);

private:
  double micros(Clock::time_point time) const {
    return std::chrono::duration<double, std::micro>(time - epoch).count();
  }

  const StageTable *table = nullptr;
  Clock::time_point epoch;
  /// The events, as JSON objects each followed by a comma.
  std::string events;
};

} // namespace pipe_rt

#endif // PIPE_RUNTIME_PIPELINE_TIMELINE_H
