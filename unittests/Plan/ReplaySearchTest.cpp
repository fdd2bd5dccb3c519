//===- ReplaySearchTest.cpp - the least 1F1B replay, by brute force -------===//

#include "PlanTestSupport.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

using namespace mlir;
using namespace mlir::pipe;
using llvm::Expected;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The plan of `problem`, or none if it has none (a model that does not
/// fit, say).
std::optional<PipelinePlan> planOrNone(const PlanProblem &problem) {
  Expected<PipelinePlan> plan = planPipeline(problem);
  if (plan)
    return std::move(*plan);
  llvm::consumeError(plan.takeError());
  return std::nullopt;
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
TEST(ReplaySearch, OneFOneBHasTheLeastReplay) {
  std::mt19937 rng(5);
  unsigned total = 0, open = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    RandomInstance instance = smallOneFOneB(rng);
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    std::optional<PipelinePlan> plan = planOrNone(problem);
    if (!plan)
      continue;
    ++total;
    EXPECT_TRUE(plan->iterationExact) << "trial " << trial;
    EXPECT_TRUE(fitsMemory(problem, plan->stages));
    EXPECT_FALSE(checkAgainstLeastReplay(problem, *plan, trial));

    // No steps, and so few that the searches run out.
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

/// The floor under every replay, where the search for it runs with one
/// class per kind and each cut at its least transfer (as past
/// SearchTuning::floorCells): still no plan replays below it. Without steps
/// for the replay search the floor and the root bounds are all the proof:
/// an iteration proven the least is the least, and each gap bound holds.
/// The clusters mix kinds on two hosts, so that classes merge.
TEST(ReplaySearch, FloorOverLeastLinksBoundsEveryReplay) {
  std::mt19937 rng(1201);
  unsigned total = 0, proven = 0;
  for (unsigned trial = 0; trial < 120; ++trial) {
    RandomInstance instance = smallOneFOneB(rng);
    unsigned numDevices = instance.cluster.devices.size();
    instance.cluster =
        roundRobinCluster(numDevices, 1 + trial % 2, 2 + trial % 2);
    instance.options.tuning.floorCells = 0;
    for (uint64_t steps : {uint64_t(0), PlanOptions().replaySteps}) {
      instance.options.replaySteps = steps;
      PlanProblem problem(instance.graph, instance.cluster, instance.options);
      std::optional<PipelinePlan> plan = planOrNone(problem);
      if (!plan)
        continue;
      ++total;
      proven += plan->iterationExact;
      EXPECT_TRUE(fitsMemory(problem, plan->stages));
      checkAgainstLeastReplay(problem, *plan, trial);
    }
  }
  EXPECT_GT(total, 150u);
  EXPECT_GT(proven, 100u);
}

/// When the first target search (2% below the incumbent) cannot finish
/// within the budget, the search at the incumbent, which runs alongside on
/// a second thread, finds faster plans the first one pruned. On this
/// benchmark instance (pipe-plan-scaling 40 12 4 1 1 16 1000000) the first
/// search finds none: without the second the plan would stay the
/// refinement's, the plan of a search without steps (4007.7 ms; 3978.6 ms
/// with it).
TEST(ReplaySearch, ReplaySearchFindsPlansItsFirstTargetPrunes) {
  RandomInstance instance = scalingInstance(40, 12, 4, 1);
  const LayerGraph &graph = instance.graph;
  const Cluster &cluster = instance.cluster;
  PlanOptions &options = instance.options;
  options.replaySteps = 0;
  PlanProblem refinedProblem(graph, cluster, options);
  Expected<PipelinePlan> refined = planPipeline(refinedProblem);
  ASSERT_TRUE(bool(refined));
  options.replaySteps = 1000000;
  PlanProblem searchedProblem(graph, cluster, options);
  Expected<PipelinePlan> searched = planPipeline(searchedProblem);
  ASSERT_TRUE(bool(searched));
  EXPECT_FALSE(searched->iterationExact);
  double before = simulate(refinedProblem, refined->stages)->iterationMs;
  double after = simulate(searchedProblem, searched->stages)->iterationMs;
  EXPECT_LT(after, before * (1 - 1e-3));
}

/// A search that stops on its budget returns a plan it found after the
/// refinement, which the refinement's moves may still improve: it descends
/// by them first. So no single move (a cut by one layer, a swap, another
/// device, a merge or a split) replays faster than the plan returned. On
/// these benchmark instances the search's own plan is no such minimum:
/// 7705.05 ms, a few hundredths less after the descent (pipe-plan-scaling
/// 100 16 4 4 1 16 110000000); 8546.9 and 8543.2 (pipe-plan-scaling 100 16
/// 2 4 1 16 80000000: with its whole budget, and with the symmetry of its
/// alike hosts broken, the search proves its plan the least).
TEST(ReplaySearch, StopsOnItsBudgetAtALocalMinimum) {
  for (auto [layers, devices, kinds, hosts, steps] :
       {std::tuple{100u, 16u, 4u, 4u, uint64_t(110000000)},
        std::tuple{100u, 16u, 2u, 4u, uint64_t(80000000)}}) {
    RandomInstance instance = scalingInstance(layers, devices, kinds, hosts);
    instance.options.replaySteps = steps;
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    EXPECT_FALSE(plan->iterationExact) << layers << " x " << devices;
    double replay = simulate(problem, plan->stages)->iterationMs;
    // The refinement, seeded with the plan alone, finds no faster plan.
    PipelinePlan seeded = *plan;
    seeded.paretoPlans = {plan->stages};
    seeded.floorPlans.clear();
    refinePlanBySimulation(problem, seeded);
    EXPECT_EQ(simulate(problem, seeded.stages)->iterationMs, replay)
        << layers << " x " << devices << " of " << kinds << " kinds";
  }
}

/// The replay search's tables of least suffix sums under limits: one pass
/// of the dynamic program for all limits gives, number for number, what
/// one run per limit gives. Small instances of mixed devices, and the
/// benchmark's of two and four kinds (with stage counts and cuts given).
TEST(ReplaySearch, SuffixTablesInOnePassMatchOneRunPerLimit) {
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

/// The bounds of SuffixResponse.cpp hold for every suffix of every plan
/// that fits: each microbatch's gradient comes back to the stage before a
/// suffix no sooner than its bound after that stage sends the first
/// microbatch on; and no plan replays faster than the bound for its stage
/// count. With the tables for a cap (the median replay), the same for the
/// plans that replay below it. Without a cap, no suffix has a sum or a
/// largest unhidden time or transfer below the tables'. Also where the
/// tables count devices with the same numbers on any host, with cuts at
/// their least transfer (simplified classes, or classes counted up to the
/// symmetry of identical hosts).
TEST(ReplaySearch, SuffixResponsesBoundEverySuffix) {
  std::mt19937 rng(47);
  unsigned checked = 0, tight = 0, floorsMet = 0, instances = 0,
           checkedBelowCap = 0, relaxed = 0, sums = 0;
  auto checkUnder = [&](const PlanProblem &problem, unsigned trial,
                        double cap) {
    SuffixTables tables = tabulateSuffixes(problem, cap);
    tabulateResponses(problem, tables);
    if (tables.response.empty())
      return;
    ++instances;
    relaxed += tables.leastLinks;
    std::vector<unsigned> classOf(problem.numDevices());
    for (unsigned c = 0; c < tables.classes.size(); ++c)
      for (unsigned device : tables.classes[c])
        classOf[device] = c;
    unsigned m = problem.options().microbatches;
    double least = kInf, floor = kInf;
    for (double bound : tables.responseByStages)
      floor = std::min(floor, bound);
    forEachFittingPlan(
        problem, problem.cluster().interchangeableDevices(),
        [&](const std::vector<StagePlan> &plan) {
          unsigned numStages = plan.size();
          std::vector<ReplayStage> times;
          std::vector<double> cut;
          for (unsigned s = 0; s < numStages; ++s) {
            StageCost cost =
                problem.stageCost(plan[s].begin, plan[s].end, plan[s].device,
                                  numStages - 1 - s, plan[s].recompute);
            times.push_back(
                {cost.forwardMs, cost.recomputeMs, cost.backwardMs});
            if (s + 1 < numStages)
              cut.push_back(problem.cutMs(plan[s].end - 1, plan[s].device,
                                          plan[s + 1].device));
          }
          double replayMs = simulate(problem, plan, false)->iterationMs;
          if (replayMs >= cap)
            return;
          least = std::min(least, replayMs);
          EXPECT_GE(replayMs, tables.responseByStages[numStages] * (1 - 1e-12))
              << "trial " << trial;
          unsigned key = 0;
          double suffixSum = 0, suffixLargest = 0;
          for (unsigned d = numStages; d-- > 1;) {
            key += tables.radix[classOf[plan[d].device]];
            const ReplayStage &t = times[d];
            suffixSum += t.forwardMs + t.recomputeMs + t.backwardMs;
            suffixLargest = std::max(
                suffixLargest,
                problem.unhiddenMs(t.forwardMs, t.recomputeMs + t.backwardMs,
                                   numStages - 1 - d));
            if (d + 1 < numStages) {
              suffixSum += 2 * cut[d];
              suffixLargest = std::max(suffixLargest, cut[d]);
            }
            if (cap == kInf) {
              size_t cell =
                  tables.index(plan[d].begin, key, classOf[plan[d].device]);
              EXPECT_LE(tables.sum[cell], suffixSum * (1 + 1e-12))
                  << "trial " << trial << " stage " << d;
              EXPECT_LE(tables.slowest[cell], suffixLargest * (1 + 1e-12))
                  << "trial " << trial << " stage " << d;
              ++sums;
            }
            std::vector<double> ends = backwardEnds(
                ArrayRef(times).drop_front(d), ArrayRef(cut).drop_front(d), m);
            size_t row = tables.responseRow(plan[d].begin, key,
                                            classOf[plan[d - 1].device]);
            for (unsigned mb = 0; mb < m; ++mb) {
              double bound = tables.response[row + mb];
              double actual = ends[mb] + 2 * cut[d - 1];
              EXPECT_LE(bound, actual * (1 + 1e-12))
                  << "trial " << trial << " stage " << d << " microbatch "
                  << mb;
              ++checked;
              checkedBelowCap += cap < kInf;
              tight += bound >= actual * (1 - 1e-12);
            }
          }
        });
    EXPECT_LE(floor, least * (1 + 1e-12)) << "trial " << trial;
    floorsMet += cap == kInf && floor >= least * (1 - 1e-12);
  };
  auto check = [&](const PlanProblem &problem, unsigned trial) {
    checkUnder(problem, trial, kInf);
    std::vector<double> replays;
    forEachFittingPlan(problem, problem.cluster().interchangeableDevices(),
                       [&](const std::vector<StagePlan> &plan) {
                         replays.push_back(
                             simulate(problem, plan, false)->iterationMs);
                       });
    if (replays.empty())
      return;
    std::nth_element(replays.begin(), replays.begin() + replays.size() / 2,
                     replays.end());
    checkUnder(problem, trial, replays[replays.size() / 2]);
  };
  for (unsigned trial = 0; trial < 60; ++trial) {
    RandomInstance instance = smallOneFOneB(rng);
    check(PlanProblem(instance.graph, instance.cluster, instance.options),
          trial);
  }
  for (unsigned trial = 0; trial < 18; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 6 + trial % 3, int64_t(1) << 26);
    Cluster cluster = roundRobinCluster(6, 2 + trial % 2, 1 + trial / 12);
    PlanOptions options = oneFOneBTraining(rng, 2);
    if (trial % 3 == 2)
      options.microbatches = 12;
    check(PlanProblem(graph, cluster, options), 100 + trial);
  }
  // Tables over devices with the same numbers: six devices of two or three
  // kinds on two to four hosts, as simplified classes or counted up to the
  // symmetry of identical hosts (three kinds on two hosts).
  for (unsigned trial = 0; trial < 12; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 6 + trial % 3, int64_t(1) << 26);
    Cluster cluster = roundRobinCluster(6, 2 + trial % 2, 2 + trial / 2 % 3);
    PlanOptions options = oneFOneBTraining(rng, 2);
    options.tuning.classCells = 0;
    options.tuning.hostSymmetry = trial % 2;
    check(PlanProblem(graph, cluster, options), 200 + trial);
  }
  EXPECT_GE(relaxed, 24u);
  EXPECT_GT(sums, 0u);
  // 78 instances, each without a cap and with one: 4.4 of 11.8 million
  // bounds meet their suffix's own response (4.0 million of them for
  // plans below a cap), and on 62 instances the floor without a cap is
  // the least replay.
  EXPECT_GT(instances, 140u);
  EXPECT_GT(tight, checked / 5);
  EXPECT_GT(floorsMet, 40u);
  EXPECT_GT(checkedBelowCap, checked / 5);
}

/// Starts the 1F1B replay search from the slowest plan of `problem` that
/// fits, and checks that it finds and proves the least replay of every
/// plan. Returns whether `problem` has a plan (`total`) and whether the
/// least is faster than the slowest (`improved`).
void checkSearchFromTheSlowestPlan(const PlanProblem &problem, unsigned trial,
                                   unsigned &total, unsigned &improved) {
  double least = std::numeric_limits<double>::infinity(), slowest = 0;
  PipelinePlan plan;
  forEachFittingPlan(problem, problem.cluster().interchangeableDevices(),
                     [&](const std::vector<StagePlan> &stages) {
                       double replay =
                           simulate(problem, stages, false)->iterationMs;
                       least = std::min(least, replay);
                       if (replay > slowest) {
                         slowest = replay;
                         plan.stages = stages;
                       }
                     });
  if (plan.stages.empty())
    return;
  ++total;
  searchLeastReplay(problem, plan, /*floorMs=*/0);
  EXPECT_TRUE(plan.iterationExact) << "trial " << trial;
  EXPECT_TRUE(fitsMemory(problem, plan.stages));
  double replay = simulate(problem, plan.stages)->iterationMs;
  EXPECT_NEAR(replay, least, 1e-9 * replay) << "trial " << trial;
  improved += least < slowest * (1 - 1e-9);
}

/// The 1F1B replay search started from the slowest plan that fits, not
/// from the partitioner's: it must find the least replay itself, so every
/// partial plan it skips as no faster than one it searched must be so.
/// Two kinds of three devices each on two hosts, so that many partial plans
/// end at the same layer on the same devices, and links differ.
TEST(ReplaySearch, ReplaySearchFindsTheLeastFromTheSlowestPlan) {
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
      spec.reservedGB = 0;
      for (unsigned d = 0; d < 3; ++d)
        cluster.devices.push_back({"d" + std::to_string(cluster.devices.size()),
                                   "h" + std::to_string(rng() % 2), spec});
    }
    PlanOptions options = oneFOneBTraining(rng, 2);
    checkSearchFromTheSlowestPlan(PlanProblem(graph, cluster, options), trial,
                                  total, improved);
  }
  EXPECT_GT(total, kTrials / 2);
  EXPECT_GT(improved, kTrials / 2);
}

