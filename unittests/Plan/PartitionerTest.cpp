//===- PartitionerTest.cpp - the partitioner against exhaustive search ----===//

#include "Search/Partitioner.h"
#include "PlanTestSupport.h"

#include "gtest/gtest.h"

#include <array>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::pipe;
using llvm::Expected;

namespace {

/// The exhaustive search's least plan and the planner's plan of a problem.
struct Compared {
  std::optional<PipelinePlan> reference, plan;
};

/// Plans `problem` both ways and checks that the planner finds a plan
/// exactly when some plan fits, of the exhaustive search's objective.
Compared compareWithExhaustive(const PlanProblem &problem, unsigned trial) {
  Compared compared;
  compared.reference = exhaustivePlan(problem);
  Expected<PipelinePlan> plan = planPipeline(problem);
  EXPECT_EQ(bool(compared.reference), bool(plan)) << "trial " << trial;
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return compared;
  }
  compared.plan = std::move(*plan);
  if (compared.reference) {
    EXPECT_NEAR(compared.plan->optimalObjectiveMs,
                compared.reference->objectiveMs,
                1e-9 * compared.reference->objectiveMs)
        << "trial " << trial;
  }
  return compared;
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

/// Hosts alike in devices and links are interchangeable: past classCells
/// the search counts devices up to relabeling such hosts, and stays exact.
/// Random clusters of two to four identical hosts, sometimes with a host
/// unlike them or a link that breaks their symmetry; a third each with
/// --stages or --cut-after. Every plan claimed the least is the least of
/// an exhaustive search, and every gap claimed holds (objective and, for
/// 1F1B, replay).
TEST(Partitioner, IdenticalHostsCountedUpToSymmetry) {
  std::mt19937 rng(1202);
  unsigned symmetric = 0, exact = 0, total = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    Cluster cluster = identicalHosts(rng, 6);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(3, 8)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 28);
    PlanOptions options = randomOptions(rng);
    options.tuning.classCells = 0;
    fixStagesOrCuts(rng, options, numLayers, cluster.devices.size());
    PlanProblem problem(graph, cluster, options);
    Partitioner partitioner(problem);
    EXPECT_EQ(partitioner.countsUpToSymmetry(),
              !partitioner.keyRadix().size() && !partitioner.isApproximate())
        << "trial " << trial;
    std::optional<PipelinePlan> plan = checkAgainstExhaustive(problem, trial);
    if (!plan)
      continue;
    ++total;
    symmetric += partitioner.countsUpToSymmetry();
    if (partitioner.countsUpToSymmetry()) {
      EXPECT_TRUE(plan->exact) << "trial " << trial;
    }
    exact += plan->exact;
    EXPECT_TRUE(fitsMemory(problem, plan->stages)) << "trial " << trial;
    checkAgainstLeastReplay(problem, *plan, trial);
  }
  EXPECT_GT(total, 250u);
  // Every cluster here has two hosts that swap (a link between two hosts
  // leaves them a pair, and the others another), so none is simplified
  // (SimplifiedClassesClaimNoGapTooSmall tests those), and every plan is
  // proven.
  EXPECT_EQ(symmetric, total);
  EXPECT_EQ(exact, total);
}

/// Limits on a plan's slowest steps (and, with split bottlenecks, on its
/// slowest stage in all): random shares of those of the plan with `times`,
/// none on run 0.
static SearchLimits randomStepLimits(std::mt19937 &rng,
                                     const PlanProblem &problem,
                                     const PlanProblem::Times &times,
                                     unsigned run, bool limitStep) {
  SearchLimits limits;
  if (run == 0)
    return limits;
  std::uniform_real_distribution<double> share(0.3, 1);
  limits.forward = times.slowestForward * share(rng);
  if (problem.splitBottleneck()) {
    limits.backward = times.slowestBackward * share(rng);
    if (limitStep)
      limits.step = times.slowestStep * share(rng) * 2;
  }
  return limits;
}

