//===- ReplaySearch.cpp - the least 1F1B replay, by branch and bound ------===//
//
// Under 1F1B the partitioner's closed-form objective is not the replayed
// iteration time: a stage may stall for the gradient of its oldest
// microbatch in flight, and the critical path may run through several
// stages. No dynamic program over suffixes captures that, so this search
// proves which plan replays fastest by depth-first branch and bound over
// plans built stage by stage from the front, for each stage count S.
//
// A stage is a device class (interchangeable devices are not told apart),
// a range of layers, and the fastest recompute that fits its device at its
// position. The bound of a partial plan is the largest of:
//   - the replay of the stages placed so far, followed by stages and
//     transfers that take no time but for each microbatch's least round
//     trip through them (RoundTrip): every constraint of that replay holds
//     in the replay of each plan that extends the stages placed, and a
//     replay is the least solution of its constraints;
//   - the bound below over every suffix of the stages left on the devices
//     left, from the partitioner's tables (SuffixTables): the least sum of
//     a suffix's stage and transfer times, and the least largest unhidden
//     stage time or transfer;
//   - one microbatch end to end (sum of stage and transfer times), plus
//     what the slowest stage k adds for the other M - 1 microbatches
//     beyond what its warm-up hides: (M - 1) t_k - min(S - 1 - k, M - 1)
//     min(f_k, b_k). Two paths give it: microbatch 0 down the pipeline and
//     back to stage k, every later step of stage k, then microbatch M - 1
//     back up; or microbatch 0 down to stage k, stage k up to its last
//     forward pass, then microbatch M - 1 down and back. A link adds
//     (M - 1) times its transfer;
//   - for the stages not yet placed, the time of the layers left, each at
//     its fastest on a device left, spread over those stages: in the sum,
//     and M times on one of them after the stages placed.
// The refined plan is the incumbent. A budget of simulated steps bounds the
// work; when it runs out, the least bound left open bounds the gap, and so
// does the partitioner's least second bound over every plan (the floor).
// See docs/planner.md, "The least 1F1B replay".
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Simulator.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();

/// The search simulates at most this many pipeline steps in all (a replay
/// of S stages and M microbatches is 2 S M steps; pricing a stage, and a
/// layer of a bound, count as one).
static constexpr uint64_t kStepBudget = 40000000;

namespace {

class ReplaySearch {
public:
  ReplaySearch(const PlanProblem &problem, const PipelinePlan &plan,
               uint64_t stepBudget, const SuffixTables *tables);

  /// Searches every stage count; returns whether the search finished.
  bool run();

  double bestMs() const { return best; }
  ArrayRef<StagePlan> bestPlan() const { return bestStages; }
  double openBoundMs() const { return openBound; }

private:
  /// Places stages from layer `begin` on until `numStages` are placed.
  /// `nodeBound` bounds every plan that extends the stages placed.
  void descend(unsigned numStages, unsigned begin, double nodeBound);
  /// A lower bound on the replay of every plan of `numStages` stages that
  /// extends the stages placed, whose next stage starts at layer `next`.
  double bound(unsigned numStages, unsigned next);
  /// The largest of what a stage placed adds to the replay for the other
  /// M - 1 microbatches beyond what its warm-up hides, or M - 1 times a
  /// transfer between them, in a plan of `numStages` stages.
  double placedSlowest(unsigned numStages) const;
  /// The least over the partitioner's suffixes of the stages left on the
  /// devices left, from layer `next` on, of the bound: sum of every stage
  /// and transfer time plus the largest of placedSlowest and M - 1 times
  /// the suffix's largest unhidden stage time or transfer.
  double suffixBound(unsigned numStages, unsigned next);
  /// The least round trip of a microbatch through the suffixes
  /// suffixBound enumerated last, from the end of its forward pass on the
  /// last stage placed to its gradient's arrival there.
  double leastRoundTrip = 0;
  /// The replay of the stages placed, as a whole plan.
  double completeReplay();
  /// Times and recompute of layers [begin, end) on `device` at
  /// `positionFromEnd`: the fastest recompute that fits; none if none fits.
  std::optional<std::pair<ReplayStage, Recompute>>
  fit(unsigned begin, unsigned end, unsigned device,
      unsigned positionFromEnd) const;
  /// The stage counts the options allow.
  std::pair<unsigned, unsigned> stageCounts() const;
  bool exhausted() const { return steps > budget; }

