//===- PlanFloors.cpp - floors under every plan the search leaves ---------===//
//
// Proven lower bounds under the plans a search could not finish: the
// objective's floor, the floor under the 1F1B replay and its suffix tables,
// the floor over the model's own layers on blocks, and the floor with each
// cut at its least transfer (docs/planner.md, "The floor").
//
//===----------------------------------------------------------------------===//

#include "../Search/PlanSearch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;
using namespace mlir::pipe::search;

double mlir::pipe::search::objectiveFloor(const PlanProblem &problem) {
  Partitioner partitioner(problem);
  double floors = partitioner.forwardFloor() +
                  (problem.splitBottleneck() ? partitioner.backwardFloor() : 0);
  return std::max(partitioner.sumFloor() +
                      double(problem.options().microbatches - 1) * floors,
                  relaxedFloorMs(problem, /*replay=*/false));
}

double mlir::pipe::search::slowestTransferMs(const PlanProblem &problem) {
  int64_t largest = 0;
  for (unsigned cut = 0; cut + 1 < problem.numLayers(); ++cut)
    largest = std::max(largest, problem.cutBytes(cut));
  const Cluster &cluster = problem.cluster();
  std::vector<std::vector<unsigned>> classes = cluster.interchangeableDevices();
  double slowest = 0;
  for (const std::vector<unsigned> &a : classes)
    for (const std::vector<unsigned> &b : classes) {
      unsigned from = a.front(), to = b.front();
      if (&a == &b) {
        if (a.size() < 2)
          continue;
        to = a[1];
      }
      slowest =
          std::max(slowest, transferTimeMs(largest, cluster.link(from, to)));
    }
  return slowest;
}

/// The least of sum + (M - 1) max(unhidden stage time, transfer) over
/// the plans `partitioner` searches, within `runs` runs of its dynamic
/// program (what it proves if they run out); `cap` if that is no less than
/// `cap`. Adds the plans it visits to `visited`: front-heavy plans whose
/// warm-ups hide time, good seeds for the refinement.
static double leastUnhidden(const PlanProblem &problem,
                            Partitioner &partitioner, unsigned runs, double cap,
                            std::vector<std::vector<StagePlan>> &visited) {
  double lambda = double(problem.options().microbatches - 1);
  SearchBudget budget{runs};
  BottleneckSearch search(lambda, cap, budget);
  // A stage's unhidden time is at least half its whole time; a plan below
  // the cap has none longer than the cap's slack over the least sum.
  double high = lambda > 0 ? (cap - partitioner.sumFloor()) / lambda : kInf;
  auto visit = [&](const LimitedSearch::Found &found) {
    visited.push_back(partitioner.leastLinkCuts()
                          ? problem.onNearDevices(found.stages)
                          : found.stages);
  };
  LimitedSearch limited(problem, partitioner, budget, visit,
                        /*unhidden=*/true);
  search.run(partitioner.forwardFloor() / 2, high, partitioner.sumFloor(), 0,
             [&](double, double bound,
                 double sumCap) -> std::optional<BottleneckSearch::Result> {
               const LimitedSearch::Found *found =
                   limited.search(bound, kInf, sumCap);
               if (!found)
                 return std::nullopt;
               return BottleneckSearch::Result{found->times.sum,
                                               found->times.slowestForward, 0};
             });
  return std::min(search.objective(), budget.unexplored);
}

double mlir::pipe::search::replayFloor(const PlanProblem &problem, Partitioner &searched,
                                       unsigned stages, double cap, bool modelLayers,
                                       std::vector<std::vector<StagePlan>> &visited) {
  bool approximate = searched.isApproximate();
  if (approximate && !modelLayers)
    return 0;
  auto manyCells = [&](const Partitioner &partitioner) {
    return partitioner.numCells() > problem.options().tuning.floorCells;
  };
  std::optional<Partitioner> relaxed;
  if (approximate || manyCells(searched)) {
    relaxed.emplace(problem, stages, /*leastLinks=*/true);
    if (relaxed->takesTheFastest() ||
        (!approximate && relaxed->numStates() >= searched.numStates()))
      relaxed.reset();
  }
  if (!relaxed)
    return approximate
               ? 0
               : leastUnhidden(problem, searched, kSearchRuns, cap, visited);
  if (approximate)
    return leastUnhidden(problem, *relaxed,
                         manyCells(*relaxed) ? kFloorRunsOnManyCells
                                             : kSearchRuns,
                         cap, visited);
  return std::max(
      leastUnhidden(problem, searched, kFloorRunsOnManyCells, cap, visited),
      leastUnhidden(problem, *relaxed, kSearchRuns, cap, visited));
}

