//===- PlanSearch.cpp - the search for the best plan ----------------------===//
//
// Drives the partitioner's dynamic program (Partitioner.cpp) to the plan
// of least objective: a branch and bound over the slowest step (over two
// for GPipe) from a quick seed plan; floors under every plan where the
// search cannot finish; blocks of layers past the exact range; the
// fastest devices when they are too many to count by class; the plan whose
// memory overflow is least when nothing fits; and, for 1F1B, the
// refinement and the search over replays (Refine.cpp, ReplaySearch.cpp).
// The branch and bound is SearchBottlenecks.cpp; the floors are
// Bounds/PlanFloors.cpp.
// See docs/planner.md, "The search".
//
//===----------------------------------------------------------------------===//

#include "PlanSearch.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;
using namespace mlir::pipe::search;

/// Checks the hand-given parts of the options against the problem.
static llvm::Error checkOptions(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  unsigned numDevices = problem.numDevices();
  unsigned numLayers = problem.numLayers();
  unsigned stages = options.stages;
  if (!options.cutAfter.empty()) {
    unsigned fromCuts = options.cutAfter.size() + 1;
    if (stages && stages != fromCuts)
      return llvm::createStringError(llvm::formatv(
          "--stages={0} disagrees with the {1} cut points of --cut-after, "
          "which make {2} stages",
          stages, options.cutAfter.size(), fromCuts));
    stages = fromCuts;
    for (unsigned i = 0; i < options.cutAfter.size(); ++i)
      if (options.cutAfter[i] + 1 >= numLayers ||
          (i && options.cutAfter[i] <= options.cutAfter[i - 1]))
        return llvm::createStringError(
            "--cut-after points must be distinct nodes in program order, "
            "none of them the last");
  }
  if (!options.deviceOrder.empty()) {
    if (stages && stages != options.deviceOrder.size())
      return llvm::createStringError(
          llvm::formatv("--device-order lists {0} device{1} for {2} stages",
                        options.deviceOrder.size(),
                        options.deviceOrder.size() == 1 ? "" : "s", stages));
    stages = options.deviceOrder.size();
  }
  if (stages > numDevices)
    return llvm::createStringError(
        llvm::formatv("{0} stages need {0} devices, but the cluster has {1}",
                      stages, numDevices));
  if (stages > numLayers)
    return llvm::createStringError(
        llvm::formatv("{0} stages need {0} layers, but the model has {1}",
                      stages, numLayers));
  if (options.microbatches < 1 || options.microbatches > kMaxMicrobatches)
    return llvm::createStringError(llvm::formatv(
        "--microbatches must be between 1 and {0}", kMaxMicrobatches));
  return llvm::Error::success();
}

/// Prices the chosen plan on `problem`, bounds its gap when the search
/// was not exhaustive, and refines 1F1B plans on their replay.
/// `replayFloorMs` bounds every plan's 1F1B replay and `leastLinkFloorMs`
/// every plan's objective (0 for none): the floors of leastLinkFloor and
/// replayFloor, or on blocks of layers that of floorOverLayers.
static PipelinePlan finishPlan(const PlanProblem &problem, PipelinePlan plan,
                               bool proven, bool branch, double replayFloorMs,
                               const SuffixTables &suffixes,
                               double leastLinkFloorMs) {
  plan.objectiveMs = problem.objectiveMs(plan.stages);
  bool oneFOneB = problem.options().training &&
                  problem.options().schedule == Schedule::OneFOneB;
  // Past the exact range (blocks of layers, simplified classes), a plan one
  // cut from a faster one is no answer (1F1B plans are refined on their
  // replay below).
  if (!proven && !oneFOneB)
    plan.objectiveMs = descendOnCuts(problem, plan.stages, plan.objectiveMs);
  plan.optimalObjectiveMs = plan.objectiveMs;
  if (!proven) {
    // The search's own gap is about the plans it searched; the floor's
    // holds for every plan, and a plan that meets it is the least.
    double floor = std::max(objectiveFloor(problem), leastLinkFloorMs);
    plan.exact = plan.objectiveMs <= floor * (1 + 1e-12);
    plan.gapBound =
        plan.exact ? 0 : (plan.objectiveMs - floor) / plan.objectiveMs;
  }
  plan.iterationExact = plan.exact;
  plan.iterationGapBound = plan.gapBound;
  if (oneFOneB) {
    refinePlanBySimulation(problem, plan);
    // Past the exact range (blocks of layers), the branch and bound could
    // not finish: only its root bounds count.
    double floorMs = relaxedFloorMs(problem, /*replay=*/true);
    searchLeastReplay(problem, plan, std::max(replayFloorMs, floorMs), branch,
                      suffixes.empty() ? nullptr : &suffixes);
  }
  return plan;
}