  const PlanProblem &problem;
  const PlanOptions &options;
  unsigned m, numLayers;
  SmallVector<Recompute, 3> choices;
  std::vector<std::vector<unsigned>> classes;
  std::vector<unsigned> used;

  /// The stages placed, their times and the transfers between them.
  std::vector<StagePlan> placed;
  std::vector<ReplayStage> placedTimes;
  std::vector<double> placedCuts;
  /// Stage and transfer times of one microbatch through the stages placed.
  double placedSum = 0;

  const SuffixTables *tables;
  /// The classes' devices left, and the transfers into each, while
  /// suffixBound enumerates the suffixes' keys.
  SmallVector<unsigned> digits;
  SmallVector<double> cutInto;

  /// layerMs[c][l]: forward and backward time of layer l on class c.
  std::vector<std::vector<double>> layerMs;

  double best;
  std::vector<StagePlan> bestStages;
  double openBound = kInf;
  uint64_t steps = 0, budget;
};

} // namespace

ReplaySearch::ReplaySearch(const PlanProblem &problem, const PipelinePlan &plan,
                           uint64_t stepBudget, const SuffixTables *tables)
    : problem(problem), options(problem.options()), m(options.microbatches),
      numLayers(problem.numLayers()), choices(problem.recomputeChoices()),
      tables(tables), bestStages(plan.stages), budget(stepBudget) {
  llvm::Expected<Simulation> simulation =
      simulate(problem, plan.stages, /*recordEvents=*/false);
  if (simulation) {
    best = simulation->iterationMs;
  } else {
    llvm::consumeError(simulation.takeError());
    best = kInf;
  }
  if (!options.deviceOrder.empty()) {
    for (unsigned device : options.deviceOrder)
      classes.push_back({device});
  } else {
    classes = problem.cluster().interchangeableDevices();
  }
  used.assign(classes.size(), 0);
  digits.assign(classes.size(), 0);
  cutInto.assign(classes.size(), 0);
  // The tables count devices by the cluster's interchangeable classes.
  if (!options.deviceOrder.empty())
    this->tables = nullptr;
  for (const std::vector<unsigned> &cls : classes) {
    std::vector<double> &times = layerMs.emplace_back(numLayers);
    for (unsigned l = 0; l < numLayers; ++l)
      times[l] = problem.layerForwardMs(l, cls.front()) +
                 problem.layerBackwardMs(l, cls.front());
  }
}

std::pair<unsigned, unsigned> ReplaySearch::stageCounts() const {
  unsigned fixed = options.stages;
  if (!options.cutAfter.empty())
    fixed = options.cutAfter.size() + 1;
  if (!options.deviceOrder.empty())
    fixed = options.deviceOrder.size();
  if (fixed)
    return {fixed, fixed};
  return {1, std::min(problem.numDevices(), numLayers)};
}

std::optional<std::pair<ReplayStage, Recompute>>
ReplaySearch::fit(unsigned begin, unsigned end, unsigned device,
                  unsigned positionFromEnd) const {
  for (Recompute recompute : choices) {
    StageCost cost =
        problem.stageCost(begin, end, device, positionFromEnd, recompute);
    if (cost.memory.total() <= problem.capacityBytes(device))
      return std::make_pair(
          ReplayStage{cost.forwardMs, cost.recomputeMs, cost.backwardMs},
          recompute);
  }
  return std::nullopt;
}

double ReplaySearch::completeReplay() {
  steps += uint64_t(2) * placed.size() * m;
  llvm::Expected<Simulation> simulation =
      replay(placedTimes, placedCuts, Schedule::OneFOneB, /*training=*/true, m);
  if (!simulation) {
    llvm::consumeError(simulation.takeError());
    return kInf;
  }
  return simulation->iterationMs;
}

