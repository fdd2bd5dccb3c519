//===- Refine.cpp - local search on the simulated 1F1B iteration ----------===//
//
// The partitioner's objective equals the replayed iteration time for
// inference and GPipe. A 1F1B replay can also stall: a stage may wait for
// the gradient of its oldest microbatch in flight. Starting from the best
// replay among the Pareto plans, this local search moves single cuts,
// swaps or replaces devices and re-picks recompute, keeping every move
// that shortens the replay, until none does. When the replay search stops
// on its budget, its plan descends by the same moves (descendByReplay).
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Simulator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::pipe;

/// A refinement replays at most this many plans, and simulates at most
/// this many steps in all (a replay simulates stages x steps per stage).
constexpr unsigned kReplayBudget = 20000;
constexpr uint64_t kStepBudget = 200000000;

static double replayMs(const PlanProblem &problem, ArrayRef<StagePlan> plan,
                       ReplayScratch &scratch) {
  llvm::Expected<Simulation> simulation =
      simulate(problem, plan, /*recordEvents=*/false, &scratch);
  if (!simulation) {
    llvm::consumeError(simulation.takeError());
    return std::numeric_limits<double>::infinity();
  }
  return simulation->iterationMs;
}

/// Descends from `current` by single moves until none shortens the replay.
static double descend(const PlanProblem &problem,
                      std::vector<StagePlan> &current, double best,
                      unsigned &replays, uint64_t &simulatedSteps,
                      ReplayScratch &scratch) {
  const PlanOptions &options = problem.options();
  bool moveCuts = options.cutAfter.empty();
  bool moveDevices = options.deviceOrder.empty();
  const Cluster &cluster = problem.cluster();
  // Unused devices of one class make the same moves: one of each is tried.
  std::vector<std::vector<unsigned>> classes = cluster.interchangeableDevices();
  for (unsigned round = 0; round < 1000; ++round) {
    std::vector<StagePlan> bestMove;
    double bestTime = best;
    SmallVector<unsigned> unused;
    for (const std::vector<unsigned> &cls : classes)
      for (unsigned d : cls)
        if (llvm::none_of(current,
                          [&](const StagePlan &p) { return p.device == d; })) {
          unused.push_back(d);
          break;
        }
    auto consider = [&](std::vector<StagePlan> neighbour) {
      uint64_t steps = uint64_t(neighbour.size()) * 2 *
                       uint64_t(problem.options().microbatches);
      if (replays >= kReplayBudget || simulatedSteps + steps > kStepBudget ||
          !fitRecompute(problem, neighbour))
        return;
      ++replays;
      simulatedSteps += steps;
      double time = replayMs(problem, neighbour, scratch);
      if (time < bestTime * (1 - 1e-12)) {
        bestTime = time;
        bestMove = std::move(neighbour);
      }
    };
    unsigned numStages = current.size();
    if (moveCuts)
      for (unsigned s = 0; s + 1 < numStages; ++s)
        for (int delta : {-1, 1}) {
          std::vector<StagePlan> neighbour = current;
          int end = int(neighbour[s].end) + delta;
          if (end <= int(neighbour[s].begin) ||
              end >= int(neighbour[s + 1].end))
            continue;
          neighbour[s].end = neighbour[s + 1].begin = end;
          consider(std::move(neighbour));
        }
    if (moveDevices) {
      for (unsigned a = 0; a < numStages; ++a)
        for (unsigned b = a + 1; b < numStages; ++b) {
          // Swapping twins changes nothing.
          const Device &da = cluster.devices[current[a].device];
          const Device &db = cluster.devices[current[b].device];
          if (da.host == db.host && sameSpec(da.spec, db.spec) &&
              !llvm::any_of(current, [&](const StagePlan &p) {
                return cluster.hasExplicitLink(current[a].device, p.device) ||
                       cluster.hasExplicitLink(current[b].device, p.device);
              }))
            continue;
          std::vector<StagePlan> neighbour = current;
          std::swap(neighbour[a].device, neighbour[b].device);
          consider(std::move(neighbour));
        }
      for (unsigned s = 0; s < numStages; ++s)
        for (unsigned d : unused) {
          std::vector<StagePlan> neighbour = current;
          neighbour[s].device = d;
          consider(std::move(neighbour));
        }
    }
    // Merge two neighbours, or split a stage onto a free device.
    if (moveCuts && moveDevices && !options.stages) {
      for (unsigned s = 0; s + 1 < numStages; ++s)
        for (unsigned keep : {s, s + 1}) {
          std::vector<StagePlan> neighbour = current;
          neighbour[s].end = neighbour[s + 1].end;
          neighbour[s].device = current[keep].device;
          neighbour.erase(neighbour.begin() + s + 1);
          consider(std::move(neighbour));
        }
      for (unsigned s = 0; s < numStages; ++s) {
        if (current[s].end - current[s].begin < 2)
          continue;
        unsigned middle = (current[s].begin + current[s].end) / 2;
        for (unsigned d : unused) {
          for (bool after : {false, true}) {
            std::vector<StagePlan> neighbour = current;
            StagePlan extra = current[s];
            neighbour[s].end = extra.begin = middle;
            extra.device = d;
            if (!after)
              std::swap(neighbour[s].device, extra.device);
            neighbour.insert(neighbour.begin() + s + 1, extra);
            consider(std::move(neighbour));
          }
        }
      }
    }
    if (bestMove.empty())
      break;
    current = std::move(bestMove);
    best = bestTime;
  }
  return best;
}