/// Checks that `plan` runs the layers in order, each stage on a device of
/// its own.
static void expectStagesInOrder(const PlanProblem &problem,
                                ArrayRef<StagePlan> plan, unsigned trial) {
  std::vector<bool> taken(problem.numDevices(), false);
  unsigned begin = 0;
  for (const StagePlan &stage : plan) {
    EXPECT_FALSE(taken[stage.device]) << "trial " << trial;
    taken[stage.device] = true;
    EXPECT_EQ(stage.begin, begin) << "trial " << trial;
    EXPECT_LT(stage.begin, stage.end) << "trial " << trial;
    begin = stage.end;
  }
  EXPECT_EQ(begin, problem.numLayers()) << "trial " << trial;
}

/// The dynamic program over keys counted up to the symmetry of identical
/// hosts finds the least sum that the one over the cluster's classes
/// finds, under the same limits (random ones on the slowest steps, and on
/// unhidden times), with no device taken twice. Clusters as in
/// IdenticalHostsCountedUpToSymmetry, with up to twelve layers.
TEST(Partitioner, SymmetricKeysFindTheLeastSumUnderLimits) {
  std::mt19937 rng(1203);
  unsigned compared = 0, symmetric = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    Cluster cluster = identicalHosts(rng, 12);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(3, 12)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 28);
    PlanOptions options = randomOptions(rng);
    options.tuning.classCells = 0;
    PlanProblem counted(graph, cluster, options);
    options.tuning.classCells = 4e6;
    PlanProblem plain(graph, cluster, options);
    Partitioner symmetricSearch(counted), plainSearch(plain);
    if (!symmetricSearch.countsUpToSymmetry())
      continue;
    ++symmetric;
    std::optional<std::vector<StagePlan>> unlimited =
        plainSearch.search(SearchLimits());
    if (!unlimited)
      continue;
    PlanProblem::Times times = plain.times(*unlimited, false);
    for (unsigned run = 0; run < 6; ++run) {
      SearchLimits limits = randomStepLimits(rng, plain, times, run, false);
      limits.unhidden = run == 5 && !plain.splitBottleneck();
      std::optional<std::vector<StagePlan>> got =
                                                symmetricSearch.search(limits),
                                            want = plainSearch.search(limits);
      ASSERT_EQ(bool(got), bool(want)) << "trial " << trial << " run " << run;
      if (!got)
        continue;
      ++compared;
      double gotSum = counted.times(*got, limits.unhidden).sum,
             wantSum = plain.times(*want, limits.unhidden).sum;
      EXPECT_NEAR(gotSum, wantSum, 1e-9 * wantSum)
          << "trial " << trial << " run " << run;
      expectStagesInOrder(counted, *got, trial);
    }
  }
  EXPECT_GT(symmetric, 200u);
  EXPECT_GT(compared, 800u);
}

/// Up to `maxDevices` devices of two kinds with two memories on two or
/// three hosts, so that devices with the same numbers sit on several
/// hosts; some hosts get a faster link of their own.
static Cluster kindsOnSeveralHosts(std::mt19937 &rng, unsigned maxDevices) {
  static const char *kinds[] = {"A100-80GB", "T4"};
  unsigned numDevices =
      std::uniform_int_distribution<unsigned>(2, maxDevices)(rng);
  unsigned numHosts = std::uniform_int_distribution<unsigned>(2, 3)(rng);
  Cluster cluster;
  for (unsigned d = 0; d < numDevices; ++d) {
    Device device;
    device.name = "d" + std::to_string(d);
    device.host = "h" + std::to_string(rng() % numHosts);
    device.spec = *lookupDeviceKind(kinds[rng() % 2]);
    device.spec.memoryGB = rng() % 2 ? 2 : 4;
    device.spec.reservedGB = 0;
    cluster.devices.push_back(device);
  }
  if (rng() % 2)
    cluster.setLink(0, 1, {"fast", 200, 1});
  return cluster;
}

