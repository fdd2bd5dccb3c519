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
//     trip through them (RoundTrip), and for the least response of the
//     suffixes left to the first microbatch (SuffixResponse.cpp): every
//     constraint of that replay holds in the replay of each plan that
//     extends the stages placed, and a replay is the least solution of its
//     constraints;
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
// Two partial plans whose stages end at the same layer on the same devices
// (by class, and the class of the last) are compared by their max-plus
// maps (PrefixResponse): when one searched before responds no later to
// every input, every plan that extends the other replays no faster than
// the same plan extending it, whose subtree was searched under a cutoff
// no lower, so the other is not searched. Maps are compared at a depth only
// while the subtrees they skip are worth the steps the maps take.
// The refined plan is the incumbent. A budget of simulated steps bounds the
// work; when it runs out, the least bound left open bounds the gap, and so
// do the floors: the partitioner's least second bound over every plan, and
// the bound of SuffixResponse.cpp on the whole plans of each stage count.
// See docs/planner.md, "The least 1F1B replay".
//
//===----------------------------------------------------------------------===//

#include "ReplaySearch.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

using namespace mlir;
using namespace mlir::pipe;
using namespace mlir::pipe::replaysearch;

/// The stage counts the options allow.
static std::pair<unsigned, unsigned> stageCounts(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  unsigned fixed = options.stages;
  if (!options.cutAfter.empty())
    fixed = options.cutAfter.size() + 1;
  if (!options.deviceOrder.empty())
    fixed = options.deviceOrder.size();
  if (fixed)
    return {fixed, fixed};
  return {1, std::min(problem.numDevices(), problem.numLayers())};
}


ReplaySearch::ReplaySearch(const PlanProblem &problem, const PipelinePlan &plan,
                           uint64_t stepBudget, const SuffixTables *tables,
                           Part part, const std::atomic<bool> *stop)
    : problem(problem), options(problem.options()), m(options.microbatches),
      numLayers(problem.numLayers()), choices(problem.recomputeChoices()),
      tables(tables), bestStages(plan.stages), budget(stepBudget), part(part),
      stop(stop) {
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
  groupOf.assign(classes.size(), ~0u);
  placeOf.assign(classes.size(), ~0u);
  if (options.deviceOrder.empty()) {
    hostGroups = identicalHostGroups(problem, classes);
    for (auto [g, group] : llvm::enumerate(hostGroups))
      for (auto [place, host] : llvm::enumerate(group))
        for (unsigned c : host) {
          groupOf[c] = g;
          placeOf[c] = place;
        }
  }
  // The tables count devices by classes of the cluster's interchangeable
  // ones (SuffixTables::classOf).
  if (!options.deviceOrder.empty())
    this->tables = nullptr;
  for (const std::vector<unsigned> &cls : classes) {
    std::vector<double> &times = layerMs.emplace_back(numLayers);
    for (unsigned l = 0; l < numLayers; ++l)
      times[l] = problem.layerForwardMs(l, cls.front()) +
                 problem.layerBackwardMs(l, cls.front());
  }
}

bool ReplaySearch::mirrorsAnEarlierHost(unsigned c) const {
  if (groupOf[c] == ~0u)
    return false;
  const HostGroup &group = hostGroups[groupOf[c]];
  auto unused = [&](ArrayRef<unsigned> host) {
    return llvm::all_of(host, [&](unsigned k) { return used[k] == 0; });
  };
  if (!unused(group[placeOf[c]]))
    return false;
  for (unsigned place = 0; place < placeOf[c]; ++place)
    if (unused(group[place]))
      return true;
  return false;
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
      replay(placedTimes, placedCuts, Schedule::OneFOneB, /*training=*/true, m,
             /*recordEvents=*/false, RoundTrip(), &scratch);
  if (!simulation) {
    llvm::consumeError(simulation.takeError());
    return kInf;
  }
  return simulation->iterationMs;
}