/// Whether the dynamic program over every layer, with the cluster's
/// interchangeable devices as classes, is small enough to run past
/// kExactLayers: its cells times the layers a stage spans on average.
static bool layerSearchIsCheap(const PlanProblem &problem) {
  SmallVector<size_t> sizes;
  for (const std::vector<unsigned> &cls :
       problem.cluster().interchangeableDevices())
    sizes.push_back(cls.size());
  double layers = problem.numLayers();
  double cells = dynamicProgramCells(problem.numLayers(), sizes);
  double stages = std::min<double>(problem.numDevices(), layers);
  double work = cells * layers / stages;
  const PlanOptions &options = problem.options();
  if (options.training && options.schedule == Schedule::OneFOneB)
    work *= std::max(1.0, stages / 32);
  return cells <= kMaxCells && work < kCheapTransitions;
}

/// Merges consecutive layers into `groups` blocks of about equal time on
/// the first device; returns the blocks' first layers.
static std::pair<LayerGraph, std::vector<unsigned>>
coarsen(const PlanProblem &problem, unsigned groups) {
  const LayerGraph &fine = problem.graph();
  unsigned numLayers = fine.layers.size();
  std::vector<double> prefix(numLayers + 1, 0);
  for (unsigned l = 0; l < numLayers; ++l)
    prefix[l + 1] = prefix[l] + problem.layerForwardMs(l, 0) +
                    problem.layerBackwardMs(l, 0);
  std::vector<unsigned> starts = {0};
  for (unsigned l = 1; l < numLayers; ++l) {
    double target = prefix[numLayers] * starts.size() / groups;
    bool behind = numLayers - l <= groups - starts.size();
    if (starts.size() < groups && (prefix[l] >= target || behind))
      starts.push_back(l);
  }
  LayerGraph coarse;
  coarse.params = fine.params;
  coarse.values = fine.values;
  coarse.derivedBackward = fine.derivedBackward;
  std::vector<int> group(numLayers);
  for (unsigned g = 0; g < starts.size(); ++g) {
    unsigned end = g + 1 < starts.size() ? starts[g + 1] : numLayers;
    PlanLayer merged;
    merged.name = fine.layers[starts[g]].name;
    for (unsigned l = starts[g]; l < end; ++l) {
      group[l] = g;
      const PlanLayer &layer = fine.layers[l];
      merged.ops.append(layer.ops.begin(), layer.ops.end());
      merged.backwardOps.append(layer.backwardOps.begin(),
                                layer.backwardOps.end());
      merged.stashBytes += layer.stashBytes;
      merged.contractionBytes += layer.contractionBytes;
      merged.workspaceBytes =
          std::max(merged.workspaceBytes, layer.workspaceBytes);
      for (unsigned p : layer.params)
        if (!llvm::is_contained(merged.params, p))
          merged.params.push_back(p);
      for (unsigned v : layer.inputs) {
        int producer = fine.values[v].producer;
        if ((producer < 0 || producer < int(starts[g])) &&
            !llvm::is_contained(merged.inputs, v))
          merged.inputs.push_back(v);
      }
    }
    coarse.layers.push_back(std::move(merged));
  }
  // A stage of blocks [i, j) holds layers [starts[i], starts[j]): the
  // layers of the values' producers and reads map to their blocks.
  coarse.derivedStash = fine.derivedStash;
  for (PlanValue &value : coarse.values) {
    if (value.producer >= 0)
      value.producer = group[value.producer];
    for (StashRead &read : value.stashReads) {
      read.layer = group[read.layer];
      for (unsigned &neededBy : read.neededBy)
        if (neededBy != StashRead::kNeverNeeded)
          neededBy = group[neededBy];
    }
  }
  return {std::move(coarse), std::move(starts)};
}

/// Searches `problem`; with `modelLayers` (the model's own layers, not
/// blocks of them nor a given count of the fastest devices), also keeps
/// the tables that bound the branch and bound over 1F1B replays, and with
/// simplified classes the floors of leastLinkFloor (on blocks, both would
/// bound only the plans that cut between blocks). Only plans
/// whose objective is below `capMs` count: with a finite cap, an outcome
/// that does not fit may only mean that none is below it. `stages`, when
/// not zero, fixes the stage count as --stages would.
static llvm::Expected<SearchOutcome> searchPlan(const PlanProblem &problem,
                                                bool modelLayers,
                                                double capMs = kInf,
                                                unsigned stages = 0);

