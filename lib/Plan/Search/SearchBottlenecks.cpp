//===- SearchBottlenecks.cpp - the branch and bound over bottlenecks ------===//
//
// The plan search's branch and bound over the slowest step (over two for
// GPipe) from a quick seed plan (docs/planner.md, "The search").
//
//===----------------------------------------------------------------------===//

#include "PlanSearch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;
using namespace mlir::pipe::search;

/// A quick feasible plan to bound the search: every device, fastest first,
/// each taking a share of the layers proportional to its speed. None when
/// the options or `stages` (when not zero) fix part of the plan, or when it
/// does not fit.
static std::optional<std::vector<StagePlan>>
seedPlan(const PlanProblem &problem, unsigned stages) {
  const PlanOptions &options = problem.options();
  unsigned numDevices = problem.numDevices();
  unsigned numLayers = problem.numLayers();
  if (!options.cutAfter.empty() || !options.deviceOrder.empty() ||
      (stages && stages != numDevices) || numLayers < numDevices)
    return std::nullopt;
  std::vector<unsigned> order = fastestFirst(problem);
  double speed = 0;
  for (unsigned d = 0; d < numDevices; ++d)
    speed += problem.modelMs(d) > 0 ? 1 / problem.modelMs(d) : 0;
  std::vector<StagePlan> plan;
  unsigned begin = 0;
  for (unsigned s = 0; s < numDevices; ++s) {
    unsigned device = order[s];
    double total = problem.modelMs(device);
    double share = total > 0 ? (1 / total) / speed : 0;
    unsigned end = begin + 1;
    double done = problem.layerForwardMs(begin, device) +
                  problem.layerBackwardMs(begin, device);
    while (end + (numDevices - 1 - s) < numLayers &&
           (s + 1 == numDevices || done < share * total)) {
      done += problem.layerForwardMs(end, device) +
              problem.layerBackwardMs(end, device);
      ++end;
    }
    plan.push_back({begin, end, device, Recompute::None});
    begin = end;
  }
  if (!fitRecompute(problem, plan))
    return std::nullopt;
  return plan;
}

/// The least backward step of any stage whose forward step takes at least
/// a given time, on any device: a plan whose slowest forward step is a
/// stage's has a slowest backward step at least that. (Recompute only adds
/// to the backward step.) Per device with its own numbers and first layer,
/// the shortest such stage ends where the forward times' prefix sum first
/// reaches the time.
class StageBackwardFloor {
public:
  explicit StageBackwardFloor(const PlanProblem &problem) : problem(problem) {
    for (unsigned d = 0; d < problem.numDevices(); ++d)
      if (problem.pricedLike(d) == d)
        devices.push_back(d);
  }

  double from(double forward) const {
    unsigned numLayers = problem.numLayers();
    double least = kInf;
    for (unsigned d : devices)
      for (unsigned begin = 0; begin < numLayers; ++begin) {
        // The first end whose stage's forward step takes `forward`.
        unsigned low = begin + 1, high = numLayers + 1;
        while (low < high) {
          unsigned middle = low + (high - low) / 2;
          if (problem.forwardMs(begin, middle, d) >= forward)
            high = middle;
          else
            low = middle + 1;
        }
        if (low > numLayers)
          break; // later starts reach it no sooner
        least = std::min(least, problem.backwardMs(begin, low, d));
      }
    return least;
  }

private:
  const PlanProblem &problem;
  std::vector<unsigned> devices;
};

