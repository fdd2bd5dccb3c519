//===- PlanTestSupport.cpp - random instances and brute force -------------===//

#include "PlanTestSupport.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::pipe;

PlanOptions mlir::pipe::randomOptions(std::mt19937 &rng) {
  PlanOptions options;
  options.training = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
  options.schedule = std::uniform_int_distribution<int>(0, 1)(rng)
                         ? Schedule::GPipe
                         : Schedule::OneFOneB;
  options.microbatches = std::uniform_int_distribution<int>(1, 8)(rng);
  options.optimizer = Optimizer::Adam;
  return options;
}

RandomInstance mlir::pipe::randomInstance(std::mt19937 &rng,
                                          unsigned maxDevices,
                                          unsigned maxLayers,
                                          int64_t paramScale) {
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

RandomInstance mlir::pipe::scalingInstance(unsigned numLayers,
                                           unsigned numDevices,
                                           unsigned numKinds,
                                           unsigned numHosts) {
  std::mt19937 rng(1);
  RandomInstance instance;
  instance.graph = randomLayerGraph(rng, numLayers, int64_t(1) << 26);
  instance.cluster = roundRobinCluster(numDevices, numKinds, numHosts);
  instance.options.training = true;
  instance.options.microbatches = 16;
  instance.options.optimizer = Optimizer::Adam;
  return instance;
}

void mlir::pipe::forEachFittingPlan(
    const PlanProblem &problem,
    const std::vector<std::vector<unsigned>> &classes,
    llvm::function_ref<void(const std::vector<StagePlan> &)> visit,
    bool fitOnly) {
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

double mlir::pipe::bestReplayByClass(
    const PlanProblem &problem,
    const std::vector<std::vector<unsigned>> &classes) {
  double best = std::numeric_limits<double>::infinity();
  forEachFittingPlan(problem, classes, [&](const std::vector<StagePlan> &plan) {
    best = std::min(best, simulate(problem, plan, false)->iterationMs);
  });
  return best;
}

std::vector<std::vector<unsigned>>
mlir::pipe::eachDevice(const PlanProblem &problem) {
  std::vector<std::vector<unsigned>> classes;
  for (unsigned d = 0; d < problem.numDevices(); ++d)
    classes.push_back({d});
  return classes;
}

bool mlir::pipe::allowedByOptions(const PlanProblem &problem,
                                  ArrayRef<StagePlan> plan) {
  const PlanOptions &options = problem.options();
  if (options.stages && plan.size() != options.stages)
    return false;
  if (!options.cutAfter.empty()) {
    if (plan.size() != options.cutAfter.size() + 1)
      return false;
    for (unsigned s = 0; s + 1 < plan.size(); ++s)
      if (plan[s].end != options.cutAfter[s] + 1)
        return false;
  }
  if (!options.deviceOrder.empty()) {
    if (plan.size() != options.deviceOrder.size())
      return false;
    for (unsigned s = 0; s < plan.size(); ++s)
      if (plan[s].device != options.deviceOrder[s])
        return false;
  }
  return true;
}

double mlir::pipe::bestReplay(const PlanProblem &problem) {
  double best = std::numeric_limits<double>::infinity();
  forEachFittingPlan(
      problem, eachDevice(problem), [&](const std::vector<StagePlan> &plan) {
        if (allowedByOptions(problem, plan))
          best = std::min(best, simulate(problem, plan, false)->iterationMs);
      });
  return best;
}

PlanOptions mlir::pipe::oneFOneBTraining(std::mt19937 &rng, int fewest) {
  PlanOptions options;
  options.training = true;
  options.schedule = Schedule::OneFOneB;
  options.optimizer = Optimizer::Adam;
  options.microbatches = std::uniform_int_distribution<int>(fewest, 8)(rng);
  return options;
}

std::vector<unsigned>
mlir::pipe::randomCuts(std::mt19937 &rng, unsigned numLayers, unsigned stages) {
  std::vector<unsigned> cuts(numLayers - 1);
  std::iota(cuts.begin(), cuts.end(), 0);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(std::min(stages, numLayers) - 1);
  llvm::sort(cuts);
  return cuts;
}

Cluster mlir::pipe::identicalHosts(std::mt19937 &rng, unsigned maxDevices) {
  static const char *kinds[] = {"A100-80GB", "V100-32GB", "T4"};
  unsigned numHosts = std::uniform_int_distribution<unsigned>(2, 4)(rng);
  unsigned perHost = std::uniform_int_distribution<unsigned>(
      1, std::min(3u, maxDevices / numHosts))(rng);
  SmallVector<const char *> composition;
  for (unsigned d = 0; d < perHost; ++d)
    composition.push_back(kinds[rng() % 3]);
  double memoryGB = std::uniform_real_distribution<double>(1, 6)(rng);
  Cluster cluster;
  auto add = [&](const char *kind, unsigned host) {
    Device device;
    device.name = "d" + std::to_string(cluster.devices.size());
    device.host = "h" + std::to_string(host);
    device.spec = *lookupDeviceKind(kind);
    device.spec.memoryGB = memoryGB;
    device.spec.reservedGB = 0;
    device.spec.pcieLink = {"fast", 400, 0.5};
    cluster.devices.push_back(device);
  };
  for (unsigned h = 0; h < numHosts; ++h)
    for (const char *kind : composition)
      add(kind, h);
  switch (rng() % 4) {
  case 0:
    if (cluster.devices.size() < maxDevices)
      add(kinds[rng() % 3], numHosts);
    break;
  case 1:
    cluster.setLink(0, perHost, {"fast", 200, 1});
    break;
  case 2:
    if (perHost >= 2)
      for (unsigned h = 0; h < numHosts; ++h)
        cluster.setLink(h * perHost, h * perHost + 1, {"bridge", 100, 1});
    break;
  }
  return cluster;
}

void mlir::pipe::fixStagesOrCuts(std::mt19937 &rng, PlanOptions &options,
                                 unsigned numLayers, unsigned numDevices) {
  unsigned stages = std::uniform_int_distribution<unsigned>(1, numDevices)(rng);
  switch (rng() % 3) {
  case 1:
    options.stages = stages;
    break;
  case 2:
    options.cutAfter = randomCuts(rng, numLayers, stages);
    break;
  }
}

std::vector<double> mlir::pipe::backwardEnds(ArrayRef<ReplayStage> stages,
                                             ArrayRef<double> cut,
                                             unsigned microbatches) {
  std::vector<double> ends(microbatches, 0);
  llvm::Expected<Simulation> alone =
      replay(stages, cut, Schedule::OneFOneB, /*training=*/true, microbatches,
             /*recordEvents=*/true);
  if (!alone) {
    llvm::consumeError(alone.takeError());
    return ends;
  }
  for (const SimEvent &event : alone->events)
    if (event.stage == 0 && event.kind == SimEvent::Backward)
      ends[event.microbatch] = event.endMs;
  return ends;
}

std::optional<PipelinePlan>
mlir::pipe::checkAgainstExhaustive(const PlanProblem &problem, unsigned trial) {
  std::optional<PipelinePlan> reference = exhaustivePlan(problem);
  llvm::Expected<PipelinePlan> plan = planPipeline(problem);
  EXPECT_EQ(bool(reference), bool(plan)) << "trial " << trial;
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return std::nullopt;
  }
  if (!reference)
    return std::nullopt;
  double objective = plan->optimalObjectiveMs, least = reference->objectiveMs;
  EXPECT_GE(objective, least * (1 - 1e-9)) << "trial " << trial;
  EXPECT_GE(least, objective * (1 - plan->gapBound) * (1 - 1e-12))
      << "trial " << trial;
  if (plan->exact) {
    EXPECT_NEAR(objective, least, 1e-9 * objective) << "trial " << trial;
  }
  return std::move(*plan);
}

bool mlir::pipe::checkAgainstLeastReplay(const PlanProblem &problem,
                                         const PipelinePlan &plan,
                                         unsigned trial) {
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

PlanOptions mlir::pipe::positionFreeOptions(std::mt19937 &rng,
                                            unsigned numLayers,
                                            unsigned numDevices) {
  PlanOptions options = randomOptions(rng);
  if (options.training)
    options.schedule = Schedule::GPipe;
  options.tuning.classCells = 0;
  options.tuning.hostSymmetry = false;
  fixStagesOrCuts(rng, options, numLayers, numDevices);
  return options;
}

std::vector<unsigned> mlir::pipe::randomDeviceOrder(std::mt19937 &rng,
                                                    unsigned numDevices,
                                                    unsigned stages) {
  std::vector<unsigned> order(numDevices);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(stages);
  return order;
}