double mlir::pipe::descendOnCuts(const PlanProblem &problem,
                                 std::vector<StagePlan> &plan,
                                 double objectiveMs) {
  const PlanOptions &options = problem.options();
  if (!options.cutAfter.empty() || plan.size() < 2)
    return objectiveMs;
  // A move changes two stages and the cut between them: the rest of the
  // plan's sum and slowest steps are kept per round, so that a candidate
  // costs two stages' prices. Past this many candidates, it stops.
  constexpr unsigned kCandidates = 200000;
  bool split = problem.splitBottleneck();
  double transfers = options.training ? 2 : 1;
  unsigned numStages = plan.size();
  // A stage's or a cut's part of PlanProblem::times.
  struct Part {
    double sum = 0, forward = 0, backward = 0;
  };
  auto stagePart = [&](unsigned s, unsigned begin, unsigned end,
                       Recompute recompute) {
    StageCost cost = problem.stageCost(begin, end, plan[s].device,
                                       numStages - 1 - s, recompute);
    if (split)
      return Part{cost.busyMs(), cost.forwardMs,
                  cost.backwardMs + cost.recomputeMs};
    return Part{cost.busyMs(), cost.busyMs(), 0};
  };
  auto cutPart = [&](unsigned s, unsigned end) {
    double x = problem.cutMs(end - 1, plan[s].device, plan[s + 1].device);
    return Part{transfers * x, x, split ? x : 0};
  };
  auto fit = [&](unsigned s, unsigned begin, unsigned end) {
    return fastestFittingRecompute(problem, begin, end, numStages - 1 - s,
                                   plan[s].device);
  };

  unsigned candidates = 0;
  while (candidates < kCandidates) {
    // Parts in pipeline order (stage 0, cut 0, stage 1, ...), with the
    // largest steps before and after each.
    unsigned numParts = 2 * numStages - 1;
    std::vector<Part> parts(numParts), before(numParts + 1),
        after(numParts + 1);
    double total = 0;
    for (unsigned s = 0; s < numStages; ++s) {
      parts[2 * s] =
          stagePart(s, plan[s].begin, plan[s].end, plan[s].recompute);
      if (s + 1 < numStages)
        parts[2 * s + 1] = cutPart(s, plan[s].end);
    }
    auto larger = [](const Part &a, const Part &b) {
      return Part{0, std::max(a.forward, b.forward),
                  std::max(a.backward, b.backward)};
    };
    for (unsigned i = 0; i < numParts; ++i) {
      total += parts[i].sum;
      before[i + 1] = larger(before[i], parts[i]);
      after[numParts - 1 - i] =
          larger(after[numParts - i], parts[numParts - 1 - i]);
    }

    double best = objectiveMs;
    std::optional<std::tuple<unsigned, unsigned, Recompute, Recompute>> move;
    for (unsigned s = 0; s + 1 < numStages && candidates < kCandidates; ++s) {
      for (unsigned end = plan[s].begin + 1;
           end < plan[s + 1].end && candidates < kCandidates; ++end) {
        if (end == plan[s].end)
          continue;
        ++candidates;
        std::optional<Recompute> first = fit(s, plan[s].begin, end);
        std::optional<Recompute> second =
            first ? fit(s + 1, end, plan[s + 1].end) : std::nullopt;
        if (!second)
          continue;
        Part a = stagePart(s, plan[s].begin, end, *first);
        Part x = cutPart(s, end);
        Part b = stagePart(s + 1, end, plan[s + 1].end, *second);
        double sum = total - parts[2 * s].sum - parts[2 * s + 1].sum -
                     parts[2 * s + 2].sum + a.sum + x.sum + b.sum;
        Part slowest = larger(larger(before[2 * s], after[2 * s + 3]),
                              larger(larger(a, x), b));
        double objective = sum + double(options.microbatches - 1) *
                                     (slowest.forward + slowest.backward);
        if (objective < best * (1 - 1e-12)) {
          best = objective;
          move = {s, end, *first, *second};
        }
      }
    }
    if (!move)
      break;
    std::vector<StagePlan> moved = plan;
    auto [s, end, first, second] = *move;
    moved[s].end = moved[s + 1].begin = end;
    moved[s].recompute = first;
    moved[s + 1].recompute = second;
    // Priced whole, as the search prices it: a move only counts if the
    // plan's own objective falls.
    double objective = problem.objectiveMs(moved);
    if (!(objective < objectiveMs * (1 - 1e-12)))
      break;
    plan = std::move(moved);
    objectiveMs = objective;
  }
  return objectiveMs;
}

