//===- PartitionerTest.cpp - the partitioner against exhaustive search ----===//

#include "pipe/Plan/Planner.h"
#include "pipe/Plan/RandomInstances.h"
#include "pipe/Plan/Simulator.h"

#include "gtest/gtest.h"

#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::pipe;
using llvm::Expected;

namespace {

PlanOptions randomOptions(std::mt19937 &rng) {
  PlanOptions options;
  options.training = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
  options.schedule = std::uniform_int_distribution<int>(0, 1)(rng)
                         ? Schedule::GPipe
                         : Schedule::OneFOneB;
  options.microbatches = std::uniform_int_distribution<int>(1, 8)(rng);
  options.optimizer = Optimizer::Adam;
  return options;
}

/// A model, a cluster and options to plan it with.
struct RandomInstance {
  LayerGraph graph;
  Cluster cluster;
  PlanOptions options;
};

/// A random instance of 1 to `maxDevices` devices and 2 to `maxLayers`
/// layers, with randomOptions.
RandomInstance randomInstance(std::mt19937 &rng, unsigned maxDevices,
                              unsigned maxLayers, int64_t paramScale) {
  unsigned numDevices =
      std::uniform_int_distribution<unsigned>(1, maxDevices)(rng);
  unsigned numLayers =
      std::uniform_int_distribution<unsigned>(2, maxLayers)(rng);
  RandomInstance instance;
  instance.graph = randomLayerGraph(rng, numLayers, paramScale);
  instance.cluster = randomCluster(rng, numDevices);
  instance.options = randomOptions(rng);
  return instance;
}

/// The scaling benchmark's instance (bench/plan_scaling.cpp, seed 1):
/// 1F1B training of 16 microbatches with Adam.
RandomInstance scalingInstance(unsigned numLayers, unsigned numDevices,
                               unsigned numKinds, unsigned numHosts) {
  std::mt19937 rng(1);
  RandomInstance instance;
  instance.graph = randomLayerGraph(rng, numLayers, int64_t(1) << 26);
  instance.cluster = roundRobinCluster(numDevices, numKinds, numHosts);
  instance.options.training = true;
  instance.options.microbatches = 16;
  instance.options.optimizer = Optimizer::Adam;
  return instance;
}

/// The partitioner finds the exhaustive search's objective on random small
/// instances, and only when some plan fits.
TEST(Partitioner, MatchesExhaustiveSearch) {
  std::mt19937 rng(20261129);
  unsigned exact = 0, infeasible = 0;
  for (unsigned trial = 0; trial < 120; ++trial) {
    RandomInstance instance = randomInstance(rng, 5, 12, int64_t(1) << 29);
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    std::optional<PipelinePlan> reference = exhaustivePlan(problem);
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!reference) {
      ++infeasible;
      ASSERT_FALSE(bool(plan)) << "trial " << trial;
      std::string message = llvm::toString(plan.takeError());
      EXPECT_NE(message.find("short"), std::string::npos) << message;
      continue;
    }
    ASSERT_TRUE(bool(plan))
        << "trial " << trial << ": " << llvm::toString(plan.takeError());
    EXPECT_NEAR(plan->optimalObjectiveMs, reference->objectiveMs,
                1e-9 * reference->objectiveMs)
        << "trial " << trial;
    EXPECT_TRUE(fitsMemory(problem, plan->stages));
    EXPECT_NEAR(problem.objectiveMs(plan->stages), plan->objectiveMs,
                1e-9 * plan->objectiveMs);
    EXPECT_GE(plan->objectiveMs, plan->optimalObjectiveMs * (1 - 1e-12));
    ++exact;
  }
  // Both outcomes occur, so the test exercises both.
  EXPECT_GT(exact, 60u);
  EXPECT_GT(infeasible, 0u);
}

/// The largest size the issue names: 6 devices and 20 layers.
TEST(Partitioner, MatchesExhaustiveSearchAtSixDevicesTwentyLayers) {
  std::mt19937 rng(6020);
  for (unsigned trial = 0; trial < 3; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 20, int64_t(1) << 28);
    Cluster cluster = randomCluster(rng, 6);
    PlanOptions options = randomOptions(rng);
    options.training = true;
    options.recompute = Recompute::None;
    PlanProblem problem(graph, cluster, options);
    std::optional<PipelinePlan> reference = exhaustivePlan(problem);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_EQ(bool(reference), bool(plan));
    if (!reference) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    EXPECT_NEAR(plan->optimalObjectiveMs, reference->objectiveMs,
                1e-9 * reference->objectiveMs);
  }
}

/// Clusters of a few interchangeable devices, where the search counts
/// devices per class and drops the states that use more devices for no
/// less time.
TEST(Partitioner, MatchesExhaustiveSearchWithInterchangeableDevices) {
  std::mt19937 rng(1129);
  static const char *kinds[] = {"A100-40GB", "T4"};
  unsigned compared = 0;
  for (unsigned trial = 0; trial < 40; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 5)(rng);
    LayerGraph graph = randomLayerGraph(rng, 10, int64_t(1) << 29);
    Cluster cluster;
    for (unsigned d = 0; d < numDevices; ++d) {
      Device device;
      device.name = "d" + std::to_string(d);
      device.host = "h0";
      device.spec = *lookupDeviceKind(kinds[rng() % 2]);
      device.spec.memoryGB = rng() % 2 ? 3 : 6;
      cluster.devices.push_back(device);
    }
    PlanOptions options = randomOptions(rng);
    PlanProblem problem(graph, cluster, options);
    std::optional<PipelinePlan> reference = exhaustivePlan(problem);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_EQ(bool(reference), bool(plan)) << "trial " << trial;
    if (!reference) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    EXPECT_NEAR(plan->optimalObjectiveMs, reference->objectiveMs,
                1e-9 * reference->objectiveMs)
        << "trial " << trial;
    ++compared;
  }
  EXPECT_GT(compared, 20u);
}

/// Hand-chosen constraints are honoured, and never beat the free plan.
TEST(Partitioner, HandGivenPlansAreNeverFaster) {
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial < 40; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 10, int64_t(1) << 26);
    Cluster cluster = randomCluster(rng, 4);
    PlanOptions options = randomOptions(rng);
    PlanProblem free(graph, cluster, options);
    Expected<PipelinePlan> best = planPipeline(free);
    ASSERT_TRUE(bool(best)) << llvm::toString(best.takeError());

    PlanOptions manual = options;
    std::uniform_int_distribution<unsigned> layer(0, 8);
    unsigned a = layer(rng), b = layer(rng);
    manual.cutAfter = {std::min(a, b)};
    if (a != b)
      manual.cutAfter.push_back(std::max(a, b));
    if (trial % 2)
      for (unsigned s = 0; s <= manual.cutAfter.size(); ++s)
        manual.deviceOrder.push_back((trial + s) % 4);
    PlanProblem constrained(graph, cluster, manual);
    Expected<PipelinePlan> plan = planPipeline(constrained);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->stages.size(), manual.cutAfter.size() + 1);
    for (unsigned s = 0; s < manual.cutAfter.size(); ++s)
      EXPECT_EQ(plan->stages[s].end, manual.cutAfter[s] + 1);
    for (unsigned s = 0; s < manual.deviceOrder.size(); ++s)
      EXPECT_EQ(plan->stages[s].device, manual.deviceOrder[s]);
    EXPECT_GE(plan->optimalObjectiveMs, best->optimalObjectiveMs * (1 - 1e-12));
    std::optional<PipelinePlan> reference = exhaustivePlan(constrained);
    ASSERT_TRUE(reference.has_value());
    EXPECT_NEAR(plan->optimalObjectiveMs, reference->objectiveMs,
                1e-9 * reference->objectiveMs);
  }
}

