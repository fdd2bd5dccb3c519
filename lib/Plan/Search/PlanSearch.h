//===- PlanSearch.h - the plan search's shared parts ------------*- C++ -*-===//
//
// Internal to lib/Plan: the limits, the branch and bound over bottlenecks
// and the searches under limits that the plan search (Search/PlanSearch.cpp,
// Search/SearchBottlenecks.cpp) and the floors under it (Bounds/
// PlanFloors.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_LIB_PLAN_SEARCH_PLANSEARCH_H
#define PIPE_LIB_PLAN_SEARCH_PLANSEARCH_H

#include "Partitioner.h"
#include "pipe/Plan/Simulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <vector>

namespace mlir {
namespace pipe {
namespace search {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The limits on unhidden stage times under which the replay search gets
/// tables of least suffix sums.
constexpr unsigned kSuffixLimits = 32;
/// At most this many cells in all, over the limits (84 MB): 32 limits for
/// four classes of four devices at 100 layers.
constexpr size_t kSuffixCells = 10500000;

/// Past this many layers, the planner plans blocks of layers unless the
/// options say otherwise or the search over every layer is cheap.
constexpr unsigned kExactLayers = 256;
/// The search over every layer is cheap below this many transitions of its
/// dynamic program (cells times the layers a stage spans on average): two
/// kinds of devices at 500 layers on 16 devices (3.8 million) plan in
/// 0.2 s under GPipe and 1.4 s under 1F1B, its replay search included;
/// four kinds at 300 layers (18 million) take 2.3 and 7.3 s. Under 1F1B
/// training, where the replay's work grows with the stages, the estimate
/// counts S / 32 times as much past 32 stages (1500 layers on 256 devices
/// of one kind took 7.7 s without that).
constexpr double kCheapTransitions = 5e6;

/// Runs of the dynamic program past which a bottleneck search stops and
/// reports the gap it has proven.
constexpr unsigned kSearchRuns = 3000;
/// With simplified classes, each run of the search over the cluster's
/// devices (Partitioner::searchOnDevices) tries first with a quarter of
/// this many transitions, and gives up past this many on its second try.
constexpr uint64_t kDeviceTransitions = 10000000;

/// Past SearchTuning::floorCells, the search for the floor under the 1F1B
/// replay makes only this many runs on the cluster's own classes
/// (replayFloor): a run there took 0.23 s on a 176-node ResNet on six
/// classes (2.9 million cells), and the whole search 28 runs.
constexpr unsigned kFloorRunsOnManyCells = 4;

/// On blocks of layers, the floor over the model's own layers
/// (floorOverLayers) makes as many runs of the dynamic program as fit in
/// SearchTuning::layerFloorWork, and none if fewer than this many fit; under
/// 1F1B, whose floor rises more slowly, none if fewer than
/// kLeastUnhiddenFloorRuns (GPT-2-XL on 32 devices, where 4.4 fit, took
/// 0.6 s more for a gap 0.4 points smaller; at 16 devices 7.8 runs took
/// 0.4 s more for 3.2 points).
constexpr unsigned kLeastLayerFloorRuns = 4;
constexpr unsigned kLeastUnhiddenFloorRuns = 6;

/// Searches are counted; past the budget every search stops and records
/// the least lower bound of what it left unexplored.
struct SearchBudget {
  unsigned left;
  double unexplored = kInf;
  /// The cells that runs proving nothing may still visit
  /// (SearchTuning::inexactCells).
  double inexactCells = kInf;
  bool exhausted() const { return left == 0; }
  /// Counts a run of `partitioner`'s dynamic program, once it has run, and
  /// its cells where it proved nothing: over simplified classes, unless the
  /// search over devices made it exact (a run where that search gave up
  /// counts).
  void spend(const Partitioner &partitioner) {
    --left;
    if (!partitioner.isApproximate() || partitioner.exactOnDevices())
      return;
    inexactCells -= partitioner.numCells();
    if (inexactCells < 0)
      left = 0;
  }
};

/// Minimizes value + lambda * slowest over the results of a probe, by
/// branch and bound over the bound on `slowest`. probe(low, bound, valueCap)
/// returns the least value among the results whose slowest is at most
/// `bound`, if it is below `valueCap`. Results in [low, high] have a value
/// of at least that of the probe at `high`, so an interval's lower bound is
/// that value plus lambda times its low end; the result found dominates
/// every result with a larger slowest, and the rest of the interval is
/// halved so that good results, and with them tight bounds, come early.
class BottleneckSearch {
public:
  struct Result {
    double value, slowest, payload;
  };