/// Plans a long model on blocks of layers, then maps the plan back.
static llvm::Expected<SearchOutcome> planCoarsened(const PlanProblem &problem,
                                                   unsigned groups) {
  auto [coarse, starts] = coarsen(problem, groups);
  PlanProblem coarseProblem(coarse, problem.cluster(), problem.options());
  llvm::Expected<SearchOutcome> outcome =
      searchPlan(coarseProblem, /*modelLayers=*/false);
  if (!outcome)
    return outcome.takeError();
  PipelinePlan *plan = &outcome->plan;
  unsigned numLayers = problem.numLayers();
  auto toFine = [&, &starts = starts](std::vector<StagePlan> &stages) {
    for (StagePlan &stage : stages) {
      stage.begin = starts[stage.begin];
      stage.end = stage.end < starts.size() ? starts[stage.end] : numLayers;
    }
  };
  toFine(plan->stages);
  for (std::vector<StagePlan> &stages : plan->paretoPlans)
    toFine(stages);
  for (std::vector<StagePlan> &stages : plan->floorPlans)
    toFine(stages);
  plan->exact = false;
  return outcome;
}

unsigned mlir::pipe::search::mostStages(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  if (options.stages)
    return options.stages;
  if (!options.deviceOrder.empty())
    return options.deviceOrder.size();
  return problem.numDevices();
}

/// Explains why `closest`, the plan whose worst memory overflow is least,
/// does not fit: which device, which stage, by how much.
static llvm::Error describeOverflow(const PlanProblem &problem,
                                    ArrayRef<StagePlan> closest) {
  double worst = -kInf;
  std::string where;
  for (auto [s, stage] : llvm::enumerate(closest)) {
    StageMemory memory = problem.stageMemory(
        stage.begin, stage.end, closest.size() - 1 - s, stage.recompute);
    int64_t capacity = problem.capacityBytes(stage.device);
    double over = double(memory.total() - capacity);
    if (over > worst) {
      worst = over;
      const Device &device = problem.cluster().devices[stage.device];
      // The capacity, and where the runtime keeps part of the memory, the
      // whole.
      std::string room = formatBytes(capacity);
      if (device.spec.reservedGB > 0)
        room += llvm::formatv(
            " of its {0} after the runtime's {1}",
            formatBytes(int64_t(device.spec.memoryGB * 1073741824.0)),
            formatBytes(int64_t(device.spec.reservedGB * 1073741824.0)));
      where = llvm::formatv(
          "device '{0}' ({1}, {2}) would hold stage {3} ('{4}' to '{5}') "
          "needing {6}: {7} short",
          device.name, device.spec.kind, room, s,
          problem.graph().layers[stage.begin].name,
          problem.graph().layers[stage.end - 1].name,
          formatBytes(memory.total()), formatBytes(int64_t(over)));
    }
  }
  return llvm::createStringError(
      "the model does not fit the cluster's memory; in the plan that comes "
      "closest, " +
      where);
}

llvm::Expected<PipelinePlan>
mlir::pipe::planPipeline(const PlanProblem &problem) {
  if (llvm::Error error = checkOptions(problem))
    return std::move(error);
  const PlanOptions &options = problem.options();
  // Past this many layers, blocks of layers are planned instead; never
  // fewer blocks than the stages the plan may need.
  unsigned maxLayers = std::max(
      {options.maxExactLayers.value_or(kExactLayers), mostStages(problem), 2u});
  bool coarsened = problem.numLayers() > maxLayers &&
                   options.cutAfter.empty() &&
                   (options.maxExactLayers || !layerSearchIsCheap(problem));
  llvm::Expected<SearchOutcome> outcome =
      coarsened ? planCoarsened(problem, maxLayers)
                : searchPlan(problem, /*modelLayers=*/true);
  // Blocks may fit nowhere where finer cuts fit: then search every layer.
  if (coarsened && outcome && !outcome->fits) {
    coarsened = false;
    outcome = searchPlan(problem, /*modelLayers=*/true);
  }
  if (!outcome)
    return outcome.takeError();
  if (!outcome->fits)
    return describeOverflow(problem, outcome->plan.stages);
  // Floors found on blocks of layers are no floors for the model's own; a
  // short search over its layers gives one. The branch and bound over 1F1B
  // replays counts the cluster's own devices, so it searches every plan
  // even with simplified classes; there it needs the tables' bounds to get
  // anywhere.
  double replayFloorMs = outcome->replayFloorMs;
  double leastLinkFloorMs = outcome->leastLinkFloorMs;
  if (coarsened) {
    // The plan of blocks descends on the layers' cuts first (as finishPlan
    // would have it, but for 1F1B), so that the floor's search replaces it
    // only with a plan faster than that; the search looks below the plan
    // of blocks as it was, where it finds plans that descend further. (Each
    // floor bounds the objective too: a stage's unhidden time is at most its
    // whole time, its step at most its two steps together.)
    PipelinePlan &blocks = outcome->plan;
    blocks.objectiveMs = problem.objectiveMs(blocks.stages);
    double capMs = blocks.objectiveMs;
    if (!problem.options().training ||
        problem.options().schedule != Schedule::OneFOneB)
      blocks.objectiveMs =
          descendOnCuts(problem, blocks.stages, blocks.objectiveMs);
    replayFloorMs = leastLinkFloorMs = floorOverLayers(problem, blocks, capMs);
  }
  return finishPlan(
      problem, std::move(outcome->plan), outcome->proven && !coarsened,
      (outcome->proven || !outcome->suffixes.empty()) && !coarsened,
      replayFloorMs, outcome->suffixes, leastLinkFloorMs);
}

