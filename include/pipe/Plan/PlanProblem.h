//===- PlanProblem.h - per-range stage costs for the planner ----*- C++ -*-===//
//
// PlanProblem precomputes, per device and per layer range, everything the
// cost model says about a stage, so that the partitioner, the exhaustive
// search, hand-written plans and the simulator all price a stage the same
// way. See docs/planner.md for the algorithm and the formulas.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_PLANPROBLEM_H
#define PIPE_PLAN_PLANPROBLEM_H

#include "pipe/Plan/Cluster.h"
#include "pipe/Plan/LayerGraph.h"
#include "pipe/Plan/Planner.h"
#include "pipe/Plan/StageMemory.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace pipe {

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

/// A proven lower bound on every plan's objective, or with `replay` on
/// every plan's replayed iteration time, from the Lagrangian dual of the
/// relaxation that lets devices take any share of any layer
/// (lib/Plan/Bounds/RelaxedFloor.cpp). Cheap at any size: for plans past the
/// exact range.
double relaxedFloorMs(const PlanProblem &problem, bool replay);

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

#endif // PIPE_PLAN_PLANPROBLEM_H