/// The least replayed iteration time over every plan (cut set, device
/// sequence; each stage with its fastest recompute that fits).
/// Calls `visit` with every plan that fits memory, each stage with the
/// fastest recompute that fits it, its devices told apart only by the
/// interchangeable `classes` given; without `fitOnly`, with every plan and
/// the fastest recompute the options allow.
void forEachFittingPlan(
    const PlanProblem &problem,
    const std::vector<std::vector<unsigned>> &classes,
    llvm::function_ref<void(const std::vector<StagePlan> &)> visit,
    bool fitOnly = true) {
  unsigned numLayers = problem.numLayers(), numDevices = problem.numDevices();
  std::vector<StagePlan> plan;
  std::vector<unsigned> used(classes.size(), 0);
  std::function<void(unsigned)> place = [&](unsigned s) {
    if (s == plan.size()) {
      std::vector<StagePlan> fitted = plan;
      if (!fitOnly)
        for (StagePlan &stage : fitted)
          stage.recompute = problem.recomputeChoices().front();
      if (!fitOnly || fitRecompute(problem, fitted))
        visit(fitted);
      return;
    }
    for (unsigned c = 0; c < classes.size(); ++c)
      if (used[c] < classes[c].size()) {
        plan[s].device = classes[c][used[c]++];
        place(s + 1);
        --used[c];
      }
  };
  for (unsigned mask = 0; mask < (1u << (numLayers - 1)); ++mask) {
    if (unsigned(llvm::popcount(mask)) + 1 > numDevices)
      continue;
    plan.clear();
    unsigned begin = 0;
    for (unsigned l = 0; l < numLayers; ++l)
      if (l + 1 == numLayers || (mask >> l & 1)) {
        plan.push_back({begin, l + 1, 0, Recompute::None});
        begin = l + 1;
      }
    place(0);
  }
}

/// The least replay of every plan, telling apart only `classes`.
double bestReplayByClass(const PlanProblem &problem,
                         const std::vector<std::vector<unsigned>> &classes) {
  double best = std::numeric_limits<double>::infinity();
  forEachFittingPlan(problem, classes, [&](const std::vector<StagePlan> &plan) {
    best = std::min(best, simulate(problem, plan, false)->iterationMs);
  });
  return best;
}

/// Each device on its own.
std::vector<std::vector<unsigned>> eachDevice(const PlanProblem &problem) {
  std::vector<std::vector<unsigned>> classes;
  for (unsigned d = 0; d < problem.numDevices(); ++d)
    classes.push_back({d});
  return classes;
}

double bestReplay(const PlanProblem &problem) {
  return bestReplayByClass(problem, eachDevice(problem));
}

/// For GPipe and inference the objective is the replayed iteration time,
/// so the plan also has the least replay of all plans.
TEST(Partitioner, HasTheLeastReplayForGPipeAndInference) {
  std::mt19937 rng(424242);
  unsigned compared = 0;
  for (unsigned trial = 0; trial < 80; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 4)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(3, 9)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 28);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options = randomOptions(rng);
    options.microbatches = std::uniform_int_distribution<int>(2, 8)(rng);
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    double replay = simulate(problem, plan->stages)->iterationMs;
    if (!options.training || options.schedule == Schedule::GPipe) {
      EXPECT_NEAR(replay, bestReplay(problem), 1e-9 * replay)
          << "trial " << trial;
      ++compared;
    }
  }
  EXPECT_GT(compared, 30u);
}

/// 100 layers on 16 devices of two kinds: the search completes, so the plan
/// is proven optimal under the objective; 1000 layers on 64 devices are
/// planned on blocks of layers with a proven gap.
TEST(Partitioner, ProvesOptimalityAtOneHundredLayersSixteenDevices) {
  std::mt19937 rng(100);
  LayerGraph graph = randomLayerGraph(rng, 100, int64_t(1) << 26);
  Cluster cluster;
  for (unsigned d = 0; d < 16; ++d)
    cluster.devices.push_back(
        {"d" + std::to_string(d), "h",
         *lookupDeviceKind(d % 2 ? "V100-32GB" : "A100-80GB")});
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
    PlanOptions options;
    options.training = true;
    options.microbatches = 16;
    options.schedule = schedule;
    options.optimizer = Optimizer::Adam;
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_TRUE(plan->exact);
    EXPECT_TRUE(fitsMemory(problem, plan->stages));
  }

  LayerGraph large = randomLayerGraph(rng, 1000, int64_t(1) << 24);
  for (unsigned d = 16; d < 64; ++d)
    cluster.devices.push_back(
        {"d" + std::to_string(d), "h",
         *lookupDeviceKind(d % 2 ? "V100-32GB" : "A100-80GB")});
  PlanOptions options;
  options.training = true;
  options.microbatches = 32;
  PlanProblem problem(large, cluster, options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_FALSE(plan->exact);
  EXPECT_GT(plan->gapBound, 0);
  EXPECT_LT(plan->gapBound, 0.5);
  EXPECT_EQ(plan->stages.front().begin, 0u);
  EXPECT_EQ(plan->stages.back().end, 1000u);
  for (unsigned s = 1; s < plan->stages.size(); ++s)
    EXPECT_EQ(plan->stages[s].begin, plan->stages[s - 1].end);
}

/// Blocks of layers keep the backward costs derived from the gradient ops:
/// one layer whose gradient costs 40 times its forward pass must not be
/// priced as twice its forward pass when the layers are planned on blocks.
TEST(Partitioner, BlocksKeepDerivedBackwardCosts) {
  std::mt19937 rng(3);
  LayerGraph graph = randomLayerGraph(rng, 40, int64_t(1) << 20);
  for (auto [l, layer] : llvm::enumerate(graph.layers)) {
    layer.ops = {layer.ops.front()};
    layer.ops.front().flops = int64_t(1e11);
    OpCost backward = layer.ops.front();
    backward.flops = int64_t(l == 5 ? 4e12 : 2e11);
    layer.backwardOps = {backward};
  }
  graph.derivedBackward = true;
  Cluster cluster;
  for (unsigned d = 0; d < 2; ++d)
    cluster.devices.push_back(
        {"d" + std::to_string(d), "h", *lookupDeviceKind("A100-80GB")});
  PlanOptions options;
  options.training = true;
  options.schedule = Schedule::GPipe;
  options.microbatches = 8;
  options.maxExactLayers = 40;
  Expected<PipelinePlan> exact =
      planPipeline(PlanProblem(graph, cluster, options));
  options.maxExactLayers = 10;
  Expected<PipelinePlan> blocks =
      planPipeline(PlanProblem(graph, cluster, options));
  ASSERT_TRUE(exact && blocks);
  EXPECT_TRUE(exact->exact);
  EXPECT_FALSE(blocks->exact);
  EXPECT_LT(blocks->objectiveMs, exact->objectiveMs * 1.05);
}

/// Checks `plan`'s replay against the least over every plan of `problem`:
/// never below it; equal to it, with no gap, when proven the least, else
/// within the gap bound, which is then positive. Returns whether it is
/// above the least.
bool checkAgainstLeastReplay(const PlanProblem &problem,
                             const PipelinePlan &plan, unsigned trial) {
  double replay = simulate(problem, plan.stages)->iterationMs;
  double least = bestReplay(problem);
  EXPECT_GE(replay, least * (1 - 1e-9)) << "trial " << trial;
  EXPECT_GE(least, replay * (1 - plan.iterationGapBound) * (1 - 1e-12))
      << "trial " << trial;
  if (plan.iterationExact) {
    EXPECT_NEAR(replay, least, 1e-9 * replay) << "trial " << trial;
    EXPECT_EQ(plan.iterationGapBound, 0) << "trial " << trial;
  } else {
    EXPECT_GT(plan.iterationGapBound, 0) << "trial " << trial;
  }
  return replay > least * (1 + 1e-9);
}