/// Whether every layer alone, as the last stage with its leanest recompute,
/// fits some device: else no plan fits.
static bool everyLayerFitsSomewhere(const PlanProblem &problem) {
  Recompute leanest = problem.recomputeChoices().back();
  int64_t largest = 0;
  for (unsigned d = 0; d < problem.numDevices(); ++d)
    largest = std::max(largest, problem.capacityBytes(d));
  for (unsigned l = 0; l < problem.numLayers(); ++l)
    if (problem.stageMemory(l, l + 1, 0, leanest).total() > largest)
      return false;
  return true;
}

/// With too many devices to count even by kind, each search takes the
/// fastest k devices, one stage each: searches k for the least objective.
/// Faster devices joining shorten the slowest stage; slower ones lengthen
/// the sum (GPipe on 64 devices of four kinds: 7.4% below all 64). A local
/// search: the objective need not be unimodal in k.
static llvm::Expected<SearchOutcome>
searchFastestCount(const PlanProblem &problem) {
  unsigned most = std::min(problem.numDevices(), problem.numLayers());
  std::set<unsigned> tried;
  std::optional<SearchOutcome> best;
  double bestObjective = kInf;
  unsigned bestCount = most;
  // Searches with the fastest `count` devices; returns whether that gave
  // the best plan yet. The first search, with the most devices, gives the
  // plan whose memory overflow is least when none fits.
  auto tryCount = [&](unsigned count) -> llvm::Expected<bool> {
    if (!tried.insert(count).second)
      return false;
    // Past the first search, a finite cap: a count that fits nothing
    // returns at once, without the plan whose overflow is least.
    double cap =
        best ? std::min(bestObjective, std::numeric_limits<double>::max())
             : kInf;
    llvm::Expected<SearchOutcome> outcome =
        searchPlan(problem, /*modelLayers=*/false, cap, count);
    if (!outcome)
      return outcome.takeError();
    double objective = outcome->fits ? outcome->plan.objectiveMs : kInf;
    if (best && objective >= bestObjective)
      return false;
    best = std::move(*outcome);
    bestObjective = objective;
    bestCount = count;
    return true;
  };
  // Fewer devices may fit where more do not (a large layer lands on a
  // small device when more devices share the layers): until some count
  // fits, every count, the most first; none when some layer fits no
  // device even as the last stage.
  if (llvm::Error error = tryCount(most).takeError())
    return std::move(error);
  if (bestObjective == kInf && everyLayerFitsSomewhere(problem))
    for (unsigned count = most - 1; count >= 1 && bestObjective == kInf;
         --count)
      if (llvm::Error error = tryCount(count).takeError())
        return std::move(error);
  if (bestObjective == kInf)
    return std::move(*best);
  // A pattern search: steps from a quarter of the devices down to one.
  for (unsigned step = std::max(1u, most / 4); step; step /= 2) {
    for (bool moved = true; moved;) {
      moved = false;
      for (int count : {int(bestCount) - int(step), int(bestCount + step)}) {
        if (count < 1 || count > int(most))
          continue;
        llvm::Expected<bool> better = tryCount(count);
        if (!better)
          return better.takeError();
        if (*better) {
          moved = true;
          break;
        }
      }
    }
  }
  return std::move(*best);
}