double ReplaySearch::placedSlowest(unsigned numStages) const {
  double lambda = double(m - 1);
  double slowest = 0;
  for (unsigned k = 0; k < placed.size(); ++k) {
    const ReplayStage &t = placedTimes[k];
    double forward = t.forwardMs, backward = t.recomputeMs + t.backwardMs;
    double hidden = double(std::min<unsigned>(numStages - 1 - k, m - 1)) *
                    std::min(forward, backward);
    slowest = std::max(slowest, lambda * (forward + backward) - hidden);
  }
  for (double x : placedCuts)
    slowest = std::max(slowest, lambda * x);
  return slowest;
}

double ReplaySearch::suffixBound(unsigned numStages, unsigned next) {
  unsigned left = numStages - placed.size();
  unsigned numClasses = classes.size();
  for (unsigned c = 0; c < numClasses; ++c)
    cutInto[c] = placed.empty() || used[c] == classes[c].size()
                     ? 0
                     : problem.cutMs(next - 1, placed.back().device,
                                     classes[c][used[c]]);
  double lambda = double(m - 1);
  double prefix = placedSlowest(numStages);
  double least = kInf;
  leastRoundTrip = kInf;
  // Every key of `left` devices among those left, class by class.
  std::function<void(unsigned, unsigned, unsigned)> visit =
      [&](unsigned c, unsigned key, unsigned stages) {
        if (c == numClasses) {
          if (stages != left)
            return;
          steps += numClasses;
          for (unsigned first = 0; first < numClasses; ++first) {
            if (!digits[first])
              continue;
            size_t cell = tables->index(next, key, first);
            double sum = tables->sum[cell];
            if (sum == kInf)
              continue;
            double x = cutInto[first];
            double slowest =
                std::max({prefix, lambda * x, lambda * tables->slowest[cell]});
            least = std::min(least, placedSum + 2 * x + sum + slowest);
            leastRoundTrip = std::min(leastRoundTrip, sum + 2 * x);
          }
          return;
        }
        unsigned most =
            std::min<unsigned>(classes[c].size() - used[c], left - stages);
        for (unsigned d = 0; d <= most; ++d) {
          digits[c] = d;
          visit(c + 1, key + d * tables->radix[c], stages + d);
        }
        digits[c] = 0;
      };
  visit(0, 0, 0);
  return least;
}

double ReplaySearch::bound(unsigned numStages, unsigned next) {
  unsigned numPlaced = placed.size();
  unsigned left = numStages - numPlaced;
  double lambda = double(m - 1);

  double tableBound = 0;
  if (tables)
    tableBound = suffixBound(numStages, next);

  // The layers left, each at its fastest on a device left, on the stages
  // left. (This loop counts against the budget like simulated steps.)
  steps += numLayers - next;
  double restSum = 0, restLayer = 0;
  for (unsigned l = next; l < numLayers; ++l) {
    double least = kInf;
    for (unsigned c = 0; c < classes.size(); ++c)
      if (used[c] < classes[c].size())
        least = std::min(least, layerMs[c][l]);
    restSum += least;
    restLayer = std::max(restLayer, least);
  }
  double restStage = std::max(restSum / left, restLayer);
  double restHidden = double(std::min<unsigned>(left - 1, m - 1)) / 2;
  double slowest =
      std::max(placedSlowest(numStages), (lambda - restHidden) * restStage);

  double result = std::max({placedSum + restSum + slowest,
                            placedSum + double(m) * restStage, tableBound});
  if (result >= best)
    return result;

  // The stages placed, followed by stages that take no time but for each
  // microbatch's least round trip through them.
  std::vector<ReplayStage> times = placedTimes;
  times.resize(numStages);
  std::vector<double> cuts = placedCuts;
  cuts.resize(numStages - 1, 0);
  steps += uint64_t(2) * numStages * m;
  RoundTrip roundTrip;
  if (numPlaced) {
    roundTrip.stage = numPlaced;
    roundTrip.ms = tables ? leastRoundTrip : restSum;
  }
  llvm::Expected<Simulation> simulation =
      replay(times, cuts, Schedule::OneFOneB, /*training=*/true, m,
             /*recordEvents=*/false, roundTrip);
  if (!simulation) {
    llvm::consumeError(simulation.takeError());
    return kInf;
  }
  return std::max(result, simulation->iterationMs);
}