  /// Only results below `cap` count; with `shared`, only those below
  /// *shared - sharedOffset too (a bound that may fall while it runs).
  /// With `relaxation`, the results' objectives are only lower bounds on
  /// the shared one's, so only the shared one prunes (and `cap` is
  /// ignored).
  BottleneckSearch(double lambda, double cap, SearchBudget &budget,
                   const double *shared = nullptr, double sharedOffset = 0,
                   bool relaxation = false)
      : lambda(lambda), best(cap), budget(budget), shared(shared),
        sharedOffset(sharedOffset), relaxation(relaxation) {
    assert((!relaxation || shared) && "a relaxation prunes at the shared");
  }

  template <typename Probe>
  void run(double low, double high, double floorValue, double offset,
           Probe probe) {
    struct Interval {
      double low, high, bound;
      bool operator<(const Interval &other) const {
        return bound > other.bound;
      }
    };
    std::priority_queue<Interval> queue;
    auto push = [&](double lo, double hi, double value) {
      if (lo > hi)
        return;
      if (lambda > 0 && std::isfinite(hi) && hi - lo > 1e-9 * hi) {
        double middle = lo + (hi - lo) / 2;
        queue.push({std::nextafter(middle, kInf), hi, value + lambda * middle});
        hi = middle;
      }
      queue.push({lo, hi, value + lambda * lo});
    };
    push(low, high, floorValue);
    while (!queue.empty()) {
      Interval interval = queue.top();
      queue.pop();
      if (interval.bound >= incumbent())
        break;
      if (budget.exhausted()) {
        budget.unexplored =
            std::min(budget.unexplored, interval.bound + offset);
        return;
      }
      std::optional<Result> found = probe(interval.low, interval.high,
                                          incumbent() - lambda * interval.low);
      if (!found)
        continue;
      double objective = found->value + lambda * found->slowest;
      if (objective < best) {
        best = objective;
        bestPayload = found->payload;
        foundAny = true;
      }
      if (lambda > 0)
        push(interval.low, std::nextafter(found->slowest, 0.0), found->value);
    }
  }

  bool found() const { return foundAny; }
  double objective() const { return best; }
  double payload() const { return bestPayload; }

private:
  double incumbent() const {
    if (relaxation)
      return *shared - sharedOffset;
    return shared ? std::min(best, *shared - sharedOffset) : best;
  }

  double lambda, best;
  SearchBudget &budget;
  const double *shared;
  double sharedOffset;
  bool relaxation;
  double bestPayload = 0;
  bool foundAny = false;
};

/// Runs of the partitioner's dynamic program under limits on the slowest
/// forward and backward steps and on the sum (and one limit on the step in
/// all, SearchLimits::step, the same for every run), answered from earlier
/// runs where they can be. The least sum under some limits is no less than
/// under larger ones: the least-sum plan under larger limits is also the
/// least under smaller limits that it meets, and a least sum at or above
/// the cap under larger limits leaves none below it under smaller ones.
/// (The branch and bound under GPipe's two limits asks for limits within
/// earlier ones often: about a third of its runs are answered so.)
class LimitedSearch {
public:
  struct Found {
    std::vector<StagePlan> stages;
    PlanProblem::Times times;
  };

