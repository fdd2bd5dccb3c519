//===- PlanSearchTest.cpp - the plan search at scale ----------------------===//
//
// The search past what the exhaustive search reaches: proven optimality at
// 100 layers on 16 devices, blocks of layers, the fastest devices of many,
// and the stage counts it refuses.
//
//===----------------------------------------------------------------------===//

#include "PlanTestSupport.h"

#include "gtest/gtest.h"

#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::pipe;
using llvm::Expected;

namespace {

/// 100 layers on 16 devices of two kinds: the search completes, so the plan
/// is proven optimal under the objective; 1000 layers on 64 devices are
/// planned on blocks of layers with a proven gap.
TEST(PlanSearch, ProvesOptimalityAtOneHundredLayersSixteenDevices) {
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
TEST(PlanSearch, BlocksKeepDerivedBackwardCosts) {
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

/// Blocks of layers may fit no device where finer cuts do: the planner then
/// searches every layer, and fails only when no plan fits.
TEST(PlanSearch, BlocksFitWhereverLayersFit) {
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
    for (Device &device : cluster.devices) {
      device.spec.memoryGB = std::uniform_int_distribution<int>(1, 8)(rng);
      device.spec.reservedGB = 0;
    }
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

/// Too many distinct devices to count exactly: the fastest devices take the
/// stages, as many as the model has layers, or as the cuts make.
TEST(PlanSearch, ManyDistinctDevicesUseTheFastest) {
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
TEST(PlanSearch, FastestDevicesTakeTheBestCount) {
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
TEST(PlanSearch, FastestDevicesFitWithFewer) {
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
  for (const StagePlan &stage : plan->stages) {
    if (stage.begin <= 30 && 30 < stage.end) {
      EXPECT_EQ(cluster.devices[stage.device].spec.kind, "A100-80GB");
    }
  }
}

/// There, devices as fast go host by host: neighbouring stages share a
/// host's links, and the pipeline crosses between the two hosts once,
/// though the cluster file alternates them.
TEST(PlanSearch, FastestDevicesGoHostByHost) {
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

TEST(PlanSearch, RejectsImpossibleStageCounts) {
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

/// Past 256 layers, the search over every layer still runs where it is
/// cheap (300 layers on 16 devices of two kinds: 1.4 million transitions),
/// unless --plan-exact-layers is given.
TEST(PlanSearch, ExactPastTheLayerCountWhereCheap) {
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

} // namespace