/// The same on clusters of identical hosts, where the search starts no
/// stage on a host while an alike host before it is unused (a relabeling
/// of the hosts maps those plans onto plans it does search): it still
/// finds the least replay of every plan.
TEST(ReplaySearch, ReplaySearchBreaksTheSymmetryOfIdenticalHosts) {
  std::mt19937 rng(1204);
  constexpr unsigned kTrials = 120;
  unsigned total = 0, improved = 0;
  for (unsigned trial = 0; trial < kTrials; ++trial) {
    Cluster cluster = identicalHosts(rng, 6);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(5, 8)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    checkSearchFromTheSlowestPlan(
        PlanProblem(graph, cluster, oneFOneBTraining(rng, 2)), trial, total,
        improved);
  }
  EXPECT_GT(total, kTrials / 2);
  EXPECT_GT(improved, kTrials / 2);
}

/// 1F1B on blocks of layers: the gap claimed for the plan's replay holds
/// against the least replay over every plan of the layers, with and
/// without the floor over every layer (whose plans also seed the
/// refinement).
TEST(ReplaySearch, OneFOneBBlocksClaimNoGapTooSmall) {
  std::mt19937 rng(9);
  unsigned total = 0, gaps[2] = {0, 0};
  for (unsigned trial = 0; trial < 200; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 4)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(6, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options = oneFOneBTraining(rng, 2);
    options.maxExactLayers =
        std::uniform_int_distribution<unsigned>(numDevices, numLayers - 2)(rng);
    bool fits = true;
    for (bool layerFloor : {false, true}) {
      options.tuning.layerFloorWork = layerFloor ? PlanOptions().tuning.layerFloorWork : 0;
      PlanProblem problem(graph, cluster, options);
      Expected<PipelinePlan> plan = planPipeline(problem);
      if (!plan) {
        llvm::consumeError(plan.takeError());
        fits = false;
        continue;
      }
      gaps[layerFloor] += checkAgainstLeastReplay(problem, *plan, trial);
    }
    total += fits;
  }
  EXPECT_GT(total, 100u);
  // Without the floor over every layer, blocks miss the least replay on
  // some instances, so the gaps claimed are tested where they matter; with
  // it, on fewer (none of these 199 when it was added).
  EXPECT_GT(gaps[0], 0u);
  EXPECT_LT(gaps[1], gaps[0]);
}