bool ReplaySearch::worthComparing(unsigned depth) const {
  if (!depth || m > kMaxComparedMicrobatches)
    return false;
  const Comparisons &at = comparisons[depth];
  if (at.made < kComparedFirst)
    return true;
  // The subtrees skipped, at the mean size of those searched, against half
  // the steps the comparisons took (the factor was tuned on the instances
  // of docs/benchmarks.md: 100 layers on 16 devices of two kinds, and
  // 10-30 layers on devices mostly unlike).
  double meanSubtree =
      at.searched ? double(at.searchedSteps) / double(at.searched) : 0;
  return 2 * double(at.skipped) * meanSubtree >= double(at.steps);
}

bool ReplaySearch::dominated(unsigned numStages, unsigned next) {
  std::string key;
  auto append = [&](unsigned value) {
    key.append(reinterpret_cast<const char *>(&value), sizeof value);
  };
  append(numStages);
  append(next);
  append(placedClasses.back());
  for (unsigned count : used)
    append(count);

  unsigned k = placed.size();
  prefixResponse(placedTimes, placedCuts, numStages, m, response);
  steps += uint64_t(2) * k * m * (m + 1) / 4;
  return searched.dominatedOrKeep(key, response.paths, steps);
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

uint64_t ReplaySearch::devicesLeft() const {
  uint64_t remaining = 0;
  for (unsigned c = 0; c < classes.size(); ++c)
    remaining +=
        (classes[c].size() - used[c]) * tables->radix[tables->classOf[c]];
  return remaining;
}

double ReplaySearch::bound(unsigned numStages, unsigned next) {
  unsigned numPlaced = placed.size();
  unsigned left = numStages - numPlaced;
  double lambda = double(m - 1);

  double tableBound = 0;
  if (tables)
    tableBound = suffixBound(numStages, next);

  // The layers left, each at its fastest on a device left, on the stages
  // left.
  auto [restSum, restLayer] = layersLeft(next);
  double restStage = std::max(restSum / left, restLayer);
  double restHidden = double(std::min<unsigned>(left - 1, m - 1)) / 2;
  double slowest =
      std::max(placedSlowest(numStages), (lambda - restHidden) * restStage);

  double result = std::max({placedSum + restSum + slowest,
                            placedSum + double(m) * restStage, tableBound});
  if (result >= cutoff())
    return result;

  // The stages placed, followed by stages that take no time but for each
  // microbatch's least round trip through them.
  std::vector<ReplayStage> &times = standInTimes;
  times.assign(placedTimes.begin(), placedTimes.end());
  times.resize(numStages);
  std::vector<double> &cuts = standInCuts;
  cuts.assign(placedCuts.begin(), placedCuts.end());
  cuts.resize(numStages - 1, 0);
  // Past the first stage, in a replay of a known order, the stand-ins are
  // passed over (a quarter of a step each), the stages placed simulated.
  bool known = scratch.knowsOrder(numStages, m, Schedule::OneFOneB,
                                  /*training=*/true);
  unsigned simulated = numPlaced && known ? numPlaced : numStages;
  steps +=
      uint64_t(2) * simulated * m + uint64_t(numStages - simulated) * m / 2;
  RoundTrip roundTrip;
  if (numPlaced) {
    roundTrip.stage = numPlaced;
    roundTrip.ms = tables ? leastRoundTrip : restSum;
    if (tables && !tables->response.empty())
      roundTrip.response = suffixResponse(next, left);
    std::tie(roundTrip.entryMs, roundTrip.firstMs) =
        tables ? std::make_pair(leastEntry, leastFirst) : leastEntryLeft(next);
    if (roundTrip.entryMs == kInf || roundTrip.firstMs == kInf)
      roundTrip.entryMs = roundTrip.firstMs = 0;
  }
  llvm::Expected<Simulation> simulation =
      replay(times, cuts, Schedule::OneFOneB, /*training=*/true, m,
             /*recordEvents=*/false, roundTrip, &scratch);
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
  // Skips the partial plan if one searched before has a map no later
  // anywhere; counts what that costs and saves.
  if (comparisons.size() <= k)
    comparisons.resize(k + 1);
  bool compared = worthComparing(k);
  if (compared) {
    uint64_t before = steps;
    bool skip = dominated(numStages, begin);
    Comparisons &at = comparisons[k];
    ++at.made;
    at.skipped += skip;
    at.steps += steps - before;
    if (skip)
      return;
  }
  uint64_t subtreeStart = steps;
  llvm::scope_exit countSubtree([&] {
    if (compared) {
      ++comparisons[k].searched;
      comparisons[k].searchedSteps += steps - subtreeStart;
    }
  });

  struct Child {
    double bound;
    unsigned cls, end;
    Recompute recompute;
    ReplayStage times;
    double cut;
  };
  // Places a next stage; returns the sum of the stages placed before it.
  auto place = [&](const Child &child) {
    placed.push_back({begin, child.end, classes[child.cls][used[child.cls]],
                      child.recompute});
    placedClasses.push_back(child.cls);
    placedTimes.push_back(child.times);
    if (k)
      placedCuts.push_back(child.cut);
    double before = placedSum;
    placedSum += child.times.forwardMs + child.times.recomputeMs +
                 child.times.backwardMs + 2 * child.cut;
    ++used[child.cls];
    return before;
  };
  // Removes it, restoring the sum exactly: no rounding builds up.
  auto unplace = [&](const Child &child, double before) {
    --used[child.cls];
    placedSum = before;
    if (k)
      placedCuts.pop_back();
    placedTimes.pop_back();
    placedClasses.pop_back();
    placed.pop_back();
  };

  // Every next stage: a last one completes a plan; the others are bounded
  // first and searched least bound first, so that good plans come early.
  SmallVector<Child> children;
  for (unsigned c = 0; c < classes.size(); ++c) {
    if (!options.deviceOrder.empty() && c != k)
      continue;
    if (used[c] == classes[c].size() || mirrorsAnEarlierHost(c))
      continue;
    unsigned device = classes[c][used[c]];
    double x = k ? problem.cutMs(begin - 1, placed.back().device, device) : 0;
    for (unsigned end = lowEnd; end <= highEnd; ++end) {
      steps += kPricingSteps;
      // This stage alone, M times after those before it, already takes
      // longer with its fastest recompute: so do all longer stages.
      double fastest =
          problem
              .stageCost(begin, end, device, positionFromEnd, choices.front())
              .busyMs();
      if (placedSum + 2 * x + double(m) * fastest >= cutoff())
        break;
      std::optional<std::pair<ReplayStage, Recompute>> fitted =
          fit(begin, end, device, positionFromEnd);
      if (!fitted)
        continue;
      Child child{0, c, end, fitted->second, fitted->first, x};
      double before = place(child);
      if (left == 1) {
        double time = completeReplay();
        if (time < best * (1 - 1e-12)) {
          best = time;
          bestStages = placed;
        }
      } else {
        child.bound = bound(numStages, end);
        if (child.bound < cutoff() * (1 - 1e-12))
          children.push_back(child);
      }
      unplace(child, before);
      if (exhausted()) {
        // The siblings left are bounded by this node's bound.
        openBound = std::min(openBound, nodeBound);
        return;
      }
    }
  }

  llvm::stable_sort(children, [](const Child &a, const Child &b) {
    return a.bound < b.bound;
  });
  for (const Child &child : children) {
    if (child.bound >= cutoff() * (1 - 1e-12))
      break;
    if (exhausted()) {
      // The children left are bounded by their bounds, the least first.
      openBound = std::min(openBound, child.bound);
      return;
    }
    double before = place(child);
    descend(numStages, child.end, child.bound);
    unplace(child, before);
  }
}

bool ReplaySearch::run() {
  auto [fewest, most] = stageCounts(problem);
  // First look for plans some way below the best, which prunes more and so
  // finds them sooner; each search that finishes proves every plan at least
  // its target, and the last, at the best plan itself, proves it the least.
  // Without a budget only the root bounds count: at the best plan itself.
  static constexpr double kBelow[] = {0.02, 0.01, 0.005, 0.0025, 0.0};
  constexpr unsigned kLast = std::size(kBelow) - 1;
  unsigned first = budget && part == Part::BelowTheBest ? 0 : kLast;
  for (unsigned phase = first; phase <= kLast; ++phase) {
    double below = kBelow[phase];
    // Never below what an earlier search proved.
    target = std::max(best * (1 - below), proven);
    openBound = kInf;
    // Partial plans searched under a lower cutoff prune none now.
    searched.clear();
    // The most promising stage counts first.
    std::vector<std::pair<double, unsigned>> roots;
    for (unsigned numStages = fewest; numStages <= most; ++numStages) {
      double rootBound = bound(numStages, 0);
      if (tables && !tables->responseByStages.empty()) {
        assert(numStages < tables->responseByStages.size() &&
               "more stages than devices");
        rootBound = std::max(rootBound, tables->responseByStages[numStages]);
      }
      roots.push_back({rootBound, numStages});
    }
    llvm::sort(roots);
    for (auto [rootBound, numStages] : roots) {
      if (rootBound >= cutoff() * (1 - 1e-12))
        break;
      descend(numStages, 0, rootBound);
    }
    // Every plan is no faster than the best, the search's cutoff, or a
    // bound it left open.
    proven = std::max(proven, std::min({best, target, openBound}));
    if (proven >= best * (1 - 1e-12))
      return true;
    if (exhausted())
      return false;
  }
  return true;
}

void mlir::pipe::searchLeastReplay(const PlanProblem &problem,
                                   PipelinePlan &plan, double floorMs,
                                   bool branch, const SuffixTables *tables) {
  uint64_t budget = branch ? problem.options().replaySteps : 0;
  if (tables && !tables->responseByStages.empty()) {
    // Every plan's stage count is one the search allows.
    auto [fewest, most] = stageCounts(problem);
    double least = kInf;
    assert(most < tables->responseByStages.size() &&
           "more stages than devices");
    for (unsigned numStages = fewest; numStages <= most; ++numStages)
      least = std::min(least, tables->responseByStages[numStages]);
    floorMs = std::max(floorMs, least);
  }
  ReplaySearch search(problem, plan, budget, tables,
                      ReplaySearch::Part::BelowTheBest);
  std::vector<StagePlan> stages = search.bestPlan();
  double best = search.bestMs(), lower = 0;
  // No plan replays faster than the floor: the plan is the least already.
  bool finished = best <= floorMs * (1 + 1e-12);
  if (!finished) {
    // A search at the incumbent itself proves little, but it finds the
    // faster plans the first target search prunes, those between its
    // target and the incumbent. It starts from the same incumbent with a
    // budget as large, on a second thread where there is a second core
    // (else after the others), and is dropped when the searches below the
    // incumbent prove it the least: neither depends on the other's
    // progress, so the plan depends on neither the timing nor the cores.
    std::atomic<bool> stop{false};
    std::optional<ReplaySearch> atBest;
    auto searchAtBest = [&] {
      atBest.emplace(problem, plan, budget, tables,
                     ReplaySearch::Part::AtTheBest, &stop);
      return atBest->run();
    };
    std::shared_future<bool> atBestFinished;
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(1));
    if (budget && llvm::hardware_concurrency().compute_thread_count() > 1)
      atBestFinished = pool.async(searchAtBest);
    finished = search.run();
    stages = search.bestPlan();
    best = search.bestMs();
    lower = search.lowerBoundMs();
    if (finished)
      stop = true;
    // Waited for even when dropped: it uses this frame.
    bool atBestProven = false;
    if (atBestFinished.valid())
      atBestProven = atBestFinished.get();
    else if (budget && !finished)
      atBestProven = searchAtBest();
    if (!finished && atBest) {
      if (atBest->bestMs() < best) {
        stages = atBest->bestPlan();
        best = atBest->bestMs();
      }
      finished = atBestProven;
      lower = std::max(lower, atBest->lowerBoundMs());
    }
  }
  // When the search stops on its budget, its plan descends by the
  // refinement's moves: the plans it finds after the refinement are no
  // local minima of them, and on plans of many stages the refinement
  // stops on its own budget (docs/planner.md, "The last descent").
  if (!finished)
    best = descendByReplay(problem, stages, best);
  if (stages != plan.stages) {
    plan.stages = std::move(stages);
    plan.objectiveMs = problem.objectiveMs(plan.stages);
  }
  plan.iterationExact = finished;
  double floor = finished ? best : std::min(std::max(lower, floorMs), best);
  plan.iterationGapBound = best > 0 ? (best - floor) / best : 0;
}
