//===- ReplaySearch.h - the least 1F1B replay ------------------*- C++ -*-===//
//
// Internal to lib/Plan: the branch and bound over 1F1B replays, shared by
// ReplaySearch.cpp (the search) and ReplayBounds.cpp (its bounds on what
// the stages left can add).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_LIB_PLAN_BOUNDS_REPLAYSEARCH_H
#define PIPE_LIB_PLAN_BOUNDS_REPLAYSEARCH_H

#include "../Search/Partitioner.h"
#include "pipe/Plan/Simulator.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace mlir {
namespace pipe {
namespace replaysearch {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Pricing a stage (its memory and times, for each recompute) costs about
/// as much as this many simulated steps.
constexpr uint64_t kPricingSteps = 16;
/// The maps of partial plans searched keep at most this many numbers
/// (64 MiB); past it, partial plans are still compared with those kept.
constexpr size_t kMaxKeptPaths = size_t(8) << 20;
/// The least responses of the suffixes left (suffixResponse) keep at most
/// this many numbers (32 MiB).
constexpr size_t kMaxKeptResponses = size_t(4) << 20;
/// A map has (M + 1)^2 entries and takes about M / 4 replays' steps to
/// compute: past this many microbatches no maps are compared (their
/// working space would pass 25 MB at 64 stages).
constexpr unsigned kMaxComparedMicrobatches = 128;
/// At each depth, maps are compared this many times before their worth is
/// judged.
constexpr uint64_t kComparedFirst = 64;

class ReplaySearch {
public:
  /// Which searches run() makes: those below the incumbent, which end at
  /// the incumbent itself when each finishes; or only the one at the
  /// incumbent, which stops early once `stop` is set.
  enum class Part { BelowTheBest, AtTheBest };

  ReplaySearch(const PlanProblem &problem, const PipelinePlan &plan,
               uint64_t stepBudget, const SuffixTables *tables, Part part,
               const std::atomic<bool> *stop = nullptr);

  /// Searches every stage count; returns whether the search finished.
  bool run();

