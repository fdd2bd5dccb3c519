//===- PlanTestSupport.h - random instances and brute force -----*- C++ -*-===//
//
// Shared by the planner's tests: random planning problems, and every plan
// that fits, by brute force, to compare the searches with.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_UNITTESTS_PLAN_PLANTESTSUPPORT_H
#define PIPE_UNITTESTS_PLAN_PLANTESTSUPPORT_H

#include "pipe/Plan/PlanProblem.h"
#include "pipe/Plan/Simulator.h"
#include "pipe/Plan/Testing/ExhaustivePlan.h"
#include "pipe/Plan/Testing/RandomInstances.h"

#include <optional>
#include <random>
#include <vector>

namespace mlir {
namespace pipe {

/// Random options: training three times in four, GPipe or 1F1B, 1 to 8
/// microbatches, Adam.
PlanOptions randomOptions(std::mt19937 &rng);

/// A model, a cluster and options to plan it with.
struct RandomInstance {
  LayerGraph graph;
  Cluster cluster;
  PlanOptions options;
};

/// A random instance of 1 to `maxDevices` devices and 2 to `maxLayers`
/// layers, with randomOptions.
RandomInstance randomInstance(std::mt19937 &rng, unsigned maxDevices,
                              unsigned maxLayers, int64_t paramScale);

/// The scaling benchmark's instance (bench/plan_scaling.cpp, seed 1):
/// 1F1B training of 16 microbatches with Adam.
RandomInstance scalingInstance(unsigned numLayers, unsigned numDevices,
                               unsigned numKinds, unsigned numHosts);

/// Calls `visit` with every plan that fits memory, each stage with the
/// fastest recompute that fits it, its devices told apart only by the
/// interchangeable `classes` given; without `fitOnly`, with every plan and
/// the fastest recompute the options allow.
void forEachFittingPlan(
    const PlanProblem &problem,
    const std::vector<std::vector<unsigned>> &classes,
    llvm::function_ref<void(const std::vector<StagePlan> &)> visit,
    bool fitOnly = true);

/// The least replay of every plan, telling apart only `classes`.
double bestReplayByClass(const PlanProblem &problem,
                         const std::vector<std::vector<unsigned>> &classes);

/// Each device on its own.
std::vector<std::vector<unsigned>> eachDevice(const PlanProblem &problem);

/// Whether `plan` has the stage count, cuts and devices that the options
/// fix (--stages, --cut-after, --device-order), where they fix them.
bool allowedByOptions(const PlanProblem &problem, ArrayRef<StagePlan> plan);

/// The least replayed iteration time over every plan the options allow
/// (cut set, device sequence; each stage with its fastest recompute that
/// fits).
double bestReplay(const PlanProblem &problem);

/// Plans `problem` and checks the plan against an exhaustive search: the
/// planner finds one exactly when some plan fits; its objective is never
/// below the least, within its claimed gap of it, and equal to it when
/// claimed exact. Returns the plan when both found one.
std::optional<PipelinePlan> checkAgainstExhaustive(const PlanProblem &problem,
                                                   unsigned trial);

/// Checks `plan`'s replay against the least over every plan of `problem`:
/// never below it; equal to it, with no gap, when proven the least, else
/// within the gap bound, which is then positive. Returns whether it is
/// above the least.
bool checkAgainstLeastReplay(const PlanProblem &problem,
                             const PipelinePlan &plan, unsigned trial);

/// When the first stage of the 1F1B training pipeline `stages`, replayed
/// alone with every microbatch's activations there at time 0, ends each
/// microbatch's backward pass.
std::vector<double> backwardEnds(ArrayRef<ReplayStage> stages,
                                 ArrayRef<double> cut, unsigned microbatches);

/// 1F1B training with Adam and from `fewest` to 8 microbatches.
PlanOptions oneFOneBTraining(std::mt19937 &rng, int fewest);

/// Two to four hosts alike in their devices (the same kinds, among
/// A100-80GB, V100-32GB and T4, and memories), at most `maxDevices` in all,
/// whose cuts within a host are far cheaper than across hosts, so that
/// which host a stage takes matters. A quarter get a host unlike the
/// others (when there is room), a quarter a link that only two hosts share,
/// a quarter the same link within every host (between its first two
/// devices, which then form classes of their own).
Cluster identicalHosts(std::mt19937 &rng, unsigned maxDevices);

/// A third each: fixes the stage count (--stages) or gives random cuts
/// (--cut-after) for up to `numDevices` stages, or neither.
void fixStagesOrCuts(std::mt19937 &rng, PlanOptions &options,
                     unsigned numLayers, unsigned numDevices);

/// GPipe or inference (memory that does not depend on a stage's position)
/// on simplified classes. A third each with --stages or --cut-after given.
PlanOptions positionFreeOptions(std::mt19937 &rng, unsigned numLayers,
                                unsigned numDevices);

/// Random cuts for --cut-after: ascending, for `stages` stages of
/// `numLayers` layers (fewer where the layers are fewer).
std::vector<unsigned> randomCuts(std::mt19937 &rng, unsigned numLayers,
                                 unsigned stages);

/// A random --device-order of `stages` distinct devices out of
/// `numDevices`.
std::vector<unsigned> randomDeviceOrder(std::mt19937 &rng, unsigned numDevices,
                                        unsigned stages);

} // namespace pipe
} // namespace mlir

#endif // PIPE_UNITTESTS_PLAN_PLANTESTSUPPORT_H
