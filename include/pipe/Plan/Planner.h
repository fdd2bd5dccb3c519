//===- Planner.h - pipeline partitioning over a layer graph -----*- C++ -*-===//
//
// The planner works on a layer graph: the model's ops in program order,
// grouped by ONNX node ("layers"), with the tensors that cross between them
// and the parameters each one reads. A plan cuts that order into contiguous
// stages, places each on a device of the cluster and picks its recompute.
//
// PlanProblem precomputes, per device and per layer range, everything the
// cost model says about a stage, so that the partitioner, the exhaustive
// search, hand-written plans and the simulator all price a stage the same
// way. See docs/planner.md for the algorithm and the formulas.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_PLANNER_H
#define PIPE_PLAN_PLANNER_H

#include "pipe/Plan/Cluster.h"
#include "pipe/Plan/CostModel.h"
#include "pipe/Plan/StageMemory.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace pipe {

/// A parameter, or a constant tensor, some layer reads.
struct PlanParam {
  std::string name;
  int64_t bytes = 0;
  /// Trainable parameters have a gradient and optimizer state.
  bool trainable = false;
};

/// A read of a value that may make a training stage stash it. A stage of
/// layers [begin, end) holding `layer` keeps the value for its backward
/// pass under a recompute choice when end > neededBy[choice]
/// (kNeverNeeded: never). A gradient op of layer l reads it: l under every
/// choice. A forward op of layer l reads it: under selective and full
/// recompute, the layer of the first gradient op whose operand that op
/// helps rebuild (the backward pass of a stage ending there recomputes the
/// op, so it needs the value), and kNeverNeeded under none.
struct StashRead {
  static constexpr unsigned kNeverNeeded = ~0u;
  unsigned layer = 0;
  unsigned neededBy[3] = {kNeverNeeded, kNeverNeeded, kNeverNeeded};
};

/// A tensor a layer produces, or a graph input.
struct PlanValue {
  int64_t bytes = 0;
  /// The producing layer; -1 for a graph input.
  int producer = -1;
  /// Whether a contraction computes it (selective recompute keeps those).
  bool contraction = false;
  /// With LayerGraph::derivedStash: the reads that may stash it.
  llvm::SmallVector<StashRead, 1> stashReads;
};

/// One layer: the ops of one ONNX node (or one op, for IR without node
/// names), in program order.
struct PlanLayer {
  std::string name;
  /// The forward cost of each op.
  llvm::SmallVector<OpCost> ops;
  /// The cost of each op of the layer's gradient, when derived (see
  /// LayerGraph::derivedBackward).
  llvm::SmallVector<OpCost> backwardOps;
  /// Bytes of the results a training stage keeps for the backward pass
  /// without recompute (reshapes alias their input and keep nothing): the
  /// stash's price without LayerGraph::derivedStash.
  int64_t stashBytes = 0;
  /// The part of stashBytes that contractions produce.
  int64_t contractionBytes = 0;
  /// The largest single op's activation operands and results (reshapes,
  /// which alias their input, take none).
  int64_t workspaceBytes = 0;
  /// Distinct parameters and values read (indices into LayerGraph).
  llvm::SmallVector<unsigned> params;
  llvm::SmallVector<unsigned> inputs;
};

/// A model as the planner sees it: layers in a topological order.
struct LayerGraph {
  std::vector<PlanLayer> layers;
  std::vector<PlanValue> values;
  std::vector<PlanParam> params;
  /// Whether the layers' backward costs are those of the ops
  /// --pipe-autodiff builds (deriveBackwardCosts); else a layer's backward
  /// pass is priced from its forward ops (twice the FLOPs).
  bool derivedBackward = false;
  /// Whether the values' stashReads are those of the gradient ops
  /// --pipe-autodiff builds (deriveBackwardCosts); then a stage's stash is
  /// exactly what --pipe-insert-recompute and --pipe-split-stages keep.
  /// Else it is priced per layer (PlanLayer::stashBytes).
  bool derivedStash = false;
  /// The layer of each op location of the function it was built from.
  llvm::DenseMap<Location, unsigned> layerOfLocation;
  /// The layer of each op of that function that belongs to one, in order.
  std::vector<std::pair<Operation *, unsigned>> layerOfOp;

  /// Bytes of the values produced at or before layer `c` and read after
  /// it, for every cut c in [0, layers.size() - 1). Values that skip a
  /// stage are relayed by it, so each cut carries all of them.
  std::vector<int64_t> cutBytes() const;
};

/// Builds the layer graph of `func`: consecutive ops with the same ONNX
/// node name form a layer; parameters and constants become PlanParams.
/// Fails, naming the op, on a tensor without a static shape.
llvm::Expected<LayerGraph> buildLayerGraph(func::FuncOp func);