static llvm::Expected<SearchOutcome> searchPlan(const PlanProblem &problem,
                                                bool modelLayers, double capMs,
                                                unsigned stages) {
  const PlanOptions &options = problem.options();
  if (!stages)
    stages = options.stages;
  Partitioner partitioner(problem, stages);
  if (partitioner.takesTheFastest() && !stages && options.cutAfter.empty())
    return searchFastestCount(problem);

  PipelinePlan best;
  best.objectiveMs = capMs;
  // Searches may stop early: past this many, the result reports how far
  // from the optimum it can be.
  SearchBudget budget{kSearchRuns};
  budget.inexactCells = options.tuning.inexactCells;
  // With simplified classes, every run made exact over the cluster's own
  // devices where it can be.
  bool onDevices =
      modelLayers && partitioner.searchOnDevices(kDeviceTransitions);
  searchBottlenecks(problem, partitioner, stages, best, budget);
  if (budget.unexplored < best.objectiveMs) {
    best.exact = false;
    best.gapBound = (best.objectiveMs - budget.unexplored) / best.objectiveMs;
  }
  double leastLinkFloorMs = 0;
  if (modelLayers && partitioner.isApproximate() && !best.stages.empty()) {
    // Every run exact and the search finished: no plan is below the best.
    if (onDevices && partitioner.exactOnDevices() &&
        budget.unexplored >= best.objectiveMs) {
      leastLinkFloorMs = best.objectiveMs;
    } else {
      leastLinkFloorMs = leastLinkFloor(problem, stages, best);
    }
  }
  if (!best.stages.empty()) {
    SearchOutcome outcome{std::move(best), true, !partitioner.isApproximate()};
    outcome.leastLinkFloorMs = leastLinkFloorMs;
    // 1F1B: the floor under every replay; its search's plans, which let
    // warm-ups hide time, seed the refinement on the replay.
    if (problem.options().training &&
        problem.options().schedule == Schedule::OneFOneB) {
      llvm::Expected<Simulation> found =
          simulate(problem, outcome.plan.stages, /*recordEvents=*/false);
      double replayMs = kInf;
      if (found)
        replayMs = found->iterationMs;
      else
        llvm::consumeError(found.takeError());
      // The tables for the search over replays, and the bounds of the
      // suffixes' own stalls, depend neither on the floor nor on each
      // other: dynamic programs of their own build them on two more
      // threads while the floor is searched. None depends on the order
      // they finish in. Their layout (suffixTableLayout) is the searched
      // partitioner's, or that of one with least links, and a partitioner
      // of the same problem, stage count and links fills it. (The pool,
      // declared last, waits for its tasks before the tables go.)
      SuffixTables tables, responses;
      if (modelLayers)
        tables = suffixTableLayout(problem, partitioner, replayMs, stages);
      bool tabulated = !tables.radix.empty();
      llvm::DefaultThreadPool pool(llvm::hardware_concurrency(2));
      if (tabulated) {
        responses = tables;
        pool.async([&problem, &tables, stages] {
          Partitioner own(problem, stages, tables.leastLinks);
          fillSuffixTables(problem, own, tables);
        });
        pool.async(
            [&problem, &responses] { tabulateResponses(problem, responses); });
      }
      if (found)
        outcome.replayFloorMs =
            replayFloor(problem, partitioner, stages, replayMs, modelLayers,
                        outcome.plan.floorPlans);
      if (tabulated) {
        pool.wait();
        tables.takeResponses(responses);
        // (Nor where they would take too many steps; one microbatch has no
        // stalls.)
        if (tables.leastLinks && tables.response.empty() &&
            problem.options().microbatches > 1)
          tables = SuffixTables();
        outcome.suffixes = std::move(tables);
      }
    }
    return outcome;
  }
  // None below the cap.
  if (capMs < kInf)
    return SearchOutcome{std::move(best), false, false};

  // Nothing fits: the plan whose worst memory overflow is least.
  SearchLimits overflow;
  overflow.overflow = true;
  std::optional<std::vector<StagePlan>> closest = partitioner.search(overflow);
  if (!closest)
    return llvm::createStringError(llvm::formatv(
        "no plan of the model's {0} layers on the cluster's {1} devices meets "
        "the given --stages, --cut-after and --device-order",
        problem.numLayers(), problem.numDevices()));
  PipelinePlan failed;
  failed.stages = std::move(*closest);
  return SearchOutcome{std::move(failed), false, false};
}