SuffixTables mlir::pipe::search::suffixTableLayout(const PlanProblem &problem,
                                                   const Partitioner &partitioner,
                                                   double capMs, unsigned stages) {
  SuffixTables tables;
  std::optional<Partitioner> relaxed;
  const Partitioner *counting = &partitioner;
  if (partitioner.keyRadix().empty() && problem.options().deviceOrder.empty()) {
    relaxed.emplace(problem, stages, /*leastLinks=*/true);
    counting = &*relaxed;
    tables.leastLinks = true;
  }
  tables.radix = counting->keyRadix();
  if (tables.radix.empty())
    return tables;
  tables.classes = counting->classDevices();
  std::vector<unsigned> classOfDevice(problem.numDevices());
  for (auto [c, devices] : llvm::enumerate(tables.classes)) {
    tables.sizes.push_back(devices.size());
    for (unsigned device : devices)
      classOfDevice[device] = c;
  }
  for (const std::vector<unsigned> &cls :
       problem.cluster().interchangeableDevices())
    tables.classOf.push_back(classOfDevice[cls.front()]);
  tables.numKeys = tables.radix.back() * (tables.sizes.back() + 1);
  // Over devices with the same numbers, cuts at their least transfer, the
  // tables bound the replay search little without the bounds of the
  // suffixes' own stalls: none where those would keep too many numbers.
  size_t numCells =
      size_t(problem.numLayers() + 1) * tables.numKeys * tables.sizes.size();
  if (tables.leastLinks &&
      numCells * problem.options().microbatches > kMaxResponseNumbers)
    return SuffixTables();
  // No stage of a plan that replays below the cap has an unhidden time
  // above this: sum + (M - 1) * (largest unhidden time) bounds the replay.
  double lambda = double(problem.options().microbatches - 1);
  tables.stageLimit =
      lambda > 0 ? (capMs - counting->sumFloor()) / lambda : kInf;
  return tables;
}

void mlir::pipe::search::fillSuffixTables(const PlanProblem &problem,
                                          Partitioner &partitioner, SuffixTables &tables,
                                          bool perLimit) {
  if (tables.radix.empty())
    return;
  double high = tables.stageLimit;
  SearchLimits limits;
  limits.forward = high;
  limits.unhidden = true;
  limits.tabulateLargest = true;
  limits.everySuffix = true;
  partitioner.search(limits);
  tables.sum = partitioner.suffixSums();
  tables.slowest = partitioner.suffixLargest();

  // Limits spaced geometrically from half the least stage time the floor
  // allows up to `high`; a quarter of them from the least largest unhidden
  // time of any whole plan up, between the others where the largest
  // unhidden time of every plan lies.
  double low = partitioner.forwardFloor() / 2;
  if (!(high > low) || !std::isfinite(high))
    return;
  // As many limits as keep the tables within kSuffixCells (one pass of the
  // dynamic program fills them all); none if fewer than 4 fit, too coarse
  // to tell suffixes apart.
  size_t numCells = tables.sum.size();
  unsigned numLimits = std::min<size_t>(kSuffixLimits, kSuffixCells / numCells);
  if (numLimits < 4)
    return;
  double wholePlans = kInf;
  for (unsigned key = 0; key < tables.numKeys; ++key)
    for (unsigned first = 0; first < tables.sizes.size(); ++first)
      wholePlans =
          std::min(wholePlans, tables.slowest[tables.index(0, key, first)]);
  double fine = std::clamp(wholePlans, low, high);
  unsigned numFine = numLimits / 4, numCoarse = numLimits - numFine;
  SmallVector<double> &spaced = tables.limits;
  for (unsigned i = 1; i <= numCoarse; ++i)
    spaced.push_back(low * std::pow(high / low, double(i) / numCoarse));
  for (unsigned i = 1; i <= numFine; ++i)
    spaced.push_back(fine * std::pow(high / fine, double(i) / numFine));
  // Both end at the cap: keep one of limits that differ by a rounding.
  llvm::sort(spaced);
  spaced.erase(
      std::unique(spaced.begin(), spaced.end(),
                  [](double a, double b) { return b <= a * (1 + 1e-9); }),
      spaced.end());
  numLimits = spaced.size();

  if (!perLimit) {
    tables.sumWithin = partitioner.sumsWithin(spaced);
    return;
  }
  limits.tabulateLargest = false;
  tables.sumWithin.assign(numCells * numLimits, kInf);
  for (unsigned i = 0; i < numLimits; ++i) {
    limits.forward = spaced[i];
    partitioner.search(limits);
    const std::vector<double> &sums = partitioner.suffixSums();
    for (size_t cell = 0; cell < numCells; ++cell)
      tables.sumWithin[cell * numLimits + i] = sums[cell];
  }
}