/// Prices the backward pass of `graph`, built from `module`'s @main, with
/// the gradient ops --pipe-autodiff builds for a copy of the module: each
/// gradient op counts for the layer of the forward op it differentiates
/// (the accumulation of the parameters' gradients for the last layer).
/// When the model cannot be differentiated, leaves `graph` as it was and
/// says why in `estimatedBecause`. Fails only on a model the training step
/// refuses (batch normalization statistics it cannot update) or whose
/// backward pass is past what the planner counts.
llvm::Error deriveBackwardCosts(ModuleOp module, LayerGraph &graph,
                                std::string &estimatedBecause);

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
  /// Past this many cells of the dynamic program (states per layer
  /// boundary times boundaries), the 1F1B floor's search makes a few runs
  /// on the cluster's classes and the rest with one class per kind, each
  /// cut at its least transfer (docs/planner.md, "The floor").
  double floorCells = 1e6;
  /// Runs of the dynamic program over simplified classes (classCells) that
  /// no search over the devices makes exact prove nothing (1F1B, blocks of
  /// layers, or where that search gave up): a floor bounds their plans'
  /// gaps. With no state dropped, each
  /// visits all its cells, so past this many cells in all (about 2.5 s on
  /// a 2-core machine) the search stops there with the plan it has. 100
  /// layers × 16 devices take at most a seventh of it; 256 layers on 26
  /// devices of four kinds took up to 16 s without it (docs/planner.md,
  /// "There are three other limits").
  double inexactCells = 8e7;
  /// On blocks of layers, the floor over the model's own layers makes as
  /// many runs of the dynamic program as fit in this much work (cells times
  /// the layers a stage spans on average; about 0.6 s on a 2-core machine),
  /// and none if fewer than four fit (six under 1F1B). 0 turns it off
  /// (docs/planner.md, "A floor over every layer").
  double layerFloorWork = 2.5e8;
  /// Past this many cells of the dynamic program over the cluster's
  /// interchangeable devices, devices with the same numbers form one class
  /// whatever their hosts and links: the plan is then not proven the least,
  /// and a search with every cut at its least transfer bounds its gap
  /// (docs/planner.md, "There are three other limits").
  double classCells = 4e6;
  /// Past classCells, first count the devices used per class up to the
  /// cluster's symmetries: hosts with alike devices and links are
  /// interchangeable, so a state need only know which counts its hosts
  /// have, not which host has which. The search stays exact, and is used
  /// where these states make at most 4 million cells whatever classCells
  /// says (docs/planner.md, "Identical hosts").
  bool hostSymmetry = true;
  /// GPipe's relaxation to one bottleneck stops, and the nested searches
  /// search every step, where a plan it finds below the best has a J this
  /// much (relative) above its relaxed objective (docs/planner.md, "GPipe's
  /// relaxation to one bottleneck"). Infinity keeps it to the end.
  double weakRelaxation = 0.01;
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

/// The cost model's view of one stage, per microbatch unless noted.
struct StageCost {
  double forwardMs = 0, backwardMs = 0, recomputeMs = 0;
  /// The optimizer update, once per iteration.
  double optimizerMs = 0;
  StageMemory memory;
  int64_t flops = 0;
  unsigned ops = 0;

  /// Time the stage is busy per microbatch.
  double busyMs() const { return forwardMs + backwardMs + recomputeMs; }
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

/// Every per-range quantity the planner needs, precomputed.
class PlanProblem {
public:
  PlanProblem(const LayerGraph &graph, const Cluster &cluster,
              const PlanOptions &options);

  const LayerGraph &graph() const { return graphRef; }
  const Cluster &cluster() const { return clusterRef; }
  const PlanOptions &options() const { return opts; }
  unsigned numLayers() const { return graphRef.layers.size(); }
  unsigned numDevices() const { return clusterRef.devices.size(); }

  /// The cost of layers [begin, end) on `device` at `positionFromEnd`
  /// (0 for the last stage).
  StageCost stageCost(unsigned begin, unsigned end, unsigned device,
                      unsigned positionFromEnd, Recompute recompute) const;

  /// The time to send the tensors crossing the cut after layer `cut` from
  /// `from` to `to` (the gradients go back over the same link).
  double cutMs(unsigned cut, unsigned from, unsigned to) const;
  /// cutMs from a device of the interchangeable devices `from` to one of
  /// `to` (another of them where the two are the same devices).
  double classCutMs(unsigned cut, llvm::ArrayRef<unsigned> from,
                    llvm::ArrayRef<unsigned> to) const;
  /// The least cutMs from a device of `from` to another device of `to`
  /// (infinite where there is none).
  double leastCutMs(unsigned cut, llvm::ArrayRef<unsigned> from,
                    llvm::ArrayRef<unsigned> to) const;
  int64_t cutBytes(unsigned cut) const { return cuts[cut]; }