void ReplaySearch::descend(unsigned numStages, unsigned begin,
                           double nodeBound) {
  if (exhausted()) {
    openBound = std::min(openBound, nodeBound);
    return;
  }
  unsigned k = placed.size();
  unsigned left = numStages - k;
  unsigned positionFromEnd = left - 1;
  // The stage's end: the hand-given cut, the last layer for the last
  // stage, else any that leaves a layer for each stage after it.
  unsigned lowEnd = begin + 1, highEnd = numLayers - (left - 1);
  if (left == 1)
    lowEnd = numLayers;
  else if (!options.cutAfter.empty())
    lowEnd = highEnd = options.cutAfter[k] + 1;

  for (unsigned c = 0; c < classes.size(); ++c) {
    if (!options.deviceOrder.empty() && c != k)
      continue;
    if (used[c] == classes[c].size())
      continue;
    unsigned device = classes[c][used[c]];
    double x = k ? problem.cutMs(begin - 1, placed.back().device, device) : 0;
    for (unsigned end = lowEnd; end <= highEnd; ++end) {
      ++steps;
      // This stage alone, M times after those before it, already takes
      // longer with its fastest recompute: so do all longer stages.
      double fastest =
          problem
              .stageCost(begin, end, device, positionFromEnd, choices.front())
              .busyMs();
      if (placedSum + 2 * x + double(m) * fastest >= best)
        break;
      std::optional<std::pair<ReplayStage, Recompute>> fitted =
          fit(begin, end, device, positionFromEnd);
      if (!fitted)
        continue;
      const ReplayStage &times = fitted->first;
      placed.push_back({begin, end, device, fitted->second});
      placedTimes.push_back(times);
      if (k)
        placedCuts.push_back(x);
      // Restored exactly afterwards: no rounding builds up over the search.
      double placedSumBefore = placedSum;
      placedSum +=
          times.forwardMs + times.recomputeMs + times.backwardMs + 2 * x;
      ++used[c];
      if (left == 1) {
        double time = completeReplay();
        if (time < best * (1 - 1e-12)) {
          best = time;
          bestStages = placed;
        }
      } else {
        double childBound = bound(numStages, end);
        if (childBound < best * (1 - 1e-12))
          descend(numStages, end, childBound);
      }
      --used[c];
      placedSum = placedSumBefore;
      if (k)
        placedCuts.pop_back();
      placedTimes.pop_back();
      placed.pop_back();
      if (exhausted()) {
        // The siblings left are bounded by this node's bound.
        openBound = std::min(openBound, nodeBound);
        return;
      }
    }
  }
}

bool ReplaySearch::run() {
  // The most promising stage counts first: good plans found early prune
  // the others.
  auto [fewest, most] = stageCounts();
  std::vector<std::pair<double, unsigned>> roots;
  for (unsigned numStages = fewest; numStages <= most; ++numStages)
    roots.push_back({bound(numStages, 0), numStages});
  llvm::sort(roots);
  for (auto [rootBound, numStages] : roots) {
    if (rootBound >= best * (1 - 1e-12))
      break;
    descend(numStages, 0, rootBound);
  }
  // Finished, or every plan left unexamined was bounded away.
  return !exhausted() || openBound == kInf;
}

void mlir::pipe::searchLeastReplay(const PlanProblem &problem,
                                   PipelinePlan &plan, double floorMs,
                                   bool branch, const SuffixTables *tables) {
  ReplaySearch search(problem, plan, branch ? kStepBudget : 0, tables);
  // No plan replays faster than the floor: the plan is the least already.
  bool finished = search.bestMs() <= floorMs * (1 + 1e-12) || search.run();
  if (search.bestPlan() != ArrayRef<StagePlan>(plan.stages)) {
    plan.stages = search.bestPlan();
    plan.objectiveMs = problem.objectiveMs(plan.stages);
  }
  double best = search.bestMs();
  plan.iterationExact = finished;
  double floor =
      finished ? best : std::min(std::max(search.openBoundMs(), floorMs), best);
  plan.iterationGapBound = best > 0 ? (best - floor) / best : 0;
}