  double bestMs() const { return best; }
  ArrayRef<StagePlan> bestPlan() const { return bestStages; }
  /// A proven lower bound on every plan's replay, when run() did not
  /// finish.
  double lowerBoundMs() const { return proven; }

private:
  /// Places stages from layer `begin` on until `numStages` are placed.
  /// `nodeBound` bounds every plan that extends the stages placed.
  void descend(unsigned numStages, unsigned begin, double nodeBound);
  /// A lower bound on the replay of every plan of `numStages` stages that
  /// extends the stages placed, whose next stage starts at layer `next`.
  double bound(unsigned numStages, unsigned next);
  /// The largest of what a stage placed adds to the replay for the other
  /// M - 1 microbatches beyond what its warm-up hides, or M - 1 times a
  /// transfer between them, in a plan of `numStages` stages.
  double placedSlowest(unsigned numStages) const;
  /// The least over the partitioner's suffixes of the stages left on the
  /// devices left, from layer `next` on, of the bound: sum of every stage
  /// and transfer time plus the largest of placedSlowest and M - 1 times
  /// the suffix's largest unhidden stage time or transfer.
  double suffixBound(unsigned numStages, unsigned next);
  /// The sum and the largest of the layers' least times from `next` on,
  /// on the classes with devices left.
  std::pair<double, double> layersLeft(unsigned next);
  std::map<std::string, std::vector<std::pair<double, double>>>
      layersLeftByClasses;
  /// A suffix's least sum of stage and transfer times, for a least
  /// largest unhidden time; and in a front, the least of sum + (M - 1)
  /// uLow over the points up to this one.
  struct SuffixPoint {
    double sum, uLow, leastUpTo;
  };
  /// For the suffixes of `left` stages on the devices left from layer
  /// `next` on, whose first stage is on the tables' class `first`, the
  /// points of the tables no other point beats in both, by ascending sum.
  ArrayRef<SuffixPoint> suffixFront(uint64_t remaining, unsigned next,
                                    unsigned left, unsigned first);
  std::unordered_map<uint64_t, std::vector<SuffixPoint>> fronts;
  /// The devices left, as a key of SuffixTables.
  uint64_t devicesLeft() const;
  /// An id of the suffixes of `left` stages on the devices `remaining` (a
  /// key of SuffixTables) from layer `next` on with the tables' class
  /// `cls` (their first, or the last placed).
  uint64_t suffixesId(uint64_t remaining, unsigned next, unsigned left,
                      unsigned cls) const;
  /// The keys of the suffixes of `left` stages on the devices `remaining`
  /// (a key of SuffixTables).
  ArrayRef<unsigned> keysLeft(uint64_t remaining, unsigned left);
  /// The least over the suffixes of `left` stages on the devices left
  /// from layer `next` on of SuffixTables::response, after the last stage
  /// placed.
  ArrayRef<double> suffixResponse(unsigned next, unsigned left);
  std::unordered_map<uint64_t, std::vector<double>> responses;
  std::vector<double> responseScratch;
  /// The keys of the suffixes of each stage count on each set of devices
  /// left.
  std::unordered_map<uint64_t, std::vector<unsigned>> keysByRemaining;
  /// The least round trip of a microbatch through the suffixes
  /// suffixBound enumerated last, from the end of its forward pass on the
  /// last stage placed to its gradient's arrival there.
  double leastRoundTrip = 0;
  /// Of the same suffixes, the least transfer into them, and the least
  /// time of their first layer.
  double leastEntry = 0, leastFirst = 0;
  /// The least transfer into a stage from layer `next` on a device left,
  /// and the least time of that layer there.
  std::pair<double, double> leastEntryLeft(unsigned next) const;
  /// The replay of the stages placed, as a whole plan.
  double completeReplay();
  /// Whether stages placed before, ending at layer `next` on the same
  /// devices as those placed now, have a map no later anywhere; if not,
  /// keeps the map of those placed now.
  bool dominated(unsigned numStages, unsigned next);
  /// Whether comparing maps of `depth` stages placed is worth its steps:
  /// on instances of few layers or of devices all unlike, few partial plans
  /// are skipped, and the maps cost more than they save.
  bool worthComparing(unsigned depth) const;
  /// Per depth: maps compared, partial plans skipped and the steps that
  /// took, and the partial plans searched after a comparison and the steps
  /// of their subtrees.
  struct Comparisons {
    uint64_t made = 0, skipped = 0, steps = 0, searched = 0, searchedSteps = 0;
  };
  std::vector<Comparisons> comparisons;
  PrefixResponse response;
  /// The maps of the partial plans searched, by their stage count, end and
  /// devices.
  PrefixMaps searched{kMaxKeptPaths};
  /// Times and recompute of layers [begin, end) on `device` at
  /// `positionFromEnd`: the fastest recompute that fits; none if none fits.
  std::optional<std::pair<ReplayStage, Recompute>>
  fit(unsigned begin, unsigned end, unsigned device,
      unsigned positionFromEnd) const;
  bool exhausted() const {
    return steps > budget || (stop && stop->load(std::memory_order_relaxed));
  }
  /// Partial plans whose bound reaches this are not searched.
  double cutoff() const { return std::min(best, target); }

  const PlanProblem &problem;
  const PlanOptions &options;
  unsigned m, numLayers;
  SmallVector<Recompute, 3> choices;
  std::vector<std::vector<unsigned>> classes;
  std::vector<unsigned> used;
  /// The groups of identical hosts (identicalHostGroups), and per class its
  /// group and its host's place there (~0u for none).
  std::vector<HostGroup> hostGroups;
  std::vector<unsigned> groupOf, placeOf;
  /// Whether class `c` is on a host no stage uses yet, after an alike host
  /// no stage uses either: swapping the two maps every plan that goes on
  /// from `c` to one that goes on from the other, at the same replay.
  bool mirrorsAnEarlierHost(unsigned c) const;

  /// The stages placed, their classes, times and the transfers between
  /// them.
  std::vector<StagePlan> placed;
  std::vector<unsigned> placedClasses;
  std::vector<ReplayStage> placedTimes;
  std::vector<double> placedCuts;
  /// Stage and transfer times of one microbatch through the stages placed.
  double placedSum = 0;

  /// Kept from one replay to the next.
  ReplayScratch scratch;
  std::vector<ReplayStage> standInTimes;
  std::vector<double> standInCuts;
  const SuffixTables *tables;

  /// layerMs[c][l]: forward and backward time of layer l on class c.
  std::vector<std::vector<double>> layerMs;

  double best;
  std::vector<StagePlan> bestStages;
  /// The replay the search looks below (none: the best plan's), the
  /// least bound the budget left unexplored, and the lower bound proven.
  double target = kInf, openBound = kInf, proven = 0;
  /// Steps taken, and the budget of all the searches.
  uint64_t steps = 0, budget;
  Part part;
  const std::atomic<bool> *stop;
};

} // namespace replaysearch
} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_PLAN_BOUNDS_REPLAYSEARCH_H