/// With classes simplified to one per kind, searchOnDevices makes every
/// search find the least sum that the search over the cluster's own
/// classes finds, under random limits, with no device taken twice; the
/// simplified search alone misses it on some. Every other cluster has
/// identical hosts, whose states the search counts up to their symmetry;
/// a third of the runs have --stages or --cut-after. A search that gives
/// up returns the better of its incumbent (the relaxation's plan on near
/// devices) and the simplified classes' plan, better on some.
TEST(Partitioner, SearchOnDevicesFindsTheLeastSumUnderLimits) {
  std::mt19937 rng(1201);
  unsigned compared = 0, missed = 0, missedFixed = 0, symmetric = 0, gaveUp = 0,
           better = 0;
  for (unsigned trial = 0; trial < 550; ++trial) {
    Cluster cluster =
        trial % 2 ? identicalHosts(rng, 9) : kindsOnSeveralHosts(rng, 8);
    if (!identicalHostGroups(PlanProblem(LayerGraph(), cluster, PlanOptions()),
                             cluster.interchangeableDevices())
             .empty())
      ++symmetric;
    unsigned numLayers = std::uniform_int_distribution<unsigned>(3, 12)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 28);
    PlanOptions options =
        positionFreeOptions(rng, numLayers, cluster.devices.size());
    PlanProblem simplified(graph, cluster, options);
    options.tuning.classCells = 4e6;
    PlanProblem plain(graph, cluster, options);
    Partitioner onDevices(simplified), byKind(simplified), exact(plain),
        starved(simplified);
    ASSERT_TRUE(onDevices.isApproximate()) << "trial " << trial;
    ASSERT_FALSE(exact.isApproximate()) << "trial " << trial;
    ASSERT_TRUE(onDevices.searchOnDevices(uint64_t(1) << 40))
        << "trial " << trial;
    // Out of transitions at once: plans no worse than the simplified
    // classes', and no claim to be exact.
    ASSERT_TRUE(starved.searchOnDevices(1)) << "trial " << trial;
    std::optional<std::vector<StagePlan>> unlimited =
        exact.search(SearchLimits());
    if (!unlimited)
      continue;
    PlanProblem::Times times = plain.times(*unlimited, false);
    for (unsigned run = 0; run < 6; ++run) {
      SearchLimits limits = randomStepLimits(rng, plain, times, run, true);
      if (run == 5)
        limits.sumCap = times.sum * 1.01;
      // In order, no device twice, as the options allow, within the
      // limits (every stage and transfer, and the sum cap) and fitting.
      auto expectValid = [&](ArrayRef<StagePlan> plan) {
        expectStagesInOrder(simplified, plan, trial);
        EXPECT_TRUE(allowedByOptions(simplified, plan)) << "trial " << trial;
        PlanProblem::Times times = simplified.times(plan, false);
        double slack = 1 + 1e-9;
        EXPECT_LE(times.slowestForward, limits.forward * slack)
            << "trial " << trial << " run " << run;
        if (simplified.splitBottleneck()) {
          EXPECT_LE(times.slowestBackward, limits.backward * slack)
              << "trial " << trial << " run " << run;
          EXPECT_LE(times.slowestStep, limits.step * slack)
              << "trial " << trial << " run " << run;
        }
        EXPECT_LE(times.sum, limits.sumCap * slack)
            << "trial " << trial << " run " << run;
        EXPECT_TRUE(fitsMemory(simplified, plan)) << "trial " << trial;
      };
      std::optional<std::vector<StagePlan>> got = onDevices.search(limits),
                                            want = exact.search(limits);
      ASSERT_EQ(bool(got), bool(want)) << "trial " << trial << " run " << run;
      if (!got)
        continue;
      ++compared;
      double gotSum = simplified.times(*got, false).sum,
             wantSum = plain.times(*want, false).sum;
      EXPECT_NEAR(gotSum, wantSum, 1e-9 * wantSum)
          << "trial " << trial << " run " << run;
      std::optional<std::vector<StagePlan>> kinds = byKind.search(limits);
      bool miss =
          !kinds || simplified.times(*kinds, false).sum > wantSum * (1 + 1e-9);
      missed += miss;
      missedFixed += miss && (options.stages || !options.cutAfter.empty());
      std::optional<std::vector<StagePlan>> cut = starved.search(limits);
      if (!starved.exactOnDevices()) {
        ++gaveUp;
        // The better of the incumbent (the relaxation's plan on near
        // devices) and the simplified classes' plan.
        ASSERT_TRUE(cut || !kinds) << "trial " << trial << " run " << run;
        if (cut) {
          double cutSum = simplified.times(*cut, false).sum;
          EXPECT_GE(cutSum, wantSum * (1 - 1e-9))
              << "trial " << trial << " run " << run;
          if (kinds)
            EXPECT_LE(cutSum, simplified.times(*kinds, false).sum)
                << "trial " << trial << " run " << run;
          better += kinds && cutSum < simplified.times(*kinds, false).sum;
          expectValid(*cut);
        }
      }
      expectValid(*got);
    }
    EXPECT_TRUE(onDevices.exactOnDevices()) << "trial " << trial;
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(missed, 20u);
  EXPECT_GT(missedFixed, 5u);
  EXPECT_GT(symmetric, 150u);
  EXPECT_GT(gaveUp, 100u);
  // (289 and 35 when written.)
  EXPECT_GT(better, 10u);
}