SuffixTables mlir::pipe::tabulateSuffixes(const PlanProblem &problem,
                                          double capMs, bool perLimit) {
  Partitioner partitioner(problem);
  SuffixTables tables = suffixTableLayout(problem, partitioner, capMs, 0);
  Partitioner counting(problem, 0, tables.leastLinks);
  fillSuffixTables(problem, counting, tables, perLimit);
  return tables;
}

double mlir::pipe::search::floorOverLayers(const PlanProblem &problem, PipelinePlan &plan,
                                           double capMs) {
  const PlanOptions &options = problem.options();
  int64_t m = options.microbatches;
  if (m < 2 || !(options.tuning.layerFloorWork > 0))
    return 0;
  // (A given device order keeps its devices: no stage may move.)
  Partitioner relaxed(problem, options.stages,
                      /*leastLinks=*/options.deviceOrder.empty());
  if (relaxed.takesTheFastest() || relaxed.isApproximate())
    return 0;
  // A stage spans the layers over the stages a plan may have.
  double layers = problem.numLayers();
  double work = relaxed.numCells() * layers /
                std::min<double>(mostStages(problem), layers);
  // (GPT-2-XL's 1448 nodes on 4 devices make 14 million per run, about
  // 0.035 s.)
  double runs = std::min<double>(kSearchRuns, options.tuning.layerFloorWork / work);
  bool oneFOneB = options.training && options.schedule == Schedule::OneFOneB;
  if (runs < (oneFOneB ? kLeastUnhiddenFloorRuns : kLeastLayerFloorRuns))
    return 0;
  double lambda = double(m - 1);

  if (oneFOneB) {
    llvm::Expected<Simulation> simulation =
        simulate(problem, plan.stages, /*recordEvents=*/false);
    if (!simulation) {
      llvm::consumeError(simulation.takeError());
      return 0;
    }
    return leastUnhidden(problem, relaxed, unsigned(runs),
                         simulation->iterationMs, plan.floorPlans);
  }

  // The least objective of the plan and the plans found prunes the search:
  // a pruned plan's J1 is at least that objective then, at least at the
  // end. The best plan found descends on cuts too (the plan did, in
  // planPipeline) and replaces the plan if it is then faster.
  bool split = problem.splitBottleneck();
  SearchBudget budget{unsigned(runs)};
  double incumbent = std::max(capMs, plan.objectiveMs);
  std::vector<StagePlan> best;
  BottleneckSearch search(lambda, incumbent, budget, &incumbent);
  double low = split ? relaxed.stepFloor() : relaxed.forwardFloor();
  double high = (incumbent - relaxed.sumFloor()) / lambda;
  search.run(
      low, high, relaxed.sumFloor(), 0,
      [&](double, double bound,
          double sumCap) -> std::optional<BottleneckSearch::Result> {
        SearchLimits limits;
        if (split)
          limits.step = bound;
        else
          limits.forward = bound;
        limits.sumCap = sumCap;
        std::optional<std::vector<StagePlan>> found = relaxed.search(limits);
        budget.spend(relaxed);
        if (!found)
          return std::nullopt;
        PlanProblem::Times times = relaxed.planTimes(*found, false);
        std::vector<StagePlan> near =
            relaxed.leastLinkCuts() ? problem.onNearDevices(*found) : *found;
        double objective = problem.objectiveMs(near);
        if (objective < incumbent && fitsMemory(problem, near)) {
          best = std::move(near);
          incumbent = objective;
        }
        return BottleneckSearch::Result{
            times.sum, split ? times.slowestStep : times.slowestForward, 0};
      });
  if (!best.empty()) {
    double objective = descendOnCuts(problem, best, incumbent);
    if (objective < plan.objectiveMs) {
      plan.stages = std::move(best);
      plan.objectiveMs = objective;
    }
  }
  return std::min({search.objective(), incumbent, budget.unexplored});
}

double mlir::pipe::search::leastLinkFloor(const PlanProblem &problem, unsigned stages,
                                          PipelinePlan &best) {
  Partitioner relaxed(problem, stages, /*leastLinks=*/true);
  if (relaxed.takesTheFastest())
    return 0;
  PipelinePlan least;
  least.objectiveMs = best.objectiveMs;
  SearchBudget budget{kSearchRuns};
  searchBottlenecks(problem, relaxed, stages, least, budget);
  if (!least.stages.empty()) {
    std::vector<StagePlan> near = problem.onNearDevices(least.stages);
    double objective = problem.objectiveMs(near);
    if (objective < best.objectiveMs && fitsMemory(problem, near)) {
      best.stages = std::move(near);
      best.objectiveMs = objective;
    }
  }
  return std::min(least.objectiveMs, budget.unexplored);
}