/// A random 1F1B training instance of 2-5 devices and 3-10 layers.
RandomInstance smallOneFOneB(std::mt19937 &rng) {
  unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 5)(rng);
  unsigned numLayers = std::uniform_int_distribution<unsigned>(3, 10)(rng);
  RandomInstance instance;
  instance.graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
  instance.cluster = randomCluster(rng, numDevices);
  instance.options = randomOptions(rng);
  instance.options.training = true;
  instance.options.schedule = Schedule::OneFOneB;
  instance.options.microbatches = std::uniform_int_distribution<int>(2, 8)(rng);
  return instance;
}

/// 1F1B plans have the least replay of every plan, proven. Without steps
/// for the replay search (--plan-replay-steps=0) only its root bounds
/// count, and with few most searches stop early: then some plans are not
/// proven the least, and each gap bound still holds.
TEST(Partitioner, OneFOneBHasTheLeastReplay) {
  std::mt19937 rng(5);
  unsigned total = 0, open = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    RandomInstance instance = smallOneFOneB(rng);
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    ++total;
    EXPECT_TRUE(plan->iterationExact) << "trial " << trial;
    EXPECT_TRUE(fitsMemory(problem, plan->stages));
    EXPECT_FALSE(checkAgainstLeastReplay(problem, *plan, trial));

    // No steps, and so few that the first target search runs out and the
    // rest goes to a search at the incumbent.
    for (uint64_t steps : {uint64_t(0), uint64_t(3000)}) {
      instance.options.replaySteps = steps;
      PlanProblem bounded(instance.graph, instance.cluster, instance.options);
      Expected<PipelinePlan> cut = planPipeline(bounded);
      ASSERT_TRUE(bool(cut)) << "trial " << trial;
      EXPECT_TRUE(fitsMemory(bounded, cut->stages));
      checkAgainstLeastReplay(bounded, *cut, trial);
      open += !cut->iterationExact;
    }
  }
  EXPECT_GT(total, 200u);
  EXPECT_GT(open, 0u);
}

/// When the first target search (2% below the incumbent) cannot finish in
/// its quarter of the budget, the rest goes to a search at the incumbent,
/// which finds faster plans the first one pruned. On this benchmark
/// instance (pipe-plan-scaling 40 12 4 1 1 16 2000000) the first search
/// finds none: without the second the plan would stay the refinement's,
/// the plan of a search without steps.
TEST(Partitioner, ReplaySearchFindsPlansItsFirstTargetPrunes) {
  RandomInstance instance = scalingInstance(40, 12, 4, 1);
  const LayerGraph &graph = instance.graph;
  const Cluster &cluster = instance.cluster;
  PlanOptions &options = instance.options;
  options.replaySteps = 0;
  PlanProblem refinedProblem(graph, cluster, options);
  Expected<PipelinePlan> refined = planPipeline(refinedProblem);
  ASSERT_TRUE(bool(refined));
  options.replaySteps = 2000000;
  PlanProblem searchedProblem(graph, cluster, options);
  Expected<PipelinePlan> searched = planPipeline(searchedProblem);
  ASSERT_TRUE(bool(searched));
  EXPECT_FALSE(searched->iterationExact);
  double before = simulate(refinedProblem, refined->stages)->iterationMs;
  double after = simulate(searchedProblem, searched->stages)->iterationMs;
  EXPECT_LT(after, before * (1 - 1e-3));
}

/// 1F1B training with Adam and from `fewest` to 8 microbatches.
PlanOptions oneFOneBTraining(std::mt19937 &rng, int fewest) {
  PlanOptions options;
  options.training = true;
  options.schedule = Schedule::OneFOneB;
  options.optimizer = Optimizer::Adam;
  options.microbatches = std::uniform_int_distribution<int>(fewest, 8)(rng);
  return options;
}

/// The replay search's tables of least suffix sums under limits: one pass
/// of the dynamic program for all limits gives, number for number, what
/// one run per limit gives. Small instances of mixed devices, and the
/// benchmark's of two and four kinds (with stage counts and cuts given).
TEST(Partitioner, SuffixTablesInOnePassMatchOneRunPerLimit) {
  std::mt19937 rng(31);
  unsigned compared = 0;
  auto compare = [&](const PlanProblem &problem, unsigned trial) {
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return;
    }
    double cap = simulate(problem, plan->stages)->iterationMs;
    SuffixTables onePass = tabulateSuffixes(problem, cap);
    SuffixTables perLimit = tabulateSuffixes(problem, cap, /*perLimit=*/true);
    EXPECT_EQ(onePass.limits, perLimit.limits) << "trial " << trial;
    EXPECT_EQ(onePass.sumWithin, perLimit.sumWithin) << "trial " << trial;
    compared += !onePass.limits.empty();
  };
  for (unsigned trial = 0; trial < 60; ++trial) {
    RandomInstance instance = smallOneFOneB(rng);
    compare(PlanProblem(instance.graph, instance.cluster, instance.options),
            trial);
  }
  for (unsigned trial = 0; trial < 6; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 40, int64_t(1) << 26);
    Cluster cluster = roundRobinCluster(8, trial % 2 ? 4 : 2, 1 + trial % 2);
    PlanOptions options = oneFOneBTraining(rng, 2);
    if (trial == 2)
      options.stages = 5;
    if (trial == 3)
      options.cutAfter = {5, 11, 20, 31};
    compare(PlanProblem(graph, cluster, options), 100 + trial);
  }
  EXPECT_GT(compared, 30u);
}