  /// A device's memory in bytes.
  int64_t capacityBytes(unsigned device) const;

  /// The first device with the same numbers as `device` (sameSpec), whose
  /// prices it shares.
  unsigned pricedLike(unsigned device) const { return pricedAs[device]; }

  /// `plan` with each stage in turn on the device, of those with its
  /// numbers that no stage before took, that the stage before reaches
  /// fastest: a plan searched with each cut at its least transfer
  /// (Partitioner's `leastLinks`) keeps its stages and recomputes, and its
  /// neighbours share a host where they can. No more stages than devices
  /// may have a device's numbers.
  std::vector<StagePlan> onNearDevices(std::vector<StagePlan> plan) const;

  /// Forward and backward time of layers [begin, end) for one microbatch
  /// on `device`, as stageCost prices them (without recompute).
  double forwardMs(unsigned begin, unsigned end, unsigned device) const {
    return fwd[device][end] - fwd[device][begin];
  }
  double backwardMs(unsigned begin, unsigned end, unsigned device) const {
    return bwd[device][end] - bwd[device][begin];
  }

  /// Per-layer forward and backward time of one microbatch on `device`.
  double layerForwardMs(unsigned layer, unsigned device) const {
    return fwd[device][layer + 1] - fwd[device][layer];
  }
  double layerBackwardMs(unsigned layer, unsigned device) const {
    return bwd[device][layer + 1] - bwd[device][layer];
  }
  /// Forward plus backward time of the whole model on `device`.
  double modelMs(unsigned device) const {
    return fwd[device].back() + bwd[device].back();
  }

  /// Forward + backward FLOPs of M microbatches over the cluster's combined
  /// peak at the cost model's best efficiency: no plan can beat it.
  double lowerBoundMs() const;

  /// The parts of the objective of a plan.
  struct Times {
    /// Stage times and transfers of one microbatch, end to end.
    double sum = 0;
    /// The slowest forward step (stage or transfer) and the slowest
    /// backward step; with a single bottleneck, all of it is in `forward`.
    double slowestForward = 0, slowestBackward = 0;
    /// With split bottlenecks, the larger of the slowest stage in all
    /// (forward, backward and recompute) and twice the slowest transfer:
    /// at most slowestForward + slowestBackward, equal when one stage or
    /// transfer is the slowest both ways (up to rounding: the parts add in
    /// another order).
    double slowestStep = 0;
    double objective(int64_t microbatches) const {
      return sum +
             double(microbatches - 1) * (slowestForward + slowestBackward);
    }
  };

  /// Whether the objective has separate forward and backward bottlenecks
  /// (GPipe, whose replay it then matches exactly) or one (1F1B).
  bool splitBottleneck() const;

  /// The transfer time of the cut after layer `cut` from device `from` to
  /// device `to`.
  using CutPrice =
      llvm::function_ref<double(unsigned cut, unsigned from, unsigned to)>;

  /// The objective's parts for `stages`. With `unhidden` (1F1B training),
  /// each stage counts for its unhiddenMs instead of its whole time in the
  /// slowest step: the parts of a lower bound on the replay. `cutPrice`
  /// prices the cuts instead of cutMs.
  Times times(llvm::ArrayRef<StagePlan> stages, bool unhidden = false,
              CutPrice cutPrice = nullptr) const;

  /// Under 1F1B, what a stage adds to the replay for each of the other
  /// M - 1 microbatches at least: its forward plus backward time, less
  /// min(positionFromEnd, M - 1) / (M - 1) times the shorter of the two,
  /// which its warm-up may hide (docs/planner.md, "The least replay").
  double unhiddenMs(double forwardMs, double backwardMs,
                    unsigned positionFromEnd) const {
    int64_t m = opts.microbatches;
    if (m < 2)
      return forwardMs + backwardMs;
    double hidden =
        double(std::min<int64_t>(positionFromEnd, m - 1)) / double(m - 1);
    return forwardMs + backwardMs - hidden * std::min(forwardMs, backwardMs);
  }

  /// The closed-form objective of `stages` (docs/planner.md).
  double objectiveMs(llvm::ArrayRef<StagePlan> stages) const {
    return times(stages).objective(opts.microbatches);
  }

  /// The recompute choices the options allow a stage, fastest first:
  /// none for inference, the forced one, or all three.
  llvm::SmallVector<Recompute, 3> recomputeChoices() const;

