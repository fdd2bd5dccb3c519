//===- Simulator.cpp - event-level replay of a pipeline schedule ----------===//

#include "pipe/Plan/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pipe;

std::vector<ProgramStep> mlir::pipe::stageProgram(Schedule schedule,
                                                  bool training, unsigned stage,
                                                  unsigned numStages,
                                                  unsigned microbatches) {
  std::vector<ProgramStep> program;
  auto forward = [&](unsigned m) { program.push_back({Phase::Forward, m}); };
  auto backward = [&](unsigned m) { program.push_back({Phase::Backward, m}); };
  if (!training || schedule == Schedule::GPipe) {
    for (unsigned m = 0; m < microbatches; ++m)
      forward(m);
    if (training)
      for (unsigned m = 0; m < microbatches; ++m)
        backward(m);
    return program;
  }
  unsigned warmup = std::min(numStages - 1 - stage, microbatches);
  for (unsigned m = 0; m < warmup; ++m)
    forward(m);
  for (unsigned k = 0; k + warmup < microbatches; ++k) {
    forward(warmup + k);
    backward(k);
  }
  for (unsigned m = microbatches - warmup; m < microbatches; ++m)
    backward(m);
  return program;
}

llvm::Expected<Simulation> mlir::pipe::simulate(const PlanProblem &problem,
                                          ArrayRef<StagePlan> plan) {
  const PlanOptions &options = problem.options();
  unsigned numStages = plan.size();
  unsigned m = options.microbatches;
  bool training = options.training;

  std::vector<StageCost> costs;
  std::vector<double> cut(numStages, 0);
  for (unsigned s = 0; s < numStages; ++s) {
    costs.push_back(problem.stageCost(plan[s].begin, plan[s].end,
                                      plan[s].device, numStages - 1 - s,
                                      plan[s].recompute));
    if (s + 1 < numStages)
      cut[s] = problem.cutMs(plan[s].end - 1, plan[s].device,
                             plan[s + 1].device);
  }

  constexpr double kNotYet = -1;
  // Arrival of microbatch m's activations at stage s, and of its gradient
  // at stage s (from s + 1).
  std::vector<std::vector<double>> activationAt(
      numStages, std::vector<double>(m, kNotYet));
  std::vector<std::vector<double>> gradientAt = activationAt;
  std::vector<std::vector<double>> forwardDone = activationAt;
  for (unsigned mb = 0; mb < m; ++mb)
    activationAt[0][mb] = 0;
  if (numStages)
    for (unsigned mb = 0; mb < m; ++mb)
      gradientAt[numStages - 1][mb] = 0;
  std::vector<double> deviceFree(numStages, 0), downFree(numStages, 0),
      upFree(numStages, 0), busy(numStages, 0);
  std::vector<std::vector<ProgramStep>> programs;
  for (unsigned s = 0; s < numStages; ++s)
    programs.push_back(
        stageProgram(options.schedule, training, s, numStages, m));
  std::vector<size_t> next(numStages, 0);

  Simulation simulation;
  auto record = [&](SimEvent::Kind kind, unsigned stage, unsigned mb,
                    double start, double duration) {
    if (duration > 0)
      simulation.events.push_back({kind, stage, mb, start, start + duration});
    return start + duration;
  };

  size_t remaining = 0;
  for (const auto &program : programs)
    remaining += program.size();
  while (remaining) {
    bool progressed = false;
    for (unsigned s = 0; s < numStages; ++s) {
      while (next[s] < programs[s].size()) {
        ProgramStep step = programs[s][next[s]];
        unsigned mb = step.microbatch;
        if (step.phase == Phase::Forward) {
          double ready = activationAt[s][mb];
          if (ready == kNotYet)
            break;
          double start = std::max(deviceFree[s], ready);
          double end = record(SimEvent::Forward, s, mb, start,
                              costs[s].forwardMs);
          forwardDone[s][mb] = end;
          busy[s] += costs[s].forwardMs;
          deviceFree[s] = end;
          if (s + 1 < numStages) {
            double send = std::max(end, downFree[s]);
            downFree[s] = record(SimEvent::Activation, s, mb, send, cut[s]);
            activationAt[s + 1][mb] = downFree[s];
          }
        } else {
          double ready = gradientAt[s][mb];
          if (ready == kNotYet || forwardDone[s][mb] == kNotYet)
            break;
          double start = std::max(deviceFree[s], ready);
          double end = record(SimEvent::Recompute, s, mb, start,
                              costs[s].recomputeMs);
          end = record(SimEvent::Backward, s, mb, end, costs[s].backwardMs);
          busy[s] += costs[s].recomputeMs + costs[s].backwardMs;
          deviceFree[s] = end;
          if (s > 0) {
            double send = std::max(end, upFree[s]);
            upFree[s] = record(SimEvent::Gradient, s, mb, send, cut[s - 1]);
            gradientAt[s - 1][mb] = upFree[s];
          }
        }
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      std::string stuck;
      for (unsigned s = 0; s < numStages; ++s)
        if (next[s] < programs[s].size()) {
          ProgramStep step = programs[s][next[s]];
          stuck += llvm::formatv(" stage {0} waits in {1}{2};", s,
                                 step.phase == Phase::Forward ? "F" : "B",
                                 step.microbatch);
        }
      return llvm::createStringError("the schedule deadlocks:" + stuck);
    }
  }

  // The optimizer update follows the iteration's pipelined work; the plan
  // reports it on its own.
  double end = 0;
  for (unsigned s = 0; s < numStages; ++s)
    end = std::max(end, deviceFree[s]);
  simulation.iterationMs = end;
  double total = 0;
  for (double b : busy)
    total += b;
  simulation.bubbleFraction =
      end > 0 && numStages ? 1.0 - total / (double(numStages) * end) : 0;
  return simulation;
}

void mlir::pipe::writeChromeTrace(const Cluster &cluster,
                                  ArrayRef<StagePlan> plan,
                                  const Simulation &simulation,
                                  llvm::raw_ostream &os) {
  llvm::json::Array events;
  unsigned numStages = plan.size();
  // Tracks: stages 0..S-1, then the links down (activations) and up
  // (gradients).
  auto name = [&](unsigned tid, std::string text) {
    events.push_back(llvm::json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", 0},
        {"tid", tid},
        {"args", llvm::json::Object{{"name", std::move(text)}}}});
    events.push_back(llvm::json::Object{
        {"name", "thread_sort_index"},
        {"ph", "M"},
        {"pid", 0},
        {"tid", tid},
        {"args", llvm::json::Object{{"sort_index", tid}}}});
  };
  for (unsigned s = 0; s < numStages; ++s) {
    const Device &device = cluster.devices[plan[s].device];
    name(s, llvm::formatv("stage {0}: {1} ({2})", s, device.name,
                          device.spec.kind));
  }
  for (unsigned s = 0; s + 1 < numStages; ++s) {
    name(numStages + 2 * s, llvm::formatv("link {0} -> {1}", s, s + 1));
    name(numStages + 2 * s + 1, llvm::formatv("link {0} -> {1}", s + 1, s));
  }
  for (const SimEvent &event : simulation.events) {
    const char *kind = "";
    unsigned tid = event.stage;
    switch (event.kind) {
    case SimEvent::Forward:
      kind = "F";
      break;
    case SimEvent::Recompute:
      kind = "R";
      break;
    case SimEvent::Backward:
      kind = "B";
      break;
    case SimEvent::Activation:
      kind = "activations ";
      tid = numStages + 2 * event.stage;
      break;
    case SimEvent::Gradient:
      kind = "gradients ";
      tid = numStages + 2 * (event.stage - 1) + 1;
      break;
    }
    std::string label = llvm::formatv("{0}{1}", kind, event.microbatch).str();
    events.push_back(llvm::json::Object{
        {"name", label},
        {"cat", event.kind >= SimEvent::Activation ? "transfer" : "compute"},
        {"ph", "X"},
        {"pid", 0},
        {"tid", tid},
        {"ts", event.startMs * 1e3},
        {"dur", (event.endMs - event.startMs) * 1e3},
        {"args", llvm::json::Object{{"microbatch", event.microbatch}}}});
  }
  llvm::json::Object trace{{"traceEvents", std::move(events)},
                           {"displayTimeUnit", "ms"}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(trace))) << "\n";
}