/// The 1F1B replay search started from the slowest plan that fits, not
/// from the partitioner's: it must find the least replay itself, so every
/// partial plan it skips as no faster than one it searched must be so.
/// Two kinds of three devices each on two hosts, so that many partial plans
/// end at the same layer on the same devices, and links differ.
TEST(Partitioner, ReplaySearchFindsTheLeastFromTheSlowestPlan) {
  std::mt19937 rng(57);
  static const char *kinds[] = {"A100-80GB", "V100-32GB", "T4", "L4"};
  constexpr unsigned kTrials = 100;
  unsigned total = 0, improved = 0;
  for (unsigned trial = 0; trial < kTrials; ++trial) {
    unsigned numLayers = std::uniform_int_distribution<unsigned>(7, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    Cluster cluster;
    for (unsigned group = 0; group < 2; ++group) {
      DeviceSpec spec = *lookupDeviceKind(kinds[rng() % 4]);
      spec.memoryGB = 1 + rng() % 4;
      for (unsigned d = 0; d < 3; ++d)
        cluster.devices.push_back({"d" + std::to_string(cluster.devices.size()),
                                   "h" + std::to_string(rng() % 2), spec});
    }
    PlanOptions options = oneFOneBTraining(rng, 2);
    PlanProblem problem(graph, cluster, options);
    std::vector<std::vector<unsigned>> classes =
        cluster.interchangeableDevices();
    double least = std::numeric_limits<double>::infinity(), slowest = 0;
    PipelinePlan plan;
    forEachFittingPlan(
        problem, classes, [&](const std::vector<StagePlan> &stages) {
          double replay = simulate(problem, stages, false)->iterationMs;
          least = std::min(least, replay);
          if (replay > slowest) {
            slowest = replay;
            plan.stages = stages;
          }
        });
    if (plan.stages.empty())
      continue;
    ++total;
    searchLeastReplay(problem, plan, /*floorMs=*/0);
    EXPECT_TRUE(plan.iterationExact) << "trial " << trial;
    EXPECT_TRUE(fitsMemory(problem, plan.stages));
    double replay = simulate(problem, plan.stages)->iterationMs;
    EXPECT_NEAR(replay, least, 1e-9 * replay) << "trial " << trial;
    improved += least < slowest * (1 - 1e-9);
  }
  EXPECT_GT(total, kTrials / 2);
  EXPECT_GT(improved, kTrials / 2);
}

/// 1F1B on blocks of layers: the gap claimed for the plan's replay holds
/// against the least replay over every plan of the layers.
TEST(Partitioner, OneFOneBBlocksClaimNoGapTooSmall) {
  std::mt19937 rng(9);
  unsigned total = 0, gaps = 0;
  for (unsigned trial = 0; trial < 200; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 4)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(6, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options = oneFOneBTraining(rng, 2);
    options.maxExactLayers =
        std::uniform_int_distribution<unsigned>(numDevices, numLayers - 2)(rng);
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    ++total;
    gaps += checkAgainstLeastReplay(problem, *plan, trial);
  }
  EXPECT_GT(total, 100u);
  // Blocks do miss the least replay on some instances.
  EXPECT_GT(gaps, 0u);
}

/// Blocks of layers may fit no device where finer cuts do: the planner then
/// searches every layer, and fails only when no plan fits.
TEST(Partitioner, BlocksFitWhereverLayersFit) {
  std::mt19937 rng(10611);
  unsigned fits = 0, fitsOnlyFiner = 0;
  for (unsigned trial = 0; trial < 1000; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 4)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(6, 9)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    unsigned scale = std::uniform_int_distribution<unsigned>(5, 400)(rng);
    for (PlanValue &value : graph.values)
      value.bytes *= scale;
    Cluster cluster = randomCluster(rng, numDevices);
    for (Device &device : cluster.devices)
      device.spec.memoryGB = std::uniform_int_distribution<int>(1, 8)(rng);
    PlanOptions options = oneFOneBTraining(rng, 1);
    options.maxExactLayers = numDevices;
    PlanProblem problem(graph, cluster, options);
    std::optional<PipelinePlan> reference = exhaustivePlan(problem);
    Expected<PipelinePlan> plan = planPipeline(problem);
    EXPECT_EQ(bool(plan), bool(reference)) << "trial " << trial;
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    ++fits;
    EXPECT_TRUE(fitsMemory(problem, plan->stages));
    // Every model here is longer than its blocks; a plan of blocks is
    // never proven, so an exact one came from the search on every layer.
    fitsOnlyFiner += plan->exact;
  }
  // 998 of the 1,000 fit; 5 only on finer cuts than the blocks'.
  EXPECT_GT(fits, 900u);
  EXPECT_GE(fitsOnlyFiner, 3u);
}

/// Past the exact range only the replay search's root bounds and the
/// floors count; they still prove a plan the least when they rule out
/// every other, as on one device (found by a reviewer: a 2% gap was claimed
/// there). The relaxed floor proves the objective the least there too.
TEST(Partitioner, OneFOneBBlocksOnOneDeviceAreTheLeast) {
  std::mt19937 rng(7);
  LayerGraph graph = randomLayerGraph(rng, 6, int64_t(1) << 24);
  Cluster cluster;
  cluster.devices.push_back({"d0", "h", *lookupDeviceKind("A100-80GB")});
  PlanOptions options;
  options.training = true;
  options.schedule = Schedule::OneFOneB;
  options.microbatches = 8;
  options.maxExactLayers = 3;
  PlanProblem problem(graph, cluster, options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_TRUE(plan->exact); // though planned on blocks
  EXPECT_EQ(plan->gapBound, 0);
  EXPECT_TRUE(plan->iterationExact);
  EXPECT_EQ(plan->iterationGapBound, 0);
}

/// 1F1B at the largest size the issue names, 6 devices and 20 layers: three
/// kinds with their own memories, two devices of each.
TEST(Partitioner, OneFOneBHasTheLeastReplayAtSixDevicesTwentyLayers) {
  std::mt19937 rng(620);
  static const char *kinds[] = {"A100-40GB", "V100-16GB", "T4"};
  for (unsigned trial = 0; trial < 2; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 20, int64_t(1) << 28);
    Cluster cluster;
    for (unsigned d = 0; d < 6; ++d) {
      Device device{"d" + std::to_string(d), "h",
                    *lookupDeviceKind(kinds[d / 2])};
      device.spec.memoryGB = 2 + 2 * (d / 2) + trial;
      cluster.devices.push_back(device);
    }
    std::vector<std::vector<unsigned>> classes =
        cluster.interchangeableDevices();
    ASSERT_EQ(classes.size(), 3u);
    PlanOptions options;
    options.training = true;
    options.schedule = Schedule::OneFOneB;
    options.microbatches = 4 + 2 * trial;
    options.optimizer = Optimizer::Adam;
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_TRUE(plan->iterationExact);
    double replay = simulate(problem, plan->stages)->iterationMs;
    EXPECT_NEAR(replay, bestReplayByClass(problem, classes), 1e-9 * replay);
  }
}

/// The 1F1B replay is never below sum + (M - 1) max(unhidden stage time,
/// transfer), the bound the floor of the replay search minimizes; and it
/// reaches it on some plans (the bound is tight there).
TEST(Simulator, OneFOneBReplayIsAtLeastTheUnhiddenBound) {
  std::mt19937 rng(77);
  unsigned tight = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(1, 6)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(6, 12)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 20);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options;
    options.training = true;
    options.schedule = Schedule::OneFOneB;
    options.microbatches = std::uniform_int_distribution<int>(1, 12)(rng);
    PlanProblem problem(graph, cluster, options);
    // Random stages on distinct devices, random recompute.
    std::vector<StagePlan> plan;
    std::vector<unsigned> devices(numDevices);
    std::iota(devices.begin(), devices.end(), 0);
    std::shuffle(devices.begin(), devices.end(), rng);
    unsigned begin = 0;
    for (unsigned s = 0; s < numDevices && begin < numLayers; ++s) {
      unsigned end = s + 1 == numDevices
                         ? numLayers
                         : std::uniform_int_distribution<unsigned>(
                               begin + 1, numLayers)(rng);
      plan.push_back({begin, end, devices[s], Recompute(rng() % 3)});
      begin = end;
    }
    double replay = simulate(problem, plan, false)->iterationMs;
    double bound =
        problem.times(plan, /*unhidden=*/true).objective(options.microbatches);
    EXPECT_GE(replay, bound * (1 - 1e-12)) << "trial " << trial;
    EXPECT_LE(bound, problem.objectiveMs(plan) * (1 + 1e-12));
    tight += replay <= bound * (1 + 1e-12);
  }
  EXPECT_GT(tight, 40u);
}

/// Stages that take no time after the first k, but for each microbatch's
/// round trip through them, bound the replay with real stages there: the
/// branch and bound's bound on the plans that extend k stages.
TEST(Simulator, RoundTripStandInBoundsTheReplay) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> time(0.1, 10), link(0, 2);
  unsigned tight = 0, helped = 0;
  for (unsigned trial = 0; trial < 500; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 8)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 12)(rng);
    std::vector<ReplayStage> stages(numStages);
    for (ReplayStage &stage : stages)
      stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
    std::vector<double> cut(numStages - 1);
    for (double &x : cut)
      x = link(rng);
    double real = replay(stages, cut, Schedule::OneFOneB, true, m)->iterationMs;
    for (unsigned k = 1; k < numStages; ++k) {
      // The round trip from the end of a forward pass on stage k - 1 to
      // the gradient's arrival there.
      RoundTrip roundTrip{k, 2 * cut[k - 1]};
      for (unsigned s = k; s < numStages; ++s)
        roundTrip.ms += stages[s].forwardMs + stages[s].recomputeMs +
                        stages[s].backwardMs +
                        (s + 1 < numStages ? 2 * cut[s] : 0);
      std::vector<ReplayStage> standIn(stages.begin(), stages.begin() + k);
      standIn.resize(numStages);
      std::vector<double> standInCut(cut.begin(), cut.begin() + k - 1);
      standInCut.resize(numStages - 1, 0);
      double bound = replay(standIn, standInCut, Schedule::OneFOneB, true, m,
                            false, roundTrip)
                         ->iterationMs;
      double zero =
          replay(standIn, standInCut, Schedule::OneFOneB, true, m)->iterationMs;
      EXPECT_LE(bound, real * (1 + 1e-12)) << "trial " << trial << " k " << k;
      EXPECT_GE(bound, zero);
      tight += bound >= real * (1 - 1e-12);
      helped += bound > zero * (1 + 1e-12);
    }
  }
  // The bound is often the replay itself (772 of 2,250 stand-ins), and the
  // round trip usually adds (1,996).
  EXPECT_GT(tight, 500u);
  EXPECT_GT(helped, 1500u);
}