/// End to end: plans of GPipe and inference on simplified classes are
/// proven the least where the searches over devices finish, and match an
/// exhaustive search; also with --stages or --cut-after.
TEST(Partitioner, SimplifiedClassesProvenOnDevices) {
  std::mt19937 rng(1202);
  unsigned total = 0, exact = 0;
  for (unsigned trial = 0; trial < 150; ++trial) {
    Cluster cluster =
        trial % 2 ? identicalHosts(rng, 6) : kindsOnSeveralHosts(rng, 5);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(2, 9)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    PlanProblem problem(
        graph, cluster,
        positionFreeOptions(rng, numLayers, cluster.devices.size()));
    std::optional<PipelinePlan> plan = checkAgainstExhaustive(problem, trial);
    if (!plan)
      continue;
    ++total;
    exact += plan->exact;
  }
  EXPECT_GT(total, 100u);
  EXPECT_EQ(exact, total);
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
    compareWithExhaustive(problem, trial);
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
      device.spec.reservedGB = 0;
      cluster.devices.push_back(device);
    }
    PlanOptions options = randomOptions(rng);
    PlanProblem problem(graph, cluster, options);
    compared += bool(compareWithExhaustive(problem, trial).reference);
  }
  EXPECT_GT(compared, 20u);
}

/// GPipe's objective has two maxima. The search first minimizes its
/// relaxation to one, the slowest stage in all or twice the slowest
/// transfer, and then searches only the steps where a plan it found is
/// slower than the relaxation says. On instances where the least plan is
/// slowest forward and backward at different stages, it still finds the
/// exhaustive search's objective.
TEST(Partitioner, GPipeMatchesExhaustiveSearchWhereItsBottlenecksSplit) {
  // Two or three devices and up to 20 layers: the least plans split their
  // bottlenecks most often there (one in 13), and the search is quick.
  std::mt19937 rng(20261201);
  unsigned compared = 0, split = 0;
  for (unsigned trial = 0; trial < 4000; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 3)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(4, 20)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 26);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options;
    options.training = true;
    options.schedule = Schedule::GPipe;
    options.optimizer = Optimizer::Adam;
    options.microbatches = std::uniform_int_distribution<int>(2, 16)(rng);
    // A quarter each: a fixed stage count, a given device order, given
    // cuts, and none of them.
    unsigned stages =
        std::uniform_int_distribution<unsigned>(1, numDevices)(rng);
    switch (trial % 4) {
    case 1:
      options.stages = stages;
      break;
    case 2:
      options.deviceOrder = randomDeviceOrder(rng, numDevices, stages);
      break;
    case 3:
      options.cutAfter = randomCuts(rng, numLayers, stages);
      break;
    }
    PlanProblem problem(graph, cluster, options);
    Compared both = compareWithExhaustive(problem, trial);
    if (!both.reference || !both.plan)
      continue;
    EXPECT_TRUE(both.plan->exact) << "trial " << trial;
    // The relaxation kept to its end: the default stops it early on most
    // of these small instances, whose good plans split their bottlenecks
    // by more than it allows.
    PlanOptions toTheEnd = options;
    toTheEnd.tuning.weakRelaxation = std::numeric_limits<double>::infinity();
    PlanProblem kept(graph, cluster, toTheEnd);
    Expected<PipelinePlan> plan = planPipeline(kept);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_NEAR(plan->optimalObjectiveMs, both.reference->objectiveMs,
                1e-9 * both.reference->objectiveMs)
        << "trial " << trial << " (relaxation to its end)";
    EXPECT_TRUE(plan->exact) << "trial " << trial;
    PlanProblem::Times times = problem.times(both.reference->stages);
    EXPECT_LE(times.slowestStep,
              (times.slowestForward + times.slowestBackward) * (1 + 1e-12));
    split += times.slowestForward + times.slowestBackward >
             times.slowestStep * (1 + 1e-9);
    ++compared;
  }
  EXPECT_GT(compared, 3000u);
  // The case the relaxation alone gets wrong occurs.
  EXPECT_GT(split, 100u);
}