  /// Memory of a stage, by part.
  StageMemory stageMemory(unsigned begin, unsigned end,
                          unsigned positionFromEnd, Recompute recompute) const;

private:
  /// Distinct parameter bytes (all, trainable) and stage-input bytes of a
  /// range of layers.
  struct RangeBytes {
    int64_t all = 0, trainable = 0, inputs = 0;
  };
  /// Models up to this many layers get [begin][end] tables of RangeBytes.
  static constexpr unsigned kMaxTableLayers = 4096;
  RangeBytes rangeBytes(unsigned begin, unsigned end) const;
  /// Adds layer `layerIndex` to the sums of a range starting at `begin`.
  /// The stamps mark what a range counted already, by its start.
  struct Stamps {
    std::vector<unsigned> params, values;
  };
  Stamps freshStamps() const;
  void addLayer(RangeBytes &sums, Stamps &stamps, unsigned begin,
                unsigned layerIndex) const;
  /// What derivedBytes sums for a stage under a recompute choice: the
  /// values it keeps for its backward pass (its stash) or, with `rebuilt`,
  /// those its backward pass reads and rebuilds (its recompute buffer).
  struct StashKind {
    Recompute recompute;
    bool rebuilt;
    unsigned index() const {
      return rebuilt ? 2 + unsigned(recompute) : unsigned(recompute);
    }
    /// What a stage needs the read for: the rebuilt values are those the
    /// gradient ops read.
    unsigned neededBy(const StashRead &read) const {
      return read.neededBy[rebuilt ? unsigned(Recompute::None)
                                   : unsigned(recompute)];
    }
  };
  /// With LayerGraph::derivedStash: the bytes of `kind` of layers
  /// [begin, end), per microbatch.
  int64_t derivedBytes(unsigned begin, unsigned end, StashKind kind) const;
  /// Whether a stage starting at `begin` that reads `value` counts it in
  /// `kind`. It keeps what it receives always; what it computes, without
  /// recompute, and under selective recompute what a contraction computes.
  /// It rebuilds what it computes and does not keep.
  bool counts(const PlanValue &value, unsigned begin, StashKind kind) const;
  /// Models up to this many layers get [begin][end] tables of derivedBytes
  /// (up to five: each recompute choice's stash, and the rebuilt values of
  /// selective and full).
  static constexpr unsigned kMaxStashTableLayers = 2048;

  const LayerGraph &graphRef;
  const Cluster &clusterRef;
  PlanOptions opts;
  std::vector<int64_t> cuts;
  /// Per pair of devices (from * numDevices + to), their link's latency in
  /// ms and bandwidth in bytes/s, as transferTimeMs takes them.
  std::vector<std::pair<double, double>> linkPrices;
  // Prefix sums over layers, per device: forward, backward and
  // non-contraction forward time.
  std::vector<std::vector<double>> fwd, bwd, cheapFwd;
  std::vector<unsigned> pricedAs;
  std::vector<int64_t> prefixFlops, prefixOps, prefixStash, prefixContraction;
  /// The backward pass's FLOPs per microbatch (training only).
  double backwardFlops = 0;
  // [i][j] tables over layer ranges: distinct parameter bytes (all and
  // trainable) and stage-input bytes.
  std::vector<int64_t> paramAll, paramTrainable, inputs;
  // With LayerGraph::derivedStash: per layer, the values read there
  // (StashRead), and per StashKind::index() an [i][j] table of
  // derivedBytes(i, j) where the tables are kept.
  std::vector<std::vector<std::pair<unsigned, StashRead>>> readsAt;
  std::vector<int64_t> stashTables[5];
  // workspaceMax[k][i]: the largest workspace of layers [i, i + 2^k).
  std::vector<std::vector<int64_t>> workspaceMax;
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

/// Tries every plan (cut set, device sequence, recompute) and returns the
/// best objective: the reference the partitioner is tested against. Only
/// for small problems.
std::optional<PipelinePlan> exhaustivePlan(const PlanProblem &problem);

/// A proven lower bound on every plan's objective, or with `replay` on
/// every plan's replayed iteration time, from the Lagrangian dual of the
/// relaxation that lets devices take any share of any layer
/// (lib/Plan/RelaxedFloor.cpp). Cheap at any size: for plans past the
/// exact range.
double relaxedFloorMs(const PlanProblem &problem, bool replay);

/// `bytes` for people: "1.5 GiB", "512 B".
std::string formatBytes(int64_t bytes);

/// The fastest recompute the options allow with which the stage [begin,
/// end), `positionFromEnd` stages from the end, fits `device`; none if
/// none fits.
std::optional<Recompute> fastestFittingRecompute(const PlanProblem &problem,
                                                 unsigned begin, unsigned end,
                                                 unsigned positionFromEnd,
                                                 unsigned device);

/// Gives every stage of `plan` the fastest recompute the options allow
/// that fits its device; fails if some stage fits with none.
bool fitRecompute(const PlanProblem &problem, std::vector<StagePlan> &plan);

/// Whether `plan` fits every device's memory.
bool fitsMemory(const PlanProblem &problem, llvm::ArrayRef<StagePlan> plan);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_PLANNER_H