/// Random 1F1B stage times, with a recompute on about half the stages,
/// and transfers.
std::pair<std::vector<ReplayStage>, std::vector<double>>
randomStages(std::mt19937 &rng, unsigned numStages) {
  std::uniform_real_distribution<double> time(0.1, 10), link(0.01, 2);
  std::vector<ReplayStage> stages(numStages);
  for (ReplayStage &stage : stages)
    stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
  std::vector<double> cut(numStages ? numStages - 1 : 0);
  for (double &x : cut)
    x = link(rng);
  return {stages, cut};
}

/// A replay of a known order skips the stand-in stages that take no time
/// after a round trip, and computes when their gradients leave: the same
/// times as replaying them step by step.
TEST(Simulator, IdleStandInStagesNeedNoSteps) {
  std::mt19937 rng(37);
  std::uniform_real_distribution<double> time(0.1, 10);
  unsigned compared = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 9)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 14)(rng);
    ReplayScratch scratch;
    for (unsigned k = 1; k < numStages; ++k) {
      // k stages, then stand-ins that take no time.
      auto [stages, cut] = randomStages(rng, k);
      stages.resize(numStages);
      cut.resize(numStages - 1, 0);
      RoundTrip roundTrip{k, rng() % 4 ? 3 * time(rng) : 0};
      Expected<Simulation> stepwise =
          replay(stages, cut, Schedule::OneFOneB, true, m, false, roundTrip);
      // The first replay of the shape finds the order; the second knows it.
      for (unsigned again = 0; again < 2; ++again) {
        Expected<Simulation> known =
            replay(stages, cut, Schedule::OneFOneB, true, m, false, roundTrip,
                   &scratch);
        ASSERT_TRUE(stepwise && known);
        EXPECT_EQ(stepwise->iterationMs, known->iterationMs)
            << "trial " << trial << " k " << k;
        EXPECT_EQ(stepwise->bubbleFraction, known->bubbleFraction);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 2000u);
}

/// The latest over a map's row of each input plus the path from it.
double respond(const PrefixResponse &response, unsigned row,
               ArrayRef<double> inputs) {
  unsigned width = inputs.size();
  double latest = -std::numeric_limits<double>::infinity();
  for (unsigned i = 0; i < width; ++i)
    latest = std::max(latest, response.paths[row * width + i] + inputs[i]);
  return latest;
}

/// The map of a pipeline's first stages (PrefixResponse), applied to the
/// arrival times of the gradients in the replay of the whole pipeline,
/// gives the end of every forward pass on the last of them and the end of
/// their work in that replay.
TEST(Simulator, PrefixResponseComposesTheReplay) {
  std::mt19937 rng(53);
  PrefixResponse response;
  unsigned checked = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 7)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 10)(rng);
    auto [stages, cut] = randomStages(rng, numStages);
    Expected<Simulation> whole =
        replay(stages, cut, Schedule::OneFOneB, true, m, true);
    ASSERT_TRUE(bool(whole));
    for (unsigned k = 1; k < numStages; ++k) {
      prefixResponse(ArrayRef(stages).take_front(k),
                     ArrayRef(cut).take_front(k - 1), numStages, m, response);
      ASSERT_EQ(response.paths.size(), size_t(m + 1) * (m + 1));
      // The inputs: each gradient's arrival at stage k - 1, then the start.
      std::vector<double> inputs(m + 1, 0), forwardEnd(m, 0);
      double end = 0;
      for (const SimEvent &event : whole->events) {
        if (event.kind == SimEvent::Gradient && event.stage == k)
          inputs[event.microbatch] = event.endMs;
        if (event.kind == SimEvent::Forward && event.stage == k - 1)
          forwardEnd[event.microbatch] = event.endMs;
        if (event.kind <= SimEvent::Backward && event.stage < k)
          end = std::max(end, event.endMs);
      }
      for (unsigned mb = 0; mb < m; ++mb)
        EXPECT_NEAR(respond(response, mb, inputs), forwardEnd[mb],
                    1e-9 * whole->iterationMs)
            << "trial " << trial << " k " << k << " microbatch " << mb;
      EXPECT_NEAR(respond(response, m, inputs), end, 1e-9 * whole->iterationMs)
          << "trial " << trial << " k " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 800u);
}

/// The store of maps answers as a comparison with every map kept under the
/// key would: a map is skipped exactly when one kept is no later at every
/// finite entry, whichever entry tells them apart.
TEST(Simulator, PrefixMapsSkipExactlyTheMapsOneKeptBeats) {
  std::mt19937 rng(41);
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  constexpr unsigned kWidth = 13;
  // One shape: entry (i, j) is finite when j < i or j is the last column.
  auto randomMap = [&] {
    std::vector<double> paths(kWidth * kWidth, kNone);
    for (unsigned i = 0; i < kWidth; ++i)
      for (unsigned j = 0; j < kWidth; ++j)
        if (j < i || j == kWidth - 1)
          paths[i * kWidth + j] = double(rng() % 50);
    return paths;
  };
  auto noLaterAnywhere = [](const std::vector<double> &a,
                            const std::vector<double> &b) {
    for (auto [x, y] : llvm::zip(a, b))
      if (x > y)
        return false;
    return true;
  };
  for (size_t limit : {size_t(1) << 20, size_t(600)}) {
    PrefixMaps maps(limit);
    std::map<std::string, std::vector<std::vector<double>>> kept;
    size_t keptNumbers = 0;
    unsigned skipped = 0, searched = 0;
    for (unsigned query = 0; query < 3000; ++query) {
      std::string key = rng() % 4 ? "a" : "b";
      std::vector<std::vector<double>> &ofKey = kept[key];
      std::vector<double> paths;
      if (ofKey.empty() || rng() % 4 == 0) {
        paths = randomMap();
      } else {
        // A map kept, one finite entry (most often not a probe) moved.
        paths = ofKey[rng() % ofKey.size()];
        unsigned entry;
        do
          entry = rng() % paths.size();
        while (paths[entry] == kNone);
        paths[entry] += rng() % 2 ? 0.5 : -0.5;
      }
      bool beaten = llvm::any_of(ofKey, [&](const std::vector<double> &map) {
        return noLaterAnywhere(map, paths);
      });
      uint64_t steps = 0;
      EXPECT_EQ(maps.dominatedOrKeep(key, paths, steps), beaten)
          << "query " << query;
      skipped += beaten;
      searched += !beaten;
      size_t numbers = 1 + 8 + (kWidth * (kWidth - 1)) / 2 + kWidth;
      if (!beaten && keptNumbers + numbers <= limit) {
        ofKey.push_back(paths);
        keptNumbers += numbers;
      }
      EXPECT_EQ(maps.numbers(), keptNumbers);
    }
    EXPECT_GT(skipped, 500u);
    EXPECT_GT(searched, 500u);
    maps.clear();
    uint64_t steps = 0;
    EXPECT_FALSE(maps.dominatedOrKeep("a", kept["a"].front(), steps));
    EXPECT_EQ(maps.numbers(), size_t(1 + 8 + 78 + 13));
  }
  // A map of sum zero, or below, beats its copy too.
  for (double value : {0.0, -1.0}) {
    PrefixMaps maps(1 << 10);
    uint64_t steps = 0;
    std::vector<double> paths = {value, kNone, value};
    EXPECT_FALSE(maps.dominatedOrKeep("z", paths, steps));
    EXPECT_TRUE(maps.dominatedOrKeep("z", paths, steps)) << value;
  }
}