double mlir::pipe::descendByReplay(const PlanProblem &problem,
                                   std::vector<StagePlan> &plan,
                                   double timeMs) {
  ReplayScratch scratch;
  unsigned replays = 0;
  uint64_t simulatedSteps = 0;
  return descend(problem, plan, timeMs, replays, simulatedSteps, scratch);
}

void mlir::pipe::refinePlanBySimulation(const PlanProblem &problem,
                                        PipelinePlan &plan) {
  // The plans with the best replays seed a descent each, from the Pareto
  // walk and from the floor's search alike; the best result wins.
  constexpr unsigned kSeeds = 5;
  ReplayScratch scratch;
  std::vector<std::pair<double, const std::vector<StagePlan> *>> starts;
  for (const auto *plans : {&plan.paretoPlans, &plan.floorPlans}) {
    std::vector<std::pair<double, const std::vector<StagePlan> *>> seeds;
    for (const std::vector<StagePlan> &seed : *plans)
      seeds.push_back({replayMs(problem, seed, scratch), &seed});
    llvm::stable_sort(seeds, llvm::less_first());
    seeds.resize(std::min<size_t>(kSeeds, seeds.size()));
    starts.insert(starts.end(), seeds.begin(), seeds.end());
  }
  std::vector<StagePlan> best = plan.stages;
  double bestTime = replayMs(problem, best, scratch);
  unsigned replays = 0;
  uint64_t simulatedSteps = 0;
  for (auto [time, seed] : starts) {
    std::vector<StagePlan> current = *seed;
    double descended =
        descend(problem, current, time, replays, simulatedSteps, scratch);
    if (descended < bestTime * (1 - 1e-12)) {
      bestTime = descended;
      best = std::move(current);
    }
  }
  if (best != plan.stages) {
    plan.stages = best;
    plan.objectiveMs = problem.objectiveMs(best);
  }
}