  /// Each run of the dynamic program counts against `budget`, and each
  /// plan a run finds goes to `onFound` (which must outlive the search).
  LimitedSearch(const PlanProblem &problem, Partitioner &partitioner,
                SearchBudget &budget,
                llvm::function_ref<void(const Found &)> onFound,
                bool unhidden = false, double step = kInf)
      : problem(problem), partitioner(partitioner), budget(budget),
        onFound(onFound), unhidden(unhidden), step(step) {}

  /// The least-sum plan within the limits if its sum is below `sumCap`,
  /// else null (one whose sum is the cap may come either way: it beats no
  /// incumbent).
  const Found *search(double forward, double backward, double sumCap) {
    bool split = problem.splitBottleneck();
    for (const Entry &entry : entries) {
      if (entry.forward < forward || entry.backward < backward)
        continue;
      if (!entry.found) {
        if (entry.sumCap >= sumCap)
          return nullptr;
        continue;
      }
      const PlanProblem::Times &times = entry.found->times;
      if (times.sum >= sumCap)
        return nullptr;
      if (times.slowestForward <= forward &&
          (!split || times.slowestBackward <= backward))
        return entry.found;
    }
    SearchLimits limits;
    limits.forward = forward;
    limits.backward = backward;
    limits.sumCap = sumCap;
    limits.unhidden = unhidden;
    limits.step = step;
    std::optional<std::vector<StagePlan>> plan = partitioner.search(limits);
    budget.spend(partitioner);
    const Found *found = nullptr;
    if (plan) {
      PlanProblem::Times times = partitioner.planTimes(*plan, unhidden);
      found = &results.emplace_back(Found{std::move(*plan), times});
      onFound(*found);
    }
    entries.push_back({forward, backward, sumCap, found});
    return found;
  }

private:
  struct Entry {
    double forward, backward, sumCap;
    const Found *found;
  };
  const PlanProblem &problem;
  Partitioner &partitioner;
  SearchBudget &budget;
  llvm::function_ref<void(const Found &)> onFound;
  bool unhidden;
  /// SearchLimits::step, the same for every run.
  double step;
  std::vector<Entry> entries;
  std::deque<Found> results;
};

/// What a search found: the best plan, or when nothing fits, the plan whose
/// worst memory overflow is least.
struct SearchOutcome {
  PipelinePlan plan;
  bool fits;
  /// Whether the search was exhaustive under the objective.
  bool proven;
  /// For 1F1B training, a proven lower bound on every plan's replay (0 for
  /// none), and bounds on what suffixes add to it (suffixTableLayout; none
  /// for a given device order, nor over devices with the same numbers
  /// where the bounds of the suffixes' own stalls are not built).
  double replayFloorMs = 0;
  SuffixTables suffixes;
  /// With simplified classes, a floor under every plan's objective from
  /// the search with each cut at its least transfer (0 for none;
  /// leastLinkFloor).
  double leastLinkFloorMs = 0;
};

/// The objective of the best plan is at least this.
double objectiveFloor(const PlanProblem &problem);

/// An upper bound on every transfer of every plan: the largest cut over
/// the slowest link between two devices. Devices of two interchangeable
/// classes (or two of one) all share one link, so representatives do.
double slowestTransferMs(const PlanProblem &problem);

/// A lower bound on every 1F1B replay (docs/planner.md): the least of
/// sum + (M - 1) max(unhidden stage time, transfer) over every plan the
/// options allow, or a bound below it. Adds the plans its searches visit
/// to `visited`.
///
/// Unhidden times admit no dominated states, so a run of the dynamic
/// program costs all its states, which classes of one kind on several
/// hosts multiply. Past SearchTuning::floorCells, the floor is the larger of
/// what a few runs on the cluster's classes prove (their plans are the seeds
/// that know the hosts) and the least over plans whose cuts each cost their
/// least transfer, with one class per set of devices with the same numbers
/// (Partitioner's `leastLinks`: a relaxation, so its least is a floor too;
/// six classes of three kinds on two hosts become three, 1,008 states per
/// layer boundary instead of 16,128).
///
/// With simplified classes the search proves nothing about every plan, and
/// only that relaxation gives a floor, past floorCells from a few runs;
/// only on the model's own layers (`modelLayers`: on blocks it would bound
/// only the plans that cut between blocks), else zero.
double replayFloor(const PlanProblem &problem, Partitioner &searched,
                   unsigned stages, double cap, bool modelLayers,
                   std::vector<std::vector<StagePlan>> &visited);

/// The layout of the suffix tables for the plans of `stages` stages (0:
/// any the options allow) that replay below `capMs` (its classes, keys and
/// stageLimit), with no table filled. The classes are `partitioner`'s
/// where its keys count devices by class; else, but for a given device
/// order, the devices with the same numbers with cuts at their least
/// transfer (a partitioner with `leastLinks`); an empty radix where
/// neither counts.
SuffixTables suffixTableLayout(const PlanProblem &problem,
                               const Partitioner &partitioner,
                               double capMs, unsigned stages);

/// Fills the partitioner's tables of least suffix sums and least largest
/// unhidden times in `tables` (laid out by suffixTableLayout), for the
/// branch and bound over replays. A plan replays below the cap only if its
/// unhidden times are within the tables' stageLimit; the least sums under
/// limits up to it tell which suffixes such a plan can have. `perLimit`
/// runs the dynamic program once per limit (tabulateSuffixes).
void fillSuffixTables(const PlanProblem &problem,
                      Partitioner &partitioner, SuffixTables &tables,
                      bool perLimit = false);

/// The most stages a plan may have: the given count, or one per device of
/// the given order, else one per device.
unsigned mostStages(const PlanProblem &problem);

/// Past the exact range the plan is found on blocks of layers, and the
/// floors of that search bound only the plans that cut between blocks. A
/// search over the model's own layers, cut short, bounds every plan:
/// under 1F1B, the least of sum + (M - 1) max(unhidden stage time,
/// transfer) (leastUnhidden), under GPipe the least of sum + (M - 1)
/// (slowest step in all) (J1 of searchBottlenecks), else the objective
/// itself; each at most the replay or objective of any plan. Devices with
/// the same numbers form one class and cuts cost their least transfer
/// (Partitioner's `leastLinks`, but for a given device order), which keeps
/// the floor and has fewer states. Returns 0 (no floor) where too few runs
/// fit in SearchTuning::layerFloorWork (kLeastLayerFloorRuns,
/// kLeastUnhiddenFloorRuns), with one microbatch, or where the classes are
/// too many to count. Under 1F1B the plans the search visits join the
/// refinement's seeds; otherwise the search looks below `capMs` (at least
/// the objective of `plan`, which must be its objective over the layers),
/// and the best plan it finds, after a descent on cuts, replaces `plan`
/// where it fits and has a smaller objective.
double floorOverLayers(const PlanProblem &problem, PipelinePlan &plan,
                       double capMs);

/// The branch and bound over the bottlenecks (docs/planner.md, "The
/// search"): lowers `best` to the least objective of the plans
/// `partitioner` searches, as it prices them, if that is below
/// best.objectiveMs; past the budget, records in it the least bound left
/// open.
void searchBottlenecks(const PlanProblem &problem,
                       Partitioner &partitioner, unsigned stages,
                       PipelinePlan &best, SearchBudget &budget);

/// With simplified classes the search proves nothing about every plan.
/// The same search with each cut at its least transfer, one class per set
/// of devices with the same numbers (Partitioner's `leastLinks`), does:
/// no plan costs more there than in the cluster. Returns that floor under
/// every plan's objective (at most the objective of `best`, which bounds
/// the search), and takes its plan, each stage moved to the device of its
/// numbers that the stage before reaches fastest, where that beats
/// `best`. (replayFloor bounds the 1F1B replay over the same classes.)
double leastLinkFloor(const PlanProblem &problem, unsigned stages,
                      PipelinePlan &best);

} // namespace search
} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_PLAN_SEARCH_PLANSEARCH_H