/// First stages whose map is no later anywhere than another's of the same
/// shape replay no slower than it followed by any stages: the rule by which
/// the replay search skips partial plans.
TEST(Simulator, PrefixesNoLaterAnywhereReplayNoSlower) {
  std::mt19937 rng(54);
  std::uniform_real_distribution<double> scale(0.8, 1.25);
  PrefixResponse first, second;
  unsigned dominated = 0, faster = 0;
  for (unsigned trial = 0; trial < 3000; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(3, 7)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 10)(rng);
    unsigned k = std::uniform_int_distribution<unsigned>(1, numStages - 1)(rng);
    auto [stages, cut] = randomStages(rng, numStages);
    // Other first stages: each time scaled, some up and some down.
    std::vector<ReplayStage> other(stages.begin(), stages.begin() + k);
    std::vector<double> otherCut(cut.begin(), cut.begin() + k - 1);
    for (ReplayStage &stage : other)
      stage = {stage.forwardMs * scale(rng), stage.recomputeMs * scale(rng),
               stage.backwardMs * scale(rng)};
    for (double &x : otherCut)
      x *= scale(rng);
    prefixResponse(ArrayRef(stages).take_front(k),
                   ArrayRef(cut).take_front(k - 1), numStages, m, first);
    prefixResponse(other, otherCut, numStages, m, second);
    if (!llvm::all_of(llvm::zip(first.paths, second.paths), [](auto pair) {
          return std::get<0>(pair) <= std::get<1>(pair);
        }))
      continue;
    // Only where some time of the other first stages is shorter.
    bool shorter = false;
    for (unsigned s = 0; s < k; ++s)
      shorter |= other[s].forwardMs < stages[s].forwardMs ||
                 other[s].recomputeMs < stages[s].recomputeMs ||
                 other[s].backwardMs < stages[s].backwardMs ||
                 (s + 1 < k && otherCut[s] < cut[s]);
    if (!shorter)
      continue;
    ++dominated;
    // Any stages after: the replay with the first stages is no slower.
    for (unsigned again = 0; again < 5; ++again) {
      auto [rest, restCut] = randomStages(rng, numStages - k);
      std::vector<ReplayStage> a(stages.begin(), stages.begin() + k), b = other;
      a.insert(a.end(), rest.begin(), rest.end());
      b.insert(b.end(), rest.begin(), rest.end());
      std::vector<double> aCut(cut.begin(), cut.begin() + k - 1),
          bCut = otherCut;
      double link = std::uniform_real_distribution<double>(0.01, 2)(rng);
      for (std::vector<double> *c : {&aCut, &bCut}) {
        c->push_back(link);
        c->insert(c->end(), restCut.begin(), restCut.end());
      }
      double ra = replay(a, aCut, Schedule::OneFOneB, true, m)->iterationMs;
      double rb = replay(b, bCut, Schedule::OneFOneB, true, m)->iterationMs;
      EXPECT_LE(ra, rb * (1 + 1e-12)) << "trial " << trial;
      faster += ra < rb * (1 - 1e-12);
    }
  }
  // Some scaled first stages have maps no later anywhere, though some of
  // their times grew.
  EXPECT_GT(dominated, 100u);
  EXPECT_GT(faster, 100u);
}

/// A replay that reuses the order of an earlier one of the same shape (a
/// ReplayScratch) times every step as a replay from scratch does.
TEST(Simulator, ReplaysInAKnownOrderMatch) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<double> time(0, 10);
  ReplayScratch scratch;
  unsigned reused = 0;
  for (unsigned trial = 0; trial < 100; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(1, 5)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 6)(rng);
    Schedule schedule = rng() % 2 ? Schedule::GPipe : Schedule::OneFOneB;
    bool training = rng() % 4 != 0;
    // Three replays of each shape, with other times, then one under the
    // other schedule.
    for (unsigned again = 0; again < 4; ++again) {
      if (again == 3)
        schedule =
            schedule == Schedule::GPipe ? Schedule::OneFOneB : Schedule::GPipe;
      std::vector<ReplayStage> stages(numStages);
      for (ReplayStage &stage : stages)
        stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
      std::vector<double> cut(numStages - 1);
      for (double &x : cut)
        x = time(rng) / 4;
      RoundTrip roundTrip;
      if (numStages > 1 && rng() % 2)
        roundTrip = {unsigned(1 + rng() % (numStages - 1)), time(rng) * 3};
      reused += scratch.knowsOrder(numStages, m, schedule, training);
      Expected<Simulation> fresh =
          replay(stages, cut, schedule, training, m, true, roundTrip);
      Expected<Simulation> known =
          replay(stages, cut, schedule, training, m, true, roundTrip, &scratch);
      ASSERT_TRUE(fresh && known);
      EXPECT_EQ(fresh->iterationMs, known->iterationMs) << "trial " << trial;
      EXPECT_EQ(fresh->bubbleFraction, known->bubbleFraction);
      ASSERT_EQ(fresh->events.size(), known->events.size());
      for (auto [a, b] : llvm::zip(fresh->events, known->events))
        EXPECT_TRUE(a.kind == b.kind && a.stage == b.stage &&
                    a.microbatch == b.microbatch && a.startMs == b.startMs &&
                    a.endMs == b.endMs)
            << "trial " << trial;
    }
  }
  EXPECT_GE(reused, 200u);
}

/// Too many distinct devices to count exactly: the fastest devices take the
/// stages, as many as the model has layers, or as the cuts make.
TEST(Partitioner, ManyDistinctDevicesUseTheFastest) {
  std::mt19937 rng(20);
  LayerGraph graph = randomLayerGraph(rng, 5, 1 << 20);
  Cluster cluster;
  for (unsigned d = 0; d < 20; ++d) {
    Device device{"d" + std::to_string(d), "h",
                  *lookupDeviceKind(d == 19 ? "T4" : "A100-80GB")};
    device.spec.memoryGB = 40 + d; // every device its own class
    cluster.devices.push_back(device);
  }
  PlanOptions options;
  options.microbatches = 8;
  PlanProblem problem(graph, cluster, options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_LE(plan->stages.size(), 5u);

  options.cutAfter = {2};
  PlanProblem cut(graph, cluster, options);
  plan = planPipeline(cut);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->stages.size(), 2u);
  for (const StagePlan &stage : plan->stages)
    EXPECT_NE(stage.device, 19u) << "the slow T4 took a stage";
}

