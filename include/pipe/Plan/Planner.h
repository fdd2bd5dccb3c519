//===- Planner.h - the pipeline planner's options and plans -----*- C++ -*-===//
//
// What a caller of the planner needs: the options a user sets, and the plan
// it returns. A plan cuts the model's layers (LayerGraph.h) into contiguous
// stages, places each on a device of the cluster and picks its recompute;
// PlanProblem (PlanProblem.h) prices them. See docs/planner.md.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_PLANNER_H
#define PIPE_PLAN_PLANNER_H

#include "pipe/Plan/CostModel.h"
#include "pipe/Plan/SearchTuning.h"
#include "pipe/Plan/StageMemory.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir {
namespace pipe {

class PlanProblem;

/// The most microbatches a step may have.
constexpr int64_t kMaxMicrobatches = 65536;

/// What the user asks of the plan.
struct PlanOptions {
  bool training = false;
  Schedule schedule = Schedule::OneFOneB;
  int64_t microbatches = 1;
  Optimizer optimizer = Optimizer::None;
  Precision precision = Precision::FP32;
  /// Forces one recompute choice on every stage; unset lets the planner
  /// choose per stage.
  std::optional<Recompute> recompute;
  /// The number of stages; 0 lets the planner choose (at most one stage
  /// per device).
  unsigned stages = 0;
  /// Hand-chosen cuts: stage boundaries after these layers (ascending).
  std::vector<unsigned> cutAfter;
  /// Hand-chosen devices, one per stage, in pipeline order.
  std::vector<unsigned> deviceOrder;
  /// Models with more layers are planned on this many blocks of layers (at
  /// least the stage count; the result is then exact only if it meets the
  /// relaxed floor, else it carries a proven gap); none with hand-given
  /// cuts. Unset: 256 blocks past 256 layers, unless the search over every
  /// layer is cheap (docs/planner.md, "Scaling").
  std::optional<unsigned> maxExactLayers;
  /// The 1F1B replay search simulates at most this many pipeline steps (a
  /// replay of S stages and M microbatches is 2 S M steps, or
  /// 2 k M + (S - k) M / 2 with stand-ins for all but k; pricing a stage
  /// counts as 16), and its search at the incumbent, on a second thread,
  /// as many again. 0 keeps only its root bounds.
  uint64_t replaySteps = 160000000;
  /// The search's limits: tests and benchmarks set them, users do not.
  SearchTuning tuning;
};

/// One stage of a plan: layers [begin, end) on `device`.
struct StagePlan {
  unsigned begin = 0, end = 0;
  unsigned device = 0;
  Recompute recompute = Recompute::None;

  bool operator==(const StagePlan &other) const {
    return begin == other.begin && end == other.end && device == other.device &&
           recompute == other.recompute;
  }
  bool operator!=(const StagePlan &other) const { return !(*this == other); }
};

/// A complete plan and its predictions.
struct PipelinePlan {
  std::vector<StagePlan> stages;
  /// The planner's closed-form objective (docs/planner.md): the sum of the
  /// stage and transfer times of one microbatch plus (M - 1) times the
  /// slowest of them.
  double objectiveMs = 0;
  /// The objective of the plan the search returned, before any 1F1B
  /// refinement on the replay: the least of every plan when `exact`.
  double optimalObjectiveMs = 0;
  /// Filled by the simulator: the iteration (the objective the search
  /// minimizes), its idle share, and the step with the optimizer updates.
  double predictedIterationMs = 0, bubbleFraction = 0, predictedStepMs = 0;
  /// Whether the search was exact under the objective; when not, a proven
  /// bound on how far optimalObjectiveMs is above the optimum, relative.
  bool exact = true;
  double gapBound = 0;
  /// Whether the plan's replayed iteration time is proven the least of
  /// every plan; when not, a proven bound on how far above it is,
  /// relative. For inference and GPipe the objective is the replay, so
  /// these follow `exact` and `gapBound`; 1F1B plans get them from
  /// searchLeastReplay.
  bool iterationExact = true;
  double iterationGapBound = 0;
  /// Every plan the Pareto walk visited: the least sum for each bound on
  /// the slowest element.
  std::vector<std::vector<StagePlan>> paretoPlans;
  /// For 1F1B, every plan the search for the floor under the replay
  /// visited (front-heavy plans whose warm-ups hide time).
  std::vector<std::vector<StagePlan>> floorPlans;
};

/// Chooses the plan minimizing the objective under every device's memory,
/// honouring the hand-given stages, cuts, device order and recompute in
/// the options. A 1F1B training plan is then refined on its replay (see
/// refinePlanBySimulation). Fails when no plan fits, naming the device and by
/// how much the closest plan misses; or when the options cannot be met.
llvm::Expected<PipelinePlan> planPipeline(const PlanProblem &problem);

/// How to choose the cut points.
enum class Partition {
  /// The planner's optimum.
  Auto,
  /// The same number of layers per stage (Megatron-LM; DeepSpeed "uniform").
  Uniform,
  /// Balanced parameter bytes (DeepSpeed "parameters").
  Parameters,
  /// Balanced time as if every device were the cluster's first (PipeDream).
  SpeedBlind,
};

/// The cut points `strategy` chooses for `numStages` stages; empty for
/// Partition::Auto. Stages then go to the devices in cluster order.
std::vector<unsigned> baselineCuts(const PlanProblem &problem,
                                   Partition strategy, unsigned numStages);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_PLANNER_H