void mlir::pipe::search::searchBottlenecks(const PlanProblem &problem,
                                           Partitioner &partitioner, unsigned stages,
                                           PipelinePlan &best, SearchBudget &budget) {
  const PlanOptions &options = problem.options();
  int64_t m = options.microbatches;
  bool split = problem.splitBottleneck();
  double lambda = double(m - 1);
  double floorForward = partitioner.forwardFloor();
  double floorBackward = split ? partitioner.backwardFloor() : 0;
  double startForward = kInf, startBackward = kInf;
  // A quick plan bounds the search: a plan can only beat it with
  // sum + (M - 1) * (slowest steps) below its objective.
  if (std::optional<std::vector<StagePlan>> seed = seedPlan(problem, stages)) {
    double objective = problem.objectiveMs(*seed);
    best.paretoPlans.push_back(*seed);
    if (objective < best.objectiveMs) {
      best.objectiveMs = objective;
      best.stages = *seed;
    }
  }

  auto record = [&](std::vector<StagePlan> plan,
                    const PlanProblem::Times &times) {
    double objective = times.objective(m);
    best.paretoPlans.push_back(plan);
    if (objective < best.objectiveMs) {
      best.stages = std::move(plan);
      best.objectiveMs = objective;
    }
  };

  // Split bottlenecks: J = sum + lambda * (F + B) is at least
  // J1 = sum + lambda * (the slowest step in all), where a stage's step is
  // its whole time and a transfer's twice its time (Times::slowestStep),
  // with equality when one stage or transfer is the slowest both ways. J1
  // has one bottleneck, so a search over it takes a few dozen runs; its
  // plans become incumbents, and it leaves for the nested search below
  // only the plans whose step lies where a plan it found has a larger J
  // than J1 (docs/planner.md, "GPipe's relaxation to one bottleneck").
  double stepLow = 0, stepHigh = kInf;
  if (split && m > 1) {
    double startStep = kInf;
    if (best.objectiveMs < kInf)
      startStep = (best.objectiveMs - partitioner.sumFloor()) / lambda;
    // The plans found where J > J1, and the limit each was found under:
    // plans whose step lies between theirs and that limit have at least
    // their sum, and are not searched further by the relaxation.
    struct Unresolved {
      double sum, step, limit;
    };
    std::vector<Unresolved> unresolved;
    // Where good plans are slower than J1 by much, J1's least is far below
    // J's, and the relaxation would search many steps to no avail: it
    // stops, and the nested search searches every step.
    bool weak = false;
    BottleneckSearch relaxed(lambda, kInf, budget, &best.objectiveMs, 0,
                             /*relaxation=*/true);
    relaxed.run(
        partitioner.stepFloor(), startStep, partitioner.sumFloor(), 0,
        [&](double, double bound,
            double sumCap) -> std::optional<BottleneckSearch::Result> {
          if (weak)
            return std::nullopt;
          SearchLimits limits;
          limits.step = bound;
          limits.sumCap = sumCap;
          std::optional<std::vector<StagePlan>> plan =
              partitioner.search(limits);
          budget.spend(partitioner);
          if (!plan)
            return std::nullopt;
          PlanProblem::Times times = partitioner.planTimes(*plan, false);
          record(*plan, times);
          double relaxedObjective = times.sum + lambda * times.slowestStep;
          // (A stage's whole time adds its parts in another order than its
          // two steps do: a last bit is no split.)
          if (times.slowestForward + times.slowestBackward >
              times.slowestStep * (1 + 1e-12))
            unresolved.push_back({times.sum, times.slowestStep, bound});
          if (relaxedObjective < best.objectiveMs &&
              times.objective(m) - relaxedObjective >
                  options.tuning.weakRelaxation * times.objective(m))
            weak = true;
          return BottleneckSearch::Result{times.sum, times.slowestStep, 0};
        });
    if (!weak && budget.unexplored == kInf) {
      // A plan below the best found has J1 below it too: its step lies
      // where a plan found had J > J1, within what the best leaves.
      stepLow = kInf;
      stepHigh = 0;
      for (const Unresolved &region : unresolved) {
        double high =
            std::min(region.limit, (best.objectiveMs - region.sum) / lambda);
        if (high <= region.step)
          continue;
        stepLow = std::min(stepLow, region.step);
        stepHigh = std::max(stepHigh, high);
      }
    }
  }
  bool relaxationProves = stepLow > stepHigh;

  if (m > 1 && best.objectiveMs < kInf) {
    double slack = (best.objectiveMs - partitioner.sumFloor()) / lambda;
    startForward = slack - floorBackward;
    if (split)
      startBackward = slack - floorForward;
  }
  auto recordFound = [&](const LimitedSearch::Found &found) {
    record(found.stages, found.times);
  };
  LimitedSearch limited(problem, partitioner, budget, recordFound,
                        /*unhidden=*/false, stepHigh);
  // The least-sum plan whose slowest forward (backward) step is at most
  // `forward` (`backward`), if its sum is below `sumCap`.
  auto probe =
      [&](double forward, double backward, double sumCap,
          bool overBackward) -> std::optional<BottleneckSearch::Result> {
    const LimitedSearch::Found *found =
        limited.search(forward, backward, sumCap);
    if (!found)
      return std::nullopt;
    const PlanProblem::Times &times = found->times;
    if (overBackward)
      return BottleneckSearch::Result{times.sum, times.slowestBackward,
                                      times.slowestForward};
    return BottleneckSearch::Result{times.sum, times.slowestForward, 0};
  };

  if (!split) {
    BottleneckSearch search(lambda, kInf, budget, &best.objectiveMs);
    search.run(floorForward, startForward, partitioner.sumFloor(), 0,
               [&](double, double bound, double sumCap) {
                 return probe(bound, kInf, sumCap, false);
               });
  } else if (!relaxationProves) {
    // Split bottlenecks: an outer search over the slowest forward step.
    // Its value at a bound is the inner optimum, over the slowest backward
    // step, of sum + lambda * (slowest backward step) under that bound;
    // its slowest is that optimum's slowest forward step.
    // What the relaxation left: both slowest steps are at most the step,
    // and together at least it.
    startForward = std::min(startForward, stepHigh);
    startBackward = std::min(startBackward, stepHigh);
    BottleneckSearch outer(lambda, kInf, budget, &best.objectiveMs);
    double slowestTransfer = slowestTransferMs(problem);
    StageBackwardFloor stageBackward(problem);
    // A plan beats the quick plan only with both slowest steps within
    // `slack` together; above every transfer, a slowest forward step f
    // brings a backward step of stageBackward.from(f), which grows with f.
    if (std::isfinite(startForward) && startForward > slowestTransfer) {
      double slack = startForward + floorBackward;
      auto fits = [&](double forward) {
        return forward + stageBackward.from(forward) <= slack;
      };
      double low = std::max(slowestTransfer, floorForward);
      if (!fits(startForward)) {
        if (!fits(low)) {
          startForward = low;
        } else {
          double high = startForward;
          for (unsigned step = 0; step < 40; ++step) {
            double middle = low + (high - low) / 2;
            (fits(middle) ? low : high) = middle;
          }
          startForward = high;
        }
      }
    }
    outer.run(floorForward, startForward,
              partitioner.sumFloor() + lambda * floorBackward, 0,
              [&](double low, double bound,
                  double valueCap) -> std::optional<BottleneckSearch::Result> {
                // The plans of this interval have a slowest forward step of
                // at least `low`, hence a slowest backward step of at least
                // lowRatio() times that; and where no transfer takes that
                // long, their slowest forward step is a stage's, whose
                // backward step is no shorter than that of any stage whose
                // forward step takes `low` (about twice `low`, where
                // lowRatio() is at most 1).
                // Its plans have J = value + lambda * (slowest forward
                // step) >= value + lambda * low: the best J found so far
                // bounds them as it falls.
                BottleneckSearch inner(lambda, valueCap, budget,
                                       &best.objectiveMs, lambda * low);
                double backwardLow =
                    std::max(floorBackward, partitioner.lowRatio() * low);
                if (low > slowestTransfer)
                  backwardLow = std::max(backwardLow, stageBackward.from(low));
                backwardLow = std::max(backwardLow, stepLow - bound);
                inner.run(backwardLow, startBackward, partitioner.sumFloor(),
                          lambda * low,
                          [&](double, double backward, double sumCap) {
                            return probe(bound, backward, sumCap, true);
                          });
                if (!inner.found())
                  return std::nullopt;
                return BottleneckSearch::Result{inner.objective(),
                                                inner.payload(), 0};
              });
  }
}