/// With too many devices to count even by kind, the fastest k take a stage
/// each, and k is searched: slow devices that only lengthen the sum stay
/// out. Every device its own class here: 4 A100s and 16 T4s.
TEST(Partitioner, FastestDevicesTakeTheBestCount) {
  std::mt19937 rng(21);
  LayerGraph graph = randomLayerGraph(rng, 40, int64_t(1) << 20);
  Cluster cluster;
  for (unsigned d = 0; d < 20; ++d) {
    Device device{"d" + std::to_string(d), "h",
                  *lookupDeviceKind(d < 4 ? "A100-80GB" : "T4")};
    device.spec.memoryGB = 16 + d; // every device its own class
    cluster.devices.push_back(device);
  }
  for (Schedule schedule : {Schedule::OneFOneB, Schedule::GPipe}) {
    PlanOptions options;
    options.training = true;
    options.schedule = schedule;
    options.microbatches = 8;
    Expected<PipelinePlan> plan =
        planPipeline(PlanProblem(graph, cluster, options));
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_FALSE(plan->exact);
    double least = std::numeric_limits<double>::infinity();
    unsigned leastCount = 0;
    for (unsigned count = 1; count <= 20; ++count) {
      options.stages = count;
      Expected<PipelinePlan> fixed =
          planPipeline(PlanProblem(graph, cluster, options));
      ASSERT_TRUE(bool(fixed)) << llvm::toString(fixed.takeError());
      if (fixed->optimalObjectiveMs < least) {
        least = fixed->optimalObjectiveMs;
        leastCount = count;
      }
    }
    EXPECT_LT(leastCount, 20u);
    EXPECT_NEAR(plan->optimalObjectiveMs, least, 1e-9 * least);
  }
}

/// There, fewer devices may fit where more do not: with many of the
/// fastest devices in order, a large layer near the end lands on a T4.
/// The search tries smaller counts until one fits.
TEST(Partitioner, FastestDevicesFitWithFewer) {
  std::mt19937 rng(23);
  LayerGraph graph = randomLayerGraph(rng, 32, int64_t(1) << 20);
  graph.params.push_back({"head", int64_t(8) << 30, /*trainable=*/true});
  graph.layers[30].params.push_back(graph.params.size() - 1);
  Cluster cluster;
  for (unsigned d = 0; d < 20; ++d) {
    Device device{"d" + std::to_string(d), "h",
                  *lookupDeviceKind(d < 4 ? "A100-80GB" : "T4")};
    device.spec.memoryGB -= 0.01 * d; // every device its own class
    cluster.devices.push_back(device);
  }
  PlanOptions options;
  options.training = true;
  options.microbatches = 8;
  options.optimizer = Optimizer::Adam;
  PlanProblem problem(graph, cluster, options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_TRUE(fitsMemory(problem, plan->stages));
  for (const StagePlan &stage : plan->stages)
    if (stage.begin <= 30 && 30 < stage.end)
      EXPECT_EQ(cluster.devices[stage.device].spec.kind, "A100-80GB");
}

/// There, devices as fast go host by host: neighbouring stages share a
/// host's links, and the pipeline crosses between the two hosts once,
/// though the cluster file alternates them.
TEST(Partitioner, FastestDevicesGoHostByHost) {
  std::mt19937 rng(22);
  LayerGraph graph = randomLayerGraph(rng, 40, int64_t(1) << 20);
  Cluster cluster;
  for (unsigned d = 0; d < 20; ++d) {
    Device device{"d" + std::to_string(d), d % 2 ? "h1" : "h0",
                  *lookupDeviceKind("A100-80GB")};
    device.spec.memoryGB = 40 + d; // every device its own class
    cluster.devices.push_back(device);
  }
  PlanOptions options;
  options.microbatches = 8;
  Expected<PipelinePlan> plan =
      planPipeline(PlanProblem(graph, cluster, options));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_GT(plan->stages.size(), 4u);
  unsigned crossings = 0;
  for (unsigned s = 1; s < plan->stages.size(); ++s)
    crossings += cluster.devices[plan->stages[s].device].host !=
                 cluster.devices[plan->stages[s - 1].device].host;
  EXPECT_LE(crossings, 1u);
}

TEST(Partitioner, RejectsImpossibleStageCounts) {
  std::mt19937 rng(1);
  LayerGraph graph = randomLayerGraph(rng, 6, 1 << 20);
  Cluster cluster = randomCluster(rng, 2);
  PlanOptions options;
  options.stages = 3;
  PlanProblem problem(graph, cluster, options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_FALSE(bool(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "3 stages need 3 devices, but the cluster has 2");
}

/// Uniform stages, free transfers: GPipe's bubble is (S-1)/(M+S-1) and
/// 1F1B's iteration takes as long.
TEST(Simulator, GPipeBubbleMatchesTheClosedForm) {
  LayerGraph graph;
  graph.values.push_back({0, -1});
  for (unsigned l = 0; l < 4; ++l) {
    PlanLayer layer;
    layer.name = "l" + std::to_string(l);
    OpCost cost;
    cost.flops = int64_t(1e12);
    cost.contraction = true;
    layer.ops = {cost};
    graph.layers.push_back(layer);
  }
  Cluster cluster;
  for (unsigned d = 0; d < 4; ++d)
    cluster.devices.push_back(
        {"g" + std::to_string(d), "h", *lookupDeviceKind("A100-80GB")});
  for (unsigned d = 0; d + 1 < 4; ++d)
    cluster.setLink(d, d + 1, {"ideal", 1e6, 0});
  for (unsigned m : {1u, 2u, 4u, 8u, 32u}) {
    for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB}) {
      PlanOptions options;
      options.training = true;
      options.microbatches = m;
      options.schedule = schedule;
      PlanProblem problem(graph, cluster, options);
      std::vector<StagePlan> plan;
      for (unsigned s = 0; s < 4; ++s)
        plan.push_back({s, s + 1, s, Recompute::None});
      Expected<Simulation> simulation = simulate(problem, plan);
      ASSERT_TRUE(bool(simulation));
      double stage = problem.stageCost(0, 1, 0, 0, Recompute::None).busyMs();
      EXPECT_NEAR(simulation->bubbleFraction, 3.0 / (m + 3), 1e-12);
      EXPECT_NEAR(simulation->iterationMs, (m + 3) * stage, 1e-9);
      // And the objective agrees on uniform stages.
      EXPECT_NEAR(problem.objectiveMs(plan), simulation->iterationMs, 1e-9);
    }
  }
}

/// Inference is a flow shop of identical jobs, whose makespan is exactly
/// the objective: sum + (M - 1) * max, transfers included.
TEST(Simulator, InferenceMatchesTheObjectiveExactly) {
  std::mt19937 rng(3);
  for (unsigned trial = 0; trial < 50; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 8, 1 << 20);
    Cluster cluster = randomCluster(rng, 4);
    PlanOptions options = randomOptions(rng);
    options.training = false;
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    Expected<Simulation> simulation = simulate(problem, plan->stages);
    ASSERT_TRUE(bool(simulation));
    EXPECT_NEAR(simulation->iterationMs, plan->objectiveMs,
                1e-9 * plan->objectiveMs);
  }
}

TEST(Simulator, OneFOneBProgramsKeepAtMostSMinusIInFlight) {
  for (unsigned s = 0; s < 4; ++s) {
    std::vector<ProgramStep> program =
        stageProgram(Schedule::OneFOneB, true, s, 4, 8);
    ASSERT_EQ(program.size(), 16u);
    int inFlight = 0, most = 0;
    for (ProgramStep step : program) {
      inFlight += step.phase == Phase::Forward ? 1 : -1;
      most = std::max(most, inFlight);
      ASSERT_GE(inFlight, 0);
    }
    EXPECT_EQ(most, int(4 - s));
    EXPECT_EQ(inFlight, 0);
  }
}

} // namespace