/// One run of the dynamic program under limits finds the least sum of the
/// plans within them, with and without a fixed stage count, hand-given
/// cuts or a cap on the sum: the stages it skips (suffixes with too few
/// stages for their layers, or leaving too few for the layers before them)
/// lose no plan. Limits come from the plans' own slowest steps, so that
/// they cut through the plans.
TEST(Partitioner, LeastSumWithinLimitsMatchesEveryPlan) {
  std::mt19937 rng(1130);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  unsigned compared = 0, found = 0, unhidden = 0, fixedStages = 0, cut = 0,
           capped = 0;
  for (unsigned trial = 0; trial < 80; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 6)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(4, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 28);
    Cluster cluster = trial % 2
                          ? randomCluster(rng, numDevices)
                          : roundRobinCluster(numDevices, 2, 1 + rng() % 2);
    PlanOptions options = randomOptions(rng);
    struct Seen {
      std::vector<unsigned> cuts;
      PlanProblem::Times times, unhiddenTimes;
    };
    std::vector<Seen> plans;
    PlanProblem uncut(graph, cluster, options);
    forEachFittingPlan(
        uncut, cluster.interchangeableDevices(),
        [&](const std::vector<StagePlan> &plan) {
          Seen seen{{}, uncut.times(plan), uncut.times(plan, true)};
          for (unsigned s = 0; s + 1 < plan.size(); ++s)
            seen.cuts.push_back(plan[s].end - 1);
          plans.push_back(seen);
        });
    if (plans.empty())
      continue;
    // One trial in four cuts where a plan cuts (a stage's cost depends only
    // on its layers, its device and the stages after it, so the plans with
    // those cuts are the same under the cut options).
    const Seen &cutting = plans[rng() % plans.size()];
    if (trial % 4 == 3 && !cutting.cuts.empty()) {
      options.cutAfter = cutting.cuts;
      llvm::erase_if(plans, [&](const Seen &plan) {
        return plan.cuts != options.cutAfter;
      });
      ++cut;
    }
    PlanProblem problem(graph, cluster, options);
    bool split = problem.splitBottleneck();
    for (unsigned draw = 0; draw < 8; ++draw) {
      const Seen &from = plans[rng() % plans.size()];
      double scale = std::array<double, 3>{0.97, 1, 1.1}[rng() % 3];
      SearchLimits limits;
      limits.unhidden = !split && rng() % 2;
      const PlanProblem::Times &bounds =
          limits.unhidden ? from.unhiddenTimes : from.times;
      limits.forward = bounds.slowestForward * scale;
      if (split)
        limits.backward = bounds.slowestBackward * scale;
      if (draw % 4 == 3)
        limits.sumCap =
            plans[rng() % plans.size()].times.sum * (rng() % 2 ? 0.999 : 1.001);
      unsigned stages =
          options.cutAfter.empty() && rng() % 2 ? from.cuts.size() + 1 : 0;
      double least = kNone;
      for (const Seen &plan : plans) {
        const PlanProblem::Times &times =
            limits.unhidden ? plan.unhiddenTimes : plan.times;
        if ((!stages || plan.cuts.size() + 1 == stages) &&
            times.slowestForward <= limits.forward &&
            (!split || times.slowestBackward <= limits.backward))
          least = std::min(least, times.sum);
      }
      if (least > limits.sumCap)
        least = kNone;
      Partitioner partitioner(problem, stages);
      std::optional<std::vector<StagePlan>> plan = partitioner.search(limits);
      ASSERT_EQ(bool(plan), least < kNone)
          << "trial " << trial << " draw " << draw;
      ++compared;
      unhidden += limits.unhidden;
      fixedStages += stages != 0;
      capped += limits.sumCap < kNone;
      if (!plan)
        continue;
      ++found;
      EXPECT_NEAR(problem.times(*plan).sum, least, 1e-9 * least)
          << "trial " << trial << " draw " << draw;
    }
  }
  EXPECT_GT(compared, 500u);
  EXPECT_GT(found, 350u);
  EXPECT_GT(unhidden, 100u);
  EXPECT_GT(fixedStages, 150u);
  EXPECT_GT(cut, 15u);
  EXPECT_GT(capped, 120u);
}