/// `numDevices` devices of two kinds (A100-80GB, T4), each on one of two
/// hosts at random.
static Cluster twoKindsOnTwoHosts(std::mt19937 &rng, unsigned numDevices) {
  static const char *kinds[] = {"A100-80GB", "T4"};
  Cluster cluster;
  for (unsigned d = 0; d < numDevices; ++d) {
    Device device;
    device.name = "d" + std::to_string(d);
    device.host = "h" + std::to_string(rng() % 2);
    device.spec = *lookupDeviceKind(kinds[rng() % 2]);
    device.spec.reservedGB = 0;
    cluster.devices.push_back(device);
  }
  return cluster;
}

/// With simplified classes (devices of one kind on several hosts counted
/// as one class), the search proves nothing about every plan; the same
/// search with every cut at its least transfer bounds the objective. Its
/// claimed gap holds against exhaustive searches, and a plan claimed the
/// least is, also with --stages and --cut-after. The 1F1B replay search
/// counts the cluster's own devices, so it still finds and proves the
/// least replay (before it searched there, some replays were above it).
TEST(ReplaySearch, SimplifiedClassesClaimNoGapTooSmall) {
  std::mt19937 rng(1201);
  unsigned total = 0, exact = 0, oneFOneB = 0, replaysExact = 0, gaps = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 5)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(4, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    Cluster cluster = twoKindsOnTwoHosts(rng, numDevices);
    // Every other trial 1F1B training, whose replay has a floor of its own.
    PlanOptions options =
        trial % 2 ? randomOptions(rng) : oneFOneBTraining(rng, 2);
    options.tuning.classCells = 0;
    options.tuning.hostSymmetry = false;
    fixStagesOrCuts(rng, options, numLayers, numDevices);
    PlanProblem problem(graph, cluster, options);
    std::optional<PipelinePlan> plan = checkAgainstExhaustive(problem, trial);
    if (!plan)
      continue;
    ++total;
    exact += plan->exact;
    if (options.training && options.schedule == Schedule::OneFOneB) {
      ++oneFOneB;
      replaysExact += plan->iterationExact;
      gaps += checkAgainstLeastReplay(problem, *plan, trial);
    }
  }
  EXPECT_GT(total, 300u);
  // The floor proves most plans the least, not all.
  EXPECT_GT(exact, total / 2);
  EXPECT_LT(exact, total);
  EXPECT_GT(oneFOneB, 150u);
  EXPECT_EQ(replaysExact, oneFOneB);
  EXPECT_EQ(gaps, 0u);
}