/// The relaxed floors are below the objective and the replay of every plan,
/// whether it fits or not, and a plan on blocks of layers claims no gap
/// smaller than its distance from the least objective.
TEST(RelaxedFloor, BelowEveryPlan) {
  std::mt19937 rng(1130);
  unsigned checked = 0, blocked = 0;
  for (unsigned trial = 0; trial < 150; ++trial) {
    RandomInstance instance = randomInstance(rng, 4, 8, int64_t(1) << 28);
    // Some with a recompute forced on every stage.
    if (unsigned forced = trial % 4; forced && forced < 3)
      instance.options.recompute =
          forced == 1 ? Recompute::Selective : Recompute::Full;
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    double objectiveFloor = relaxedFloorMs(problem, /*replay=*/false);
    double replayFloor = relaxedFloorMs(problem, /*replay=*/true);
    EXPECT_GT(objectiveFloor, 0) << "trial " << trial;
    EXPECT_GT(replayFloor, 0) << "trial " << trial;
    forEachFittingPlan(
        problem, eachDevice(problem),
        [&](const std::vector<StagePlan> &plan) {
          EXPECT_LE(objectiveFloor, problem.objectiveMs(plan) * (1 + 1e-9))
              << "trial " << trial;
          EXPECT_LE(replayFloor,
                    simulate(problem, plan, false)->iterationMs * (1 + 1e-9))
              << "trial " << trial;
          ++checked;
        },
        /*fitOnly=*/false);

    std::optional<PipelinePlan> least = exhaustivePlan(problem);
    if (!least || problem.numLayers() < 4 || problem.numDevices() < 2)
      continue;
    instance.options.maxExactLayers = problem.numLayers() / 2;
    PlanProblem blocks(instance.graph, instance.cluster, instance.options);
    Expected<PipelinePlan> plan = planPipeline(blocks);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    // A plan on blocks that meets the floor is exact: the least.
    if (plan->exact)
      EXPECT_NEAR(plan->optimalObjectiveMs, least->objectiveMs,
                  1e-9 * least->objectiveMs)
          << "trial " << trial;
    else
      ++blocked;
    EXPECT_GE(least->objectiveMs,
              plan->optimalObjectiveMs * (1 - plan->gapBound) * (1 - 1e-12))
        << "trial " << trial;
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(blocked, 10u);
}

/// A random layer graph whose layers all run the same op.
static LayerGraph identicalLayers(unsigned seed, unsigned numLayers) {
  std::mt19937 rng(seed);
  LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 20);
  for (PlanLayer &layer : graph.layers)
    layer.ops = {graph.layers.front().ops.front()};
  return graph;
}

/// With identical devices and identical layers, as many per device, the
/// floor is the optimum but for its transfers: the relaxation loses
/// nothing else there, and a recompute the options force counts in full.
TEST(RelaxedFloor, TightOnIdenticalLayersAndDevices) {
  LayerGraph graph = identicalLayers(7, 12);
  Cluster cluster;
  for (unsigned d = 0; d < 4; ++d)
    cluster.devices.push_back(
        {"d" + std::to_string(d), "h", *lookupDeviceKind("A100-80GB")});
  for (auto [schedule, recompute] :
       {std::pair(Schedule::OneFOneB, Recompute::None),
        std::pair(Schedule::GPipe, Recompute::None),
        std::pair(Schedule::OneFOneB, Recompute::Full)}) {
    PlanOptions options;
    options.training = true;
    options.schedule = schedule;
    options.microbatches = 8;
    if (recompute != Recompute::None)
      options.recompute = recompute;
    PlanProblem problem(graph, cluster, options);
    std::vector<StagePlan> even;
    double transfers = 0;
    for (unsigned s = 0; s < 4; ++s) {
      even.push_back({3 * s, 3 * s + 3, s, recompute});
      if (s)
        transfers += problem.cutMs(3 * s - 1, s - 1, s);
    }
    double stage = problem.stageCost(0, 3, 0, 0, recompute).busyMs();
    // Each transfer counts both ways in the sum.
    EXPECT_NEAR(relaxedFloorMs(problem, /*replay=*/false),
                problem.objectiveMs(even) - 2 * transfers, 1e-6 * stage);
    EXPECT_NEAR(relaxedFloorMs(problem, /*replay=*/false),
                4 * stage + 7 * stage, 1e-6 * stage);
  }
}

/// With identical layers on two kinds of devices, the relaxation's optimum
/// is the least over the share of layers on the first kind of a convex
/// piecewise-linear function, at one of its breakpoints: the floor reaches
/// it.
TEST(RelaxedFloor, ReachesTheRelaxationsOptimum) {
  LayerGraph graph = identicalLayers(8, 24);
  Cluster cluster;
  unsigned counts[] = {2, 3};
  for (unsigned d = 0; d < 5; ++d)
    cluster.devices.push_back({"d" + std::to_string(d), "h",
                               *lookupDeviceKind(d < 2 ? "A100-80GB" : "T4")});
  PlanOptions options;
  options.training = true;
  options.microbatches = 8;
  PlanProblem problem(graph, cluster, options);
  double layers = 24, lambda = 7;
  double times[] = {
      problem.layerForwardMs(0, 0) + problem.layerBackwardMs(0, 0),
      problem.layerForwardMs(0, 2) + problem.layerBackwardMs(0, 2)};
  double least = std::min(times[0], times[1]);
  double floor = std::max(least, layers * least / 5);
  // J(a) with a layers on the first kind, spread evenly on its devices.
  auto objective = [&](double a) {
    double b = layers - a;
    return a * times[0] + b * times[1] +
           lambda * std::max({a * times[0] / counts[0],
                              b * times[1] / counts[1], floor});
  };
  double best = std::min(objective(0), objective(layers));
  // Where the two kinds' loads meet, or one meets the floor.
  double meet = layers * times[1] / counts[1] /
                (times[0] / counts[0] + times[1] / counts[1]);
  for (double a : {meet, floor * counts[0] / times[0],
                   layers - floor * counts[1] / times[1]})
    if (a >= 0 && a <= layers)
      best = std::min(best, objective(a));
  EXPECT_NEAR(relaxedFloorMs(problem, /*replay=*/false), best, 1e-6 * best);
}

/// Past 256 layers, the search over every layer still runs where it is
/// cheap (300 layers on 16 devices of two kinds: 1.4 million transitions),
/// unless --plan-exact-layers is given.
TEST(Partitioner, ExactPastTheLayerCountWhereCheap) {
  RandomInstance instance = scalingInstance(300, 16, 2, 1);
  instance.options.schedule = Schedule::GPipe;
  Expected<PipelinePlan> plan = planPipeline(
      PlanProblem(instance.graph, instance.cluster, instance.options));
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_TRUE(plan->exact);
  EXPECT_TRUE(plan->iterationExact);

  instance.options.maxExactLayers = 256;
  Expected<PipelinePlan> blocks = planPipeline(
      PlanProblem(instance.graph, instance.cluster, instance.options));
  ASSERT_TRUE(bool(blocks)) << llvm::toString(blocks.takeError());
  EXPECT_FALSE(blocks->exact);
  EXPECT_GE(blocks->objectiveMs, plan->objectiveMs * (1 - 1e-12));

  // Four kinds (18 million transitions): blocks.
  RandomInstance costly = scalingInstance(300, 16, 4, 1);
  costly.options.schedule = Schedule::GPipe;
  Expected<PipelinePlan> onBlocks =
      planPipeline(PlanProblem(costly.graph, costly.cluster, costly.options));
  ASSERT_TRUE(bool(onBlocks)) << llvm::toString(onBlocks.takeError());
  EXPECT_FALSE(onBlocks->exact);
}

/// Past the exact range (the scaling benchmark's 1000 layers on 64 devices
/// of two kinds, on blocks of layers), the gaps the plan claims come from
/// the relaxed floors: 4.0% and 4.0% (13.4% and 16.2% before them).
TEST(RelaxedFloor, BoundsBlockedPlansClosely) {
  RandomInstance instance = scalingInstance(1000, 64, 2, 4);
  PlanProblem problem(instance.graph, instance.cluster, instance.options);
  Expected<PipelinePlan> plan = planPipeline(problem);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_FALSE(plan->exact);
  EXPECT_LT(plan->gapBound, 0.06);
  EXPECT_LT(plan->iterationGapBound, 0.06);
}