/// With each cut at its least transfer and one class per kind (the
/// constructor's `leastLinks`), no plan costs more than in the cluster, and
/// the least sum under limits is the least over every plan as priced so:
/// so it is no more than the cluster's least, a floor. The clusters put
/// kinds on several hosts, whose links differ.
TEST(Partitioner, LeastLinkCutsBoundEveryPlan) {
  std::mt19937 rng(1201);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  unsigned compared = 0, below = 0, cheaper = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(3, 6)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(4, 9)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 29);
    Cluster cluster = roundRobinCluster(numDevices, 1 + trial % 2, 3);
    PlanOptions options = randomOptions(rng);
    PlanProblem problem(graph, cluster, options);
    if (problem.splitBottleneck())
      continue;
    Partitioner relaxed(problem, 0, /*leastLinks=*/true);
    ASSERT_TRUE(relaxed.leastLinkCuts());
    ASSERT_LT(relaxed.numStates(), Partitioner(problem).numStates());
    // Prices the cuts first: planTimes reads the search's prices.
    ASSERT_TRUE(relaxed.search({}).has_value());
    struct Seen {
      PlanProblem::Times real, least;
    };
    std::vector<Seen> plans;
    forEachFittingPlan(problem, cluster.interchangeableDevices(),
                       [&](const std::vector<StagePlan> &plan) {
                         for (bool unhidden : {false, true})
                           plans.push_back({problem.times(plan, unhidden),
                                            relaxed.planTimes(plan, unhidden)});
                       });
    for (const Seen &plan : plans) {
      EXPECT_LE(plan.least.sum, plan.real.sum * (1 + 1e-12));
      EXPECT_LE(plan.least.slowestForward,
                plan.real.slowestForward * (1 + 1e-12));
      cheaper += plan.least.sum < plan.real.sum * (1 - 1e-9);
    }
    for (unsigned draw = 0; draw < 6 && !plans.empty(); ++draw) {
      SearchLimits limits;
      limits.unhidden = draw % 2;
      // Two entries per plan: whole and unhidden times.
      const Seen &from =
          plans[2 * (rng() % (plans.size() / 2)) + limits.unhidden];
      limits.forward = from.real.slowestForward;
      double real = kNone, least = kNone;
      for (unsigned p = limits.unhidden; p < plans.size(); p += 2) {
        if (plans[p].real.slowestForward <= limits.forward)
          real = std::min(real, plans[p].real.sum);
        if (plans[p].least.slowestForward <= limits.forward)
          least = std::min(least, plans[p].least.sum);
      }
      std::optional<std::vector<StagePlan>> plan = relaxed.search(limits);
      ASSERT_TRUE(plan.has_value()) << "trial " << trial;
      double sum = relaxed.planTimes(*plan, limits.unhidden).sum;
      EXPECT_NEAR(sum, least, 1e-9 * least) << "trial " << trial;
      EXPECT_LE(sum, real * (1 + 1e-12)) << "trial " << trial;
      below += sum < real * (1 - 1e-9);
      ++compared;
    }
  }
  EXPECT_GT(compared, 150u);
  EXPECT_GT(cheaper, 100u);
  EXPECT_GT(below, 10u);
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

} // namespace