/// Under 1F1B no search over the devices makes the runs over simplified
/// classes exact, so they stop once they have visited
/// SearchTuning::inexactCells cells. With none allowed, the search stops
/// after its first run: its objective meets the floor over least links
/// less often, yet every claim still holds against exhaustive searches,
/// and the replay search, which counts the cluster's own devices, still
/// proves every replay the least. Under GPipe and inference the search
/// over the devices makes every run exact on these instances: none counts,
/// and the plans and proofs are those without a limit.
TEST(ReplaySearch, InexactRunsStopAtTheirBudget) {
  std::mt19937 rng(1202);
  unsigned total = 0, exactStopped = 0, exactFull = 0, replaysExact = 0,
           positionFree = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(2, 5)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(4, 10)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 27);
    Cluster cluster = twoKindsOnTwoHosts(rng, numDevices);
    bool oneFOneB = trial % 2 == 0;
    PlanOptions options = oneFOneB
                              ? oneFOneBTraining(rng, 2)
                              : positionFreeOptions(rng, numLayers, numDevices);
    options.tuning.classCells = 0;
    options.tuning.hostSymmetry = false;
    PlanProblem full(graph, cluster, options);
    options.tuning.inexactCells = 0;
    PlanProblem stopped(graph, cluster, options);
    std::optional<PipelinePlan> plan = checkAgainstExhaustive(stopped, trial);
    if (!plan)
      continue;
    Expected<PipelinePlan> fullPlan = planPipeline(full);
    ASSERT_TRUE(bool(fullPlan)) << llvm::toString(fullPlan.takeError());
    if (!oneFOneB) {
      ++positionFree;
      EXPECT_NEAR(plan->objectiveMs, fullPlan->objectiveMs,
                  1e-9 * fullPlan->objectiveMs)
          << "trial " << trial;
      EXPECT_EQ(plan->exact, fullPlan->exact) << "trial " << trial;
      EXPECT_TRUE(plan->exact) << "trial " << trial;
      continue;
    }
    ++total;
    EXPECT_FALSE(checkAgainstLeastReplay(stopped, *plan, trial));
    replaysExact += plan->iterationExact;
    exactStopped += plan->exact;
    exactFull += fullPlan->exact;
  }
  EXPECT_GT(total, 100u);
  EXPECT_GT(positionFree, 100u);
  EXPECT_EQ(replaysExact, total);
  // (116 against 121 of 150 when written.)
  EXPECT_LT(exactStopped, exactFull);
}

/// Past the exact range only the replay search's root bounds and the
/// floors count; they still prove a plan the least when they rule out
/// every other, as on one device (found by a reviewer: a 2% gap was claimed
/// there). The relaxed floor proves the objective the least there too.
TEST(ReplaySearch, OneFOneBBlocksOnOneDeviceAreTheLeast) {
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
TEST(ReplaySearch, OneFOneBHasTheLeastReplayAtSixDevicesTwentyLayers) {
  std::mt19937 rng(620);
  static const char *kinds[] = {"A100-40GB", "V100-16GB", "T4"};
  for (unsigned trial = 0; trial < 2; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 20, int64_t(1) << 28);
    Cluster cluster;
    for (unsigned d = 0; d < 6; ++d) {
      Device device{"d" + std::to_string(d), "h",
                    *lookupDeviceKind(kinds[d / 2])};
      device.spec.memoryGB = 2 + 2 * (d / 2) + trial;
      device.spec.reservedGB = 0;
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

} // namespace
