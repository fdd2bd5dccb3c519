//===- PlanSearch.cpp - the search for the best plan ----------------------===//
//
// Drives the partitioner's dynamic program (Partitioner.cpp) to the plan
// of least objective: a branch and bound over the slowest step (over two
// for GPipe) from a quick seed plan; floors under every plan where the
// search cannot finish; blocks of layers past the exact range; the
// fastest devices when they are too many to count by class; the plan whose
// memory overflow is least when nothing fits; and, for 1F1B, the
// refinement and the search over replays (Refine.cpp, ReplaySearch.cpp).
// See docs/planner.md, "The search".
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"
#include "pipe/Plan/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <set>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();

/// The limits on unhidden stage times under which the replay search gets
/// tables of least suffix sums.
static constexpr unsigned kSuffixLimits = 32;
/// At most this many cells in all, over the limits (84 MB): 32 limits for
/// four classes of four devices at 100 layers.
static constexpr size_t kSuffixCells = 10500000;

/// Past this many layers, the planner plans blocks of layers unless the
/// options say otherwise or the search over every layer is cheap.
static constexpr unsigned kExactLayers = 256;
/// The search over every layer is cheap below this many transitions of its
/// dynamic program (cells times the layers a stage spans on average): two
/// kinds of devices at 500 layers on 16 devices (3.8 million) plan in
/// 0.2 s under GPipe and 1.4 s under 1F1B, its replay search included;
/// four kinds at 300 layers (18 million) take 2.3 and 7.3 s. Under 1F1B
/// training, where the replay's work grows with the stages, the estimate
/// counts S / 32 times as much past 32 stages (1500 layers on 256 devices
/// of one kind took 7.7 s without that).
static constexpr double kCheapTransitions = 5e6;

/// Runs of the dynamic program past which a bottleneck search stops and
/// reports the gap it has proven.
static constexpr unsigned kSearchRuns = 3000;
/// With simplified classes, each run of the search over the cluster's
/// devices (Partitioner::searchOnDevices) tries first with a quarter of
/// this many transitions, and gives up past this many on its second try.
static constexpr uint64_t kDeviceTransitions = 10000000;

/// Past SearchTuning::floorCells, the search for the floor under the 1F1B
/// replay makes only this many runs on the cluster's own classes
/// (replayFloor): a run there took 0.23 s on a 176-node ResNet on six
/// classes (2.9 million cells), and the whole search 28 runs.
static constexpr unsigned kFloorRunsOnManyCells = 4;

/// On blocks of layers, the floor over the model's own layers
/// (floorOverLayers) makes as many runs of the dynamic program as fit in
/// SearchTuning::layerFloorWork, and none if fewer than this many fit; under
/// 1F1B, whose floor rises more slowly, none if fewer than
/// kLeastUnhiddenFloorRuns (GPT-2-XL on 32 devices, where 4.4 fit, took
/// 0.6 s more for a gap 0.4 points smaller; at 16 devices 7.8 runs took
/// 0.4 s more for 3.2 points).
static constexpr unsigned kLeastLayerFloorRuns = 4;
static constexpr unsigned kLeastUnhiddenFloorRuns = 6;

/// Checks the hand-given parts of the options against the problem.
static llvm::Error checkOptions(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  unsigned numDevices = problem.numDevices();
  unsigned numLayers = problem.numLayers();
  unsigned stages = options.stages;
  if (!options.cutAfter.empty()) {
    unsigned fromCuts = options.cutAfter.size() + 1;
    if (stages && stages != fromCuts)
      return llvm::createStringError(llvm::formatv(
          "--stages={0} disagrees with the {1} cut points of --cut-after, "
          "which make {2} stages",
          stages, options.cutAfter.size(), fromCuts));
    stages = fromCuts;
    for (unsigned i = 0; i < options.cutAfter.size(); ++i)
      if (options.cutAfter[i] + 1 >= numLayers ||
          (i && options.cutAfter[i] <= options.cutAfter[i - 1]))
        return llvm::createStringError(
            "--cut-after points must be distinct nodes in program order, "
            "none of them the last");
  }
  if (!options.deviceOrder.empty()) {
    if (stages && stages != options.deviceOrder.size())
      return llvm::createStringError(
          llvm::formatv("--device-order lists {0} device{1} for {2} stages",
                        options.deviceOrder.size(),
                        options.deviceOrder.size() == 1 ? "" : "s", stages));
    stages = options.deviceOrder.size();
  }
  if (stages > numDevices)
    return llvm::createStringError(
        llvm::formatv("{0} stages need {0} devices, but the cluster has {1}",
                      stages, numDevices));
  if (stages > numLayers)
    return llvm::createStringError(
        llvm::formatv("{0} stages need {0} layers, but the model has {1}",
                      stages, numLayers));
  if (options.microbatches < 1 || options.microbatches > kMaxMicrobatches)
    return llvm::createStringError(llvm::formatv(
        "--microbatches must be between 1 and {0}", kMaxMicrobatches));
  return llvm::Error::success();
}

namespace {
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
} // namespace

namespace {
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
} // namespace

/// A quick feasible plan to bound the search: every device, fastest first,
/// each taking a share of the layers proportional to its speed. None when
/// the options or `stages` (when not zero) fix part of the plan, or when it
/// does not fit.
static std::optional<std::vector<StagePlan>>
seedPlan(const PlanProblem &problem, unsigned stages) {
  const PlanOptions &options = problem.options();
  unsigned numDevices = problem.numDevices();
  unsigned numLayers = problem.numLayers();
  if (!options.cutAfter.empty() || !options.deviceOrder.empty() ||
      (stages && stages != numDevices) || numLayers < numDevices)
    return std::nullopt;
  std::vector<unsigned> order = fastestFirst(problem);
  double speed = 0;
  for (unsigned d = 0; d < numDevices; ++d)
    speed += problem.modelMs(d) > 0 ? 1 / problem.modelMs(d) : 0;
  std::vector<StagePlan> plan;
  unsigned begin = 0;
  for (unsigned s = 0; s < numDevices; ++s) {
    unsigned device = order[s];
    double total = problem.modelMs(device);
    double share = total > 0 ? (1 / total) / speed : 0;
    unsigned end = begin + 1;
    double done = problem.layerForwardMs(begin, device) +
                  problem.layerBackwardMs(begin, device);
    while (end + (numDevices - 1 - s) < numLayers &&
           (s + 1 == numDevices || done < share * total)) {
      done += problem.layerForwardMs(end, device) +
              problem.layerBackwardMs(end, device);
      ++end;
    }
    plan.push_back({begin, end, device, Recompute::None});
    begin = end;
  }
  if (!fitRecompute(problem, plan))
    return std::nullopt;
  return plan;
}

/// The objective of the best plan is at least this.
static double objectiveFloor(const PlanProblem &problem) {
  Partitioner partitioner(problem);
  double floors = partitioner.forwardFloor() +
                  (problem.splitBottleneck() ? partitioner.backwardFloor() : 0);
  return std::max(partitioner.sumFloor() +
                      double(problem.options().microbatches - 1) * floors,
                  relaxedFloorMs(problem, /*replay=*/false));
}

/// An upper bound on every transfer of every plan: the largest cut over
/// the slowest link between two devices. Devices of two interchangeable
/// classes (or two of one) all share one link, so representatives do.
static double slowestTransferMs(const PlanProblem &problem) {
  int64_t largest = 0;
  for (unsigned cut = 0; cut + 1 < problem.numLayers(); ++cut)
    largest = std::max(largest, problem.cutBytes(cut));
  const Cluster &cluster = problem.cluster();
  std::vector<std::vector<unsigned>> classes = cluster.interchangeableDevices();
  double slowest = 0;
  for (const std::vector<unsigned> &a : classes)
    for (const std::vector<unsigned> &b : classes) {
      unsigned from = a.front(), to = b.front();
      if (&a == &b) {
        if (a.size() < 2)
          continue;
        to = a[1];
      }
      slowest =
          std::max(slowest, transferTimeMs(largest, cluster.link(from, to)));
    }
  return slowest;
}

/// The least backward step of any stage whose forward step takes at least
/// a given time, on any device: a plan whose slowest forward step is a
/// stage's has a slowest backward step at least that. (Recompute only adds
/// to the backward step.) Per device with its own numbers and first layer,
/// the shortest such stage ends where the forward times' prefix sum first
/// reaches the time.
class StageBackwardFloor {
public:
  explicit StageBackwardFloor(const PlanProblem &problem) : problem(problem) {
    for (unsigned d = 0; d < problem.numDevices(); ++d)
      if (problem.pricedLike(d) == d)
        devices.push_back(d);
  }

  double from(double forward) const {
    unsigned numLayers = problem.numLayers();
    double least = kInf;
    for (unsigned d : devices)
      for (unsigned begin = 0; begin < numLayers; ++begin) {
        // The first end whose stage's forward step takes `forward`.
        unsigned low = begin + 1, high = numLayers + 1;
        while (low < high) {
          unsigned middle = low + (high - low) / 2;
          if (problem.forwardMs(begin, middle, d) >= forward)
            high = middle;
          else
            low = middle + 1;
        }
        if (low > numLayers)
          break; // later starts reach it no sooner
        least = std::min(least, problem.backwardMs(begin, low, d));
      }
    return least;
  }

private:
  const PlanProblem &problem;
  std::vector<unsigned> devices;
};

/// The least of sum + (M - 1) max(unhidden stage time, transfer) over
/// the plans `partitioner` searches, within `runs` runs of its dynamic
/// program (what it proves if they run out); `cap` if that is no less than
/// `cap`. Adds the plans it visits to `visited`: front-heavy plans whose
/// warm-ups hide time, good seeds for the refinement.
static double leastUnhidden(const PlanProblem &problem,
                            Partitioner &partitioner, unsigned runs, double cap,
                            std::vector<std::vector<StagePlan>> &visited) {
  double lambda = double(problem.options().microbatches - 1);
  SearchBudget budget{runs};
  BottleneckSearch search(lambda, cap, budget);
  // A stage's unhidden time is at least half its whole time; a plan below
  // the cap has none longer than the cap's slack over the least sum.
  double high = lambda > 0 ? (cap - partitioner.sumFloor()) / lambda : kInf;
  auto visit = [&](const LimitedSearch::Found &found) {
    visited.push_back(partitioner.leastLinkCuts()
                          ? problem.onNearDevices(found.stages)
                          : found.stages);
  };
  LimitedSearch limited(problem, partitioner, budget, visit,
                        /*unhidden=*/true);
  search.run(partitioner.forwardFloor() / 2, high, partitioner.sumFloor(), 0,
             [&](double, double bound,
                 double sumCap) -> std::optional<BottleneckSearch::Result> {
               const LimitedSearch::Found *found =
                   limited.search(bound, kInf, sumCap);
               if (!found)
                 return std::nullopt;
               return BottleneckSearch::Result{found->times.sum,
                                               found->times.slowestForward, 0};
             });
  return std::min(search.objective(), budget.unexplored);
}

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
static double replayFloor(const PlanProblem &problem, Partitioner &searched,
                          unsigned stages, double cap, bool modelLayers,
                          std::vector<std::vector<StagePlan>> &visited) {
  bool approximate = searched.isApproximate();
  if (approximate && !modelLayers)
    return 0;
  auto manyCells = [&](const Partitioner &partitioner) {
    return partitioner.numCells() > problem.options().tuning.floorCells;
  };
  std::optional<Partitioner> relaxed;
  if (approximate || manyCells(searched)) {
    relaxed.emplace(problem, stages, /*leastLinks=*/true);
    if (relaxed->takesTheFastest() ||
        (!approximate && relaxed->numStates() >= searched.numStates()))
      relaxed.reset();
  }
  if (!relaxed)
    return approximate
               ? 0
               : leastUnhidden(problem, searched, kSearchRuns, cap, visited);
  if (approximate)
    return leastUnhidden(problem, *relaxed,
                         manyCells(*relaxed) ? kFloorRunsOnManyCells
                                             : kSearchRuns,
                         cap, visited);
  return std::max(
      leastUnhidden(problem, searched, kFloorRunsOnManyCells, cap, visited),
      leastUnhidden(problem, *relaxed, kSearchRuns, cap, visited));
}

/// The layout of the suffix tables for the plans of `stages` stages (0:
/// any the options allow) that replay below `capMs` (its classes, keys and
/// stageLimit), with no table filled. The classes are `partitioner`'s
/// where its keys count devices by class; else, but for a given device
/// order, the devices with the same numbers with cuts at their least
/// transfer (a partitioner with `leastLinks`); an empty radix where
/// neither counts.
static SuffixTables suffixTableLayout(const PlanProblem &problem,
                                      const Partitioner &partitioner,
                                      double capMs, unsigned stages) {
  SuffixTables tables;
  std::optional<Partitioner> relaxed;
  const Partitioner *counting = &partitioner;
  if (partitioner.keyRadix().empty() && problem.options().deviceOrder.empty()) {
    relaxed.emplace(problem, stages, /*leastLinks=*/true);
    counting = &*relaxed;
    tables.leastLinks = true;
  }
  tables.radix = counting->keyRadix();
  if (tables.radix.empty())
    return tables;
  tables.classes = counting->classDevices();
  std::vector<unsigned> classOfDevice(problem.numDevices());
  for (auto [c, devices] : llvm::enumerate(tables.classes)) {
    tables.sizes.push_back(devices.size());
    for (unsigned device : devices)
      classOfDevice[device] = c;
  }
  for (const std::vector<unsigned> &cls :
       problem.cluster().interchangeableDevices())
    tables.classOf.push_back(classOfDevice[cls.front()]);
  tables.numKeys = tables.radix.back() * (tables.sizes.back() + 1);
  // Over devices with the same numbers, cuts at their least transfer, the
  // tables bound the replay search little without the bounds of the
  // suffixes' own stalls: none where those would keep too many numbers.
  size_t numCells =
      size_t(problem.numLayers() + 1) * tables.numKeys * tables.sizes.size();
  if (tables.leastLinks &&
      numCells * problem.options().microbatches > kMaxResponseNumbers)
    return SuffixTables();
  // No stage of a plan that replays below the cap has an unhidden time
  // above this: sum + (M - 1) * (largest unhidden time) bounds the replay.
  double lambda = double(problem.options().microbatches - 1);
  tables.stageLimit =
      lambda > 0 ? (capMs - counting->sumFloor()) / lambda : kInf;
  return tables;
}

/// Fills the partitioner's tables of least suffix sums and least largest
/// unhidden times in `tables` (laid out by suffixTableLayout), for the
/// branch and bound over replays. A plan replays below the cap only if its
/// unhidden times are within the tables' stageLimit; the least sums under
/// limits up to it tell which suffixes such a plan can have. `perLimit`
/// runs the dynamic program once per limit (tabulateSuffixes).
static void fillSuffixTables(const PlanProblem &problem,
                             Partitioner &partitioner, SuffixTables &tables,
                             bool perLimit = false) {
  if (tables.radix.empty())
    return;
  double high = tables.stageLimit;
  SearchLimits limits;
  limits.forward = high;
  limits.unhidden = true;
  limits.tabulateLargest = true;
  limits.everySuffix = true;
  partitioner.search(limits);
  tables.sum = partitioner.suffixSums();
  tables.slowest = partitioner.suffixLargest();

  // Limits spaced geometrically from half the least stage time the floor
  // allows up to `high`; a quarter of them from the least largest unhidden
  // time of any whole plan up, between the others where the largest
  // unhidden time of every plan lies.
  double low = partitioner.forwardFloor() / 2;
  if (!(high > low) || !std::isfinite(high))
    return;
  // As many limits as keep the tables within kSuffixCells (one pass of the
  // dynamic program fills them all); none if fewer than 4 fit, too coarse
  // to tell suffixes apart.
  size_t numCells = tables.sum.size();
  unsigned numLimits = std::min<size_t>(kSuffixLimits, kSuffixCells / numCells);
  if (numLimits < 4)
    return;
  double wholePlans = kInf;
  for (unsigned key = 0; key < tables.numKeys; ++key)
    for (unsigned first = 0; first < tables.sizes.size(); ++first)
      wholePlans =
          std::min(wholePlans, tables.slowest[tables.index(0, key, first)]);
  double fine = std::clamp(wholePlans, low, high);
  unsigned numFine = numLimits / 4, numCoarse = numLimits - numFine;
  SmallVector<double> &spaced = tables.limits;
  for (unsigned i = 1; i <= numCoarse; ++i)
    spaced.push_back(low * std::pow(high / low, double(i) / numCoarse));
  for (unsigned i = 1; i <= numFine; ++i)
    spaced.push_back(fine * std::pow(high / fine, double(i) / numFine));
  // Both end at the cap: keep one of limits that differ by a rounding.
  llvm::sort(spaced);
  spaced.erase(
      std::unique(spaced.begin(), spaced.end(),
                  [](double a, double b) { return b <= a * (1 + 1e-9); }),
      spaced.end());
  numLimits = spaced.size();

  if (!perLimit) {
    tables.sumWithin = partitioner.sumsWithin(spaced);
    return;
  }
  limits.tabulateLargest = false;
  tables.sumWithin.assign(numCells * numLimits, kInf);
  for (unsigned i = 0; i < numLimits; ++i) {
    limits.forward = spaced[i];
    partitioner.search(limits);
    const std::vector<double> &sums = partitioner.suffixSums();
    for (size_t cell = 0; cell < numCells; ++cell)
      tables.sumWithin[cell * numLimits + i] = sums[cell];
  }
}

SuffixTables mlir::pipe::tabulateSuffixes(const PlanProblem &problem,
                                          double capMs, bool perLimit) {
  Partitioner partitioner(problem);
  SuffixTables tables = suffixTableLayout(problem, partitioner, capMs, 0);
  Partitioner counting(problem, 0, tables.leastLinks);
  fillSuffixTables(problem, counting, tables, perLimit);
  return tables;
}

/// Prices the chosen plan on `problem`, bounds its gap when the search
/// was not exhaustive, and refines 1F1B plans on their replay.
/// `replayFloorMs` bounds every plan's 1F1B replay and `leastLinkFloorMs`
/// every plan's objective (0 for none): the floors of leastLinkFloor and
/// replayFloor, or on blocks of layers that of floorOverLayers.
static PipelinePlan finishPlan(const PlanProblem &problem, PipelinePlan plan,
                               bool proven, bool branch, double replayFloorMs,
                               const SuffixTables &suffixes,
                               double leastLinkFloorMs) {
  plan.objectiveMs = problem.objectiveMs(plan.stages);
  bool oneFOneB = problem.options().training &&
                  problem.options().schedule == Schedule::OneFOneB;
  // Past the exact range (blocks of layers, simplified classes), a plan one
  // cut from a faster one is no answer (1F1B plans are refined on their
  // replay below).
  if (!proven && !oneFOneB)
    plan.objectiveMs = descendOnCuts(problem, plan.stages, plan.objectiveMs);
  plan.optimalObjectiveMs = plan.objectiveMs;
  if (!proven) {
    // The search's own gap is about the plans it searched; the floor's
    // holds for every plan, and a plan that meets it is the least.
    double floor = std::max(objectiveFloor(problem), leastLinkFloorMs);
    plan.exact = plan.objectiveMs <= floor * (1 + 1e-12);
    plan.gapBound =
        plan.exact ? 0 : (plan.objectiveMs - floor) / plan.objectiveMs;
  }
  plan.iterationExact = plan.exact;
  plan.iterationGapBound = plan.gapBound;
  if (oneFOneB) {
    refinePlanBySimulation(problem, plan);
    // Past the exact range (blocks of layers), the branch and bound could
    // not finish: only its root bounds count.
    double floorMs = relaxedFloorMs(problem, /*replay=*/true);
    searchLeastReplay(problem, plan, std::max(replayFloorMs, floorMs), branch,
                      suffixes.empty() ? nullptr : &suffixes);
  }
  return plan;
}

/// Whether the dynamic program over every layer, with the cluster's
/// interchangeable devices as classes, is small enough to run past
/// kExactLayers: its cells times the layers a stage spans on average.
static bool layerSearchIsCheap(const PlanProblem &problem) {
  SmallVector<size_t> sizes;
  for (const std::vector<unsigned> &cls :
       problem.cluster().interchangeableDevices())
    sizes.push_back(cls.size());
  double layers = problem.numLayers();
  double cells = dynamicProgramCells(problem.numLayers(), sizes);
  double stages = std::min<double>(problem.numDevices(), layers);
  double work = cells * layers / stages;
  const PlanOptions &options = problem.options();
  if (options.training && options.schedule == Schedule::OneFOneB)
    work *= std::max(1.0, stages / 32);
  return cells <= kMaxCells && work < kCheapTransitions;
}

/// Merges consecutive layers into `groups` blocks of about equal time on
/// the first device; returns the blocks' first layers.
static std::pair<LayerGraph, std::vector<unsigned>>
coarsen(const PlanProblem &problem, unsigned groups) {
  const LayerGraph &fine = problem.graph();
  unsigned numLayers = fine.layers.size();
  std::vector<double> prefix(numLayers + 1, 0);
  for (unsigned l = 0; l < numLayers; ++l)
    prefix[l + 1] = prefix[l] + problem.layerForwardMs(l, 0) +
                    problem.layerBackwardMs(l, 0);
  std::vector<unsigned> starts = {0};
  for (unsigned l = 1; l < numLayers; ++l) {
    double target = prefix[numLayers] * starts.size() / groups;
    bool behind = numLayers - l <= groups - starts.size();
    if (starts.size() < groups && (prefix[l] >= target || behind))
      starts.push_back(l);
  }
  LayerGraph coarse;
  coarse.params = fine.params;
  coarse.values = fine.values;
  coarse.derivedBackward = fine.derivedBackward;
  std::vector<int> group(numLayers);
  for (unsigned g = 0; g < starts.size(); ++g) {
    unsigned end = g + 1 < starts.size() ? starts[g + 1] : numLayers;
    PlanLayer merged;
    merged.name = fine.layers[starts[g]].name;
    for (unsigned l = starts[g]; l < end; ++l) {
      group[l] = g;
      const PlanLayer &layer = fine.layers[l];
      merged.ops.append(layer.ops.begin(), layer.ops.end());
      merged.backwardOps.append(layer.backwardOps.begin(),
                                layer.backwardOps.end());
      merged.stashBytes += layer.stashBytes;
      merged.contractionBytes += layer.contractionBytes;
      merged.workspaceBytes =
          std::max(merged.workspaceBytes, layer.workspaceBytes);
      for (unsigned p : layer.params)
        if (!llvm::is_contained(merged.params, p))
          merged.params.push_back(p);
      for (unsigned v : layer.inputs) {
        int producer = fine.values[v].producer;
        if ((producer < 0 || producer < int(starts[g])) &&
            !llvm::is_contained(merged.inputs, v))
          merged.inputs.push_back(v);
      }
    }
    coarse.layers.push_back(std::move(merged));
  }
  // A stage of blocks [i, j) holds layers [starts[i], starts[j]): the
  // layers of the values' producers and reads map to their blocks.
  coarse.derivedStash = fine.derivedStash;
  for (PlanValue &value : coarse.values) {
    if (value.producer >= 0)
      value.producer = group[value.producer];
    for (StashRead &read : value.stashReads) {
      read.layer = group[read.layer];
      for (unsigned &neededBy : read.neededBy)
        if (neededBy != StashRead::kNeverNeeded)
          neededBy = group[neededBy];
    }
  }
  return {std::move(coarse), std::move(starts)};
}

/// Searches `problem`; with `modelLayers` (the model's own layers, not
/// blocks of them nor a given count of the fastest devices), also keeps
/// the tables that bound the branch and bound over 1F1B replays, and with
/// simplified classes the floors of leastLinkFloor (on blocks, both would
/// bound only the plans that cut between blocks). Only plans
/// whose objective is below `capMs` count: with a finite cap, an outcome
/// that does not fit may only mean that none is below it. `stages`, when
/// not zero, fixes the stage count as --stages would.
static llvm::Expected<SearchOutcome> searchPlan(const PlanProblem &problem,
                                                bool modelLayers,
                                                double capMs = kInf,
                                                unsigned stages = 0);

/// Plans a long model on blocks of layers, then maps the plan back.
static llvm::Expected<SearchOutcome> planCoarsened(const PlanProblem &problem,
                                                   unsigned groups) {
  auto [coarse, starts] = coarsen(problem, groups);
  PlanProblem coarseProblem(coarse, problem.cluster(), problem.options());
  llvm::Expected<SearchOutcome> outcome =
      searchPlan(coarseProblem, /*modelLayers=*/false);
  if (!outcome)
    return outcome.takeError();
  PipelinePlan *plan = &outcome->plan;
  unsigned numLayers = problem.numLayers();
  auto toFine = [&, &starts = starts](std::vector<StagePlan> &stages) {
    for (StagePlan &stage : stages) {
      stage.begin = starts[stage.begin];
      stage.end = stage.end < starts.size() ? starts[stage.end] : numLayers;
    }
  };
  toFine(plan->stages);
  for (std::vector<StagePlan> &stages : plan->paretoPlans)
    toFine(stages);
  for (std::vector<StagePlan> &stages : plan->floorPlans)
    toFine(stages);
  plan->exact = false;
  return outcome;
}

/// The most stages a plan may have: the given count, or one per device of
/// the given order, else one per device.
static unsigned mostStages(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  if (options.stages)
    return options.stages;
  if (!options.deviceOrder.empty())
    return options.deviceOrder.size();
  return problem.numDevices();
}

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
static double floorOverLayers(const PlanProblem &problem, PipelinePlan &plan,
                              double capMs) {
  const PlanOptions &options = problem.options();
  int64_t m = options.microbatches;
  if (m < 2 || !(options.tuning.layerFloorWork > 0))
    return 0;
  // (A given device order keeps its devices: no stage may move.)
  Partitioner relaxed(problem, options.stages,
                      /*leastLinks=*/options.deviceOrder.empty());
  if (relaxed.takesTheFastest() || relaxed.isApproximate())
    return 0;
  // A stage spans the layers over the stages a plan may have.
  double layers = problem.numLayers();
  double work = relaxed.numCells() * layers /
                std::min<double>(mostStages(problem), layers);
  // (GPT-2-XL's 1448 nodes on 4 devices make 14 million per run, about
  // 0.035 s.)
  double runs = std::min<double>(kSearchRuns, options.tuning.layerFloorWork / work);
  bool oneFOneB = options.training && options.schedule == Schedule::OneFOneB;
  if (runs < (oneFOneB ? kLeastUnhiddenFloorRuns : kLeastLayerFloorRuns))
    return 0;
  double lambda = double(m - 1);

  if (oneFOneB) {
    llvm::Expected<Simulation> simulation =
        simulate(problem, plan.stages, /*recordEvents=*/false);
    if (!simulation) {
      llvm::consumeError(simulation.takeError());
      return 0;
    }
    return leastUnhidden(problem, relaxed, unsigned(runs),
                         simulation->iterationMs, plan.floorPlans);
  }

  // The least objective of the plan and the plans found prunes the search:
  // a pruned plan's J1 is at least that objective then, at least at the
  // end. The best plan found descends on cuts too (the plan did, in
  // planPipeline) and replaces the plan if it is then faster.
  bool split = problem.splitBottleneck();
  SearchBudget budget{unsigned(runs)};
  double incumbent = std::max(capMs, plan.objectiveMs);
  std::vector<StagePlan> best;
  BottleneckSearch search(lambda, incumbent, budget, &incumbent);
  double low = split ? relaxed.stepFloor() : relaxed.forwardFloor();
  double high = (incumbent - relaxed.sumFloor()) / lambda;
  search.run(
      low, high, relaxed.sumFloor(), 0,
      [&](double, double bound,
          double sumCap) -> std::optional<BottleneckSearch::Result> {
        SearchLimits limits;
        if (split)
          limits.step = bound;
        else
          limits.forward = bound;
        limits.sumCap = sumCap;
        std::optional<std::vector<StagePlan>> found = relaxed.search(limits);
        budget.spend(relaxed);
        if (!found)
          return std::nullopt;
        PlanProblem::Times times = relaxed.planTimes(*found, false);
        std::vector<StagePlan> near =
            relaxed.leastLinkCuts() ? problem.onNearDevices(*found) : *found;
        double objective = problem.objectiveMs(near);
        if (objective < incumbent && fitsMemory(problem, near)) {
          best = std::move(near);
          incumbent = objective;
        }
        return BottleneckSearch::Result{
            times.sum, split ? times.slowestStep : times.slowestForward, 0};
      });
  if (!best.empty()) {
    double objective = descendOnCuts(problem, best, incumbent);
    if (objective < plan.objectiveMs) {
      plan.stages = std::move(best);
      plan.objectiveMs = objective;
    }
  }
  return std::min({search.objective(), incumbent, budget.unexplored});
}

/// Explains why `closest`, the plan whose worst memory overflow is least,
/// does not fit: which device, which stage, by how much.
static llvm::Error describeOverflow(const PlanProblem &problem,
                                    ArrayRef<StagePlan> closest) {
  double worst = -kInf;
  std::string where;
  for (auto [s, stage] : llvm::enumerate(closest)) {
    StageMemory memory = problem.stageMemory(
        stage.begin, stage.end, closest.size() - 1 - s, stage.recompute);
    int64_t capacity = problem.capacityBytes(stage.device);
    double over = double(memory.total() - capacity);
    if (over > worst) {
      worst = over;
      const Device &device = problem.cluster().devices[stage.device];
      // The capacity, and where the runtime keeps part of the memory, the
      // whole.
      std::string room = formatBytes(capacity);
      if (device.spec.reservedGB > 0)
        room += llvm::formatv(
            " of its {0} after the runtime's {1}",
            formatBytes(int64_t(device.spec.memoryGB * 1073741824.0)),
            formatBytes(int64_t(device.spec.reservedGB * 1073741824.0)));
      where = llvm::formatv(
          "device '{0}' ({1}, {2}) would hold stage {3} ('{4}' to '{5}') "
          "needing {6}: {7} short",
          device.name, device.spec.kind, room, s,
          problem.graph().layers[stage.begin].name,
          problem.graph().layers[stage.end - 1].name,
          formatBytes(memory.total()), formatBytes(int64_t(over)));
    }
  }
  return llvm::createStringError(
      "the model does not fit the cluster's memory; in the plan that comes "
      "closest, " +
      where);
}

llvm::Expected<PipelinePlan>
mlir::pipe::planPipeline(const PlanProblem &problem) {
  if (llvm::Error error = checkOptions(problem))
    return std::move(error);
  const PlanOptions &options = problem.options();
  // Past this many layers, blocks of layers are planned instead; never
  // fewer blocks than the stages the plan may need.
  unsigned maxLayers = std::max(
      {options.maxExactLayers.value_or(kExactLayers), mostStages(problem), 2u});
  bool coarsened = problem.numLayers() > maxLayers &&
                   options.cutAfter.empty() &&
                   (options.maxExactLayers || !layerSearchIsCheap(problem));
  llvm::Expected<SearchOutcome> outcome =
      coarsened ? planCoarsened(problem, maxLayers)
                : searchPlan(problem, /*modelLayers=*/true);
  // Blocks may fit nowhere where finer cuts fit: then search every layer.
  if (coarsened && outcome && !outcome->fits) {
    coarsened = false;
    outcome = searchPlan(problem, /*modelLayers=*/true);
  }
  if (!outcome)
    return outcome.takeError();
  if (!outcome->fits)
    return describeOverflow(problem, outcome->plan.stages);
  // Floors found on blocks of layers are no floors for the model's own; a
  // short search over its layers gives one. The branch and bound over 1F1B
  // replays counts the cluster's own devices, so it searches every plan
  // even with simplified classes; there it needs the tables' bounds to get
  // anywhere.
  double replayFloorMs = outcome->replayFloorMs;
  double leastLinkFloorMs = outcome->leastLinkFloorMs;
  if (coarsened) {
    // The plan of blocks descends on the layers' cuts first (as finishPlan
    // would have it, but for 1F1B), so that the floor's search replaces it
    // only with a plan faster than that; the search looks below the plan
    // of blocks as it was, where it finds plans that descend further. (Each
    // floor bounds the objective too: a stage's unhidden time is at most its
    // whole time, its step at most its two steps together.)
    PipelinePlan &blocks = outcome->plan;
    blocks.objectiveMs = problem.objectiveMs(blocks.stages);
    double capMs = blocks.objectiveMs;
    if (!problem.options().training ||
        problem.options().schedule != Schedule::OneFOneB)
      blocks.objectiveMs =
          descendOnCuts(problem, blocks.stages, blocks.objectiveMs);
    replayFloorMs = leastLinkFloorMs = floorOverLayers(problem, blocks, capMs);
  }
  return finishPlan(
      problem, std::move(outcome->plan), outcome->proven && !coarsened,
      (outcome->proven || !outcome->suffixes.empty()) && !coarsened,
      replayFloorMs, outcome->suffixes, leastLinkFloorMs);
}

/// Whether every layer alone, as the last stage with its leanest recompute,
/// fits some device: else no plan fits.
static bool everyLayerFitsSomewhere(const PlanProblem &problem) {
  Recompute leanest = problem.recomputeChoices().back();
  int64_t largest = 0;
  for (unsigned d = 0; d < problem.numDevices(); ++d)
    largest = std::max(largest, problem.capacityBytes(d));
  for (unsigned l = 0; l < problem.numLayers(); ++l)
    if (problem.stageMemory(l, l + 1, 0, leanest).total() > largest)
      return false;
  return true;
}

/// With too many devices to count even by kind, each search takes the
/// fastest k devices, one stage each: searches k for the least objective.
/// Faster devices joining shorten the slowest stage; slower ones lengthen
/// the sum (GPipe on 64 devices of four kinds: 7.4% below all 64). A local
/// search: the objective need not be unimodal in k.
static llvm::Expected<SearchOutcome>
searchFastestCount(const PlanProblem &problem) {
  unsigned most = std::min(problem.numDevices(), problem.numLayers());
  std::set<unsigned> tried;
  std::optional<SearchOutcome> best;
  double bestObjective = kInf;
  unsigned bestCount = most;
  // Searches with the fastest `count` devices; returns whether that gave
  // the best plan yet. The first search, with the most devices, gives the
  // plan whose memory overflow is least when none fits.
  auto tryCount = [&](unsigned count) -> llvm::Expected<bool> {
    if (!tried.insert(count).second)
      return false;
    // Past the first search, a finite cap: a count that fits nothing
    // returns at once, without the plan whose overflow is least.
    double cap =
        best ? std::min(bestObjective, std::numeric_limits<double>::max())
             : kInf;
    llvm::Expected<SearchOutcome> outcome =
        searchPlan(problem, /*modelLayers=*/false, cap, count);
    if (!outcome)
      return outcome.takeError();
    double objective = outcome->fits ? outcome->plan.objectiveMs : kInf;
    if (best && objective >= bestObjective)
      return false;
    best = std::move(*outcome);
    bestObjective = objective;
    bestCount = count;
    return true;
  };
  // Fewer devices may fit where more do not (a large layer lands on a
  // small device when more devices share the layers): until some count
  // fits, every count, the most first; none when some layer fits no
  // device even as the last stage.
  if (llvm::Error error = tryCount(most).takeError())
    return std::move(error);
  if (bestObjective == kInf && everyLayerFitsSomewhere(problem))
    for (unsigned count = most - 1; count >= 1 && bestObjective == kInf;
         --count)
      if (llvm::Error error = tryCount(count).takeError())
        return std::move(error);
  if (bestObjective == kInf)
    return std::move(*best);
  // A pattern search: steps from a quarter of the devices down to one.
  for (unsigned step = std::max(1u, most / 4); step; step /= 2) {
    for (bool moved = true; moved;) {
      moved = false;
      for (int count : {int(bestCount) - int(step), int(bestCount + step)}) {
        if (count < 1 || count > int(most))
          continue;
        llvm::Expected<bool> better = tryCount(count);
        if (!better)
          return better.takeError();
        if (*better) {
          moved = true;
          break;
        }
      }
    }
  }
  return std::move(*best);
}

/// The branch and bound over the bottlenecks (docs/planner.md, "The
/// search"): lowers `best` to the least objective of the plans
/// `partitioner` searches, as it prices them, if that is below
/// best.objectiveMs; past the budget, records in it the least bound left
/// open.
static void searchBottlenecks(const PlanProblem &problem,
                              Partitioner &partitioner, unsigned stages,
                              PipelinePlan &best, SearchBudget &budget) {
  const PlanOptions &options = problem.options();
  int64_t m = options.microbatches;
  bool split = problem.splitBottleneck();
  double lambda = double(m - 1);
  double floorForward = partitioner.forwardFloor();
  double floorBackward = split ? partitioner.backwardFloor() : 0;
  double startForward = kInf, startBackward = kInf;
  // A quick plan bounds the search: a plan can only beat it with
  // sum + (M - 1) * (slowest steps) below its objective.
  if (std::optional<std::vector<StagePlan>> seed = seedPlan(problem, stages)) {
    double objective = problem.objectiveMs(*seed);
    best.paretoPlans.push_back(*seed);
    if (objective < best.objectiveMs) {
      best.objectiveMs = objective;
      best.stages = *seed;
    }
  }

  auto record = [&](std::vector<StagePlan> plan,
                    const PlanProblem::Times &times) {
    double objective = times.objective(m);
    best.paretoPlans.push_back(plan);
    if (objective < best.objectiveMs) {
      best.stages = std::move(plan);
      best.objectiveMs = objective;
    }
  };

  // Split bottlenecks: J = sum + lambda * (F + B) is at least
  // J1 = sum + lambda * (the slowest step in all), where a stage's step is
  // its whole time and a transfer's twice its time (Times::slowestStep),
  // with equality when one stage or transfer is the slowest both ways. J1
  // has one bottleneck, so a search over it takes a few dozen runs; its
  // plans become incumbents, and it leaves for the nested search below
  // only the plans whose step lies where a plan it found has a larger J
  // than J1 (docs/planner.md, "GPipe's relaxation to one bottleneck").
  double stepLow = 0, stepHigh = kInf;
  if (split && m > 1) {
    double startStep = kInf;
    if (best.objectiveMs < kInf)
      startStep = (best.objectiveMs - partitioner.sumFloor()) / lambda;
    // The plans found where J > J1, and the limit each was found under:
    // plans whose step lies between theirs and that limit have at least
    // their sum, and are not searched further by the relaxation.
    struct Unresolved {
      double sum, step, limit;
    };
    std::vector<Unresolved> unresolved;
    // Where good plans are slower than J1 by much, J1's least is far below
    // J's, and the relaxation would search many steps to no avail: it
    // stops, and the nested search searches every step.
    bool weak = false;
    BottleneckSearch relaxed(lambda, kInf, budget, &best.objectiveMs, 0,
                             /*relaxation=*/true);
    relaxed.run(
        partitioner.stepFloor(), startStep, partitioner.sumFloor(), 0,
        [&](double, double bound,
            double sumCap) -> std::optional<BottleneckSearch::Result> {
          if (weak)
            return std::nullopt;
          SearchLimits limits;
          limits.step = bound;
          limits.sumCap = sumCap;
          std::optional<std::vector<StagePlan>> plan =
              partitioner.search(limits);
          budget.spend(partitioner);
          if (!plan)
            return std::nullopt;
          PlanProblem::Times times = partitioner.planTimes(*plan, false);
          record(*plan, times);
          double relaxedObjective = times.sum + lambda * times.slowestStep;
          // (A stage's whole time adds its parts in another order than its
          // two steps do: a last bit is no split.)
          if (times.slowestForward + times.slowestBackward >
              times.slowestStep * (1 + 1e-12))
            unresolved.push_back({times.sum, times.slowestStep, bound});
          if (relaxedObjective < best.objectiveMs &&
              times.objective(m) - relaxedObjective >
                  options.tuning.weakRelaxation * times.objective(m))
            weak = true;
          return BottleneckSearch::Result{times.sum, times.slowestStep, 0};
        });
    if (!weak && budget.unexplored == kInf) {
      // A plan below the best found has J1 below it too: its step lies
      // where a plan found had J > J1, within what the best leaves.
      stepLow = kInf;
      stepHigh = 0;
      for (const Unresolved &region : unresolved) {
        double high =
            std::min(region.limit, (best.objectiveMs - region.sum) / lambda);
        if (high <= region.step)
          continue;
        stepLow = std::min(stepLow, region.step);
        stepHigh = std::max(stepHigh, high);
      }
    }
  }
  bool relaxationProves = stepLow > stepHigh;

  if (m > 1 && best.objectiveMs < kInf) {
    double slack = (best.objectiveMs - partitioner.sumFloor()) / lambda;
    startForward = slack - floorBackward;
    if (split)
      startBackward = slack - floorForward;
  }
  auto recordFound = [&](const LimitedSearch::Found &found) {
    record(found.stages, found.times);
  };
  LimitedSearch limited(problem, partitioner, budget, recordFound,
                        /*unhidden=*/false, stepHigh);
  // The least-sum plan whose slowest forward (backward) step is at most
  // `forward` (`backward`), if its sum is below `sumCap`.
  auto probe =
      [&](double forward, double backward, double sumCap,
          bool overBackward) -> std::optional<BottleneckSearch::Result> {
    const LimitedSearch::Found *found =
        limited.search(forward, backward, sumCap);
    if (!found)
      return std::nullopt;
    const PlanProblem::Times &times = found->times;
    if (overBackward)
      return BottleneckSearch::Result{times.sum, times.slowestBackward,
                                      times.slowestForward};
    return BottleneckSearch::Result{times.sum, times.slowestForward, 0};
  };

  if (!split) {
    BottleneckSearch search(lambda, kInf, budget, &best.objectiveMs);
    search.run(floorForward, startForward, partitioner.sumFloor(), 0,
               [&](double, double bound, double sumCap) {
                 return probe(bound, kInf, sumCap, false);
               });
  } else if (!relaxationProves) {
    // Split bottlenecks: an outer search over the slowest forward step.
    // Its value at a bound is the inner optimum, over the slowest backward
    // step, of sum + lambda * (slowest backward step) under that bound;
    // its slowest is that optimum's slowest forward step.
    // What the relaxation left: both slowest steps are at most the step,
    // and together at least it.
    startForward = std::min(startForward, stepHigh);
    startBackward = std::min(startBackward, stepHigh);
    BottleneckSearch outer(lambda, kInf, budget, &best.objectiveMs);
    double slowestTransfer = slowestTransferMs(problem);
    StageBackwardFloor stageBackward(problem);
    // A plan beats the quick plan only with both slowest steps within
    // `slack` together; above every transfer, a slowest forward step f
    // brings a backward step of stageBackward.from(f), which grows with f.
    if (std::isfinite(startForward) && startForward > slowestTransfer) {
      double slack = startForward + floorBackward;
      auto fits = [&](double forward) {
        return forward + stageBackward.from(forward) <= slack;
      };
      double low = std::max(slowestTransfer, floorForward);
      if (!fits(startForward)) {
        if (!fits(low)) {
          startForward = low;
        } else {
          double high = startForward;
          for (unsigned step = 0; step < 40; ++step) {
            double middle = low + (high - low) / 2;
            (fits(middle) ? low : high) = middle;
          }
          startForward = high;
        }
      }
    }
    outer.run(floorForward, startForward,
              partitioner.sumFloor() + lambda * floorBackward, 0,
              [&](double low, double bound,
                  double valueCap) -> std::optional<BottleneckSearch::Result> {
                // The plans of this interval have a slowest forward step of
                // at least `low`, hence a slowest backward step of at least
                // lowRatio() times that; and where no transfer takes that
                // long, their slowest forward step is a stage's, whose
                // backward step is no shorter than that of any stage whose
                // forward step takes `low` (about twice `low`, where
                // lowRatio() is at most 1).
                // Its plans have J = value + lambda * (slowest forward
                // step) >= value + lambda * low: the best J found so far
                // bounds them as it falls.
                BottleneckSearch inner(lambda, valueCap, budget,
                                       &best.objectiveMs, lambda * low);
                double backwardLow =
                    std::max(floorBackward, partitioner.lowRatio() * low);
                if (low > slowestTransfer)
                  backwardLow = std::max(backwardLow, stageBackward.from(low));
                backwardLow = std::max(backwardLow, stepLow - bound);
                inner.run(backwardLow, startBackward, partitioner.sumFloor(),
                          lambda * low,
                          [&](double, double backward, double sumCap) {
                            return probe(bound, backward, sumCap, true);
                          });
                if (!inner.found())
                  return std::nullopt;
                return BottleneckSearch::Result{inner.objective(),
                                                inner.payload(), 0};
              });
  }
}

/// With simplified classes the search proves nothing about every plan.
/// The same search with each cut at its least transfer, one class per set
/// of devices with the same numbers (Partitioner's `leastLinks`), does:
/// no plan costs more there than in the cluster. Returns that floor under
/// every plan's objective (at most the objective of `best`, which bounds
/// the search), and takes its plan, each stage moved to the device of its
/// numbers that the stage before reaches fastest, where that beats
/// `best`. (replayFloor bounds the 1F1B replay over the same classes.)
static double leastLinkFloor(const PlanProblem &problem, unsigned stages,
                             PipelinePlan &best) {
  Partitioner relaxed(problem, stages, /*leastLinks=*/true);
  if (relaxed.takesTheFastest())
    return 0;
  PipelinePlan least;
  least.objectiveMs = best.objectiveMs;
  SearchBudget budget{kSearchRuns};
  searchBottlenecks(problem, relaxed, stages, least, budget);
  if (!least.stages.empty()) {
    std::vector<StagePlan> near = problem.onNearDevices(least.stages);
    double objective = problem.objectiveMs(near);
    if (objective < best.objectiveMs && fitsMemory(problem, near)) {
      best.stages = std::move(near);
      best.objectiveMs = objective;
    }
  }
  return std::min(least.objectiveMs, budget.unexplored);
}

static llvm::Expected<SearchOutcome> searchPlan(const PlanProblem &problem,
                                                bool modelLayers, double capMs,
                                                unsigned stages) {
  const PlanOptions &options = problem.options();
  if (!stages)
    stages = options.stages;
  Partitioner partitioner(problem, stages);
  if (partitioner.takesTheFastest() && !stages && options.cutAfter.empty())
    return searchFastestCount(problem);

  PipelinePlan best;
  best.objectiveMs = capMs;
  // Searches may stop early: past this many, the result reports how far
  // from the optimum it can be.
  SearchBudget budget{kSearchRuns};
  budget.inexactCells = options.tuning.inexactCells;
  // With simplified classes, every run made exact over the cluster's own
  // devices where it can be.
  bool onDevices =
      modelLayers && partitioner.searchOnDevices(kDeviceTransitions);
  searchBottlenecks(problem, partitioner, stages, best, budget);
  if (budget.unexplored < best.objectiveMs) {
    best.exact = false;
    best.gapBound = (best.objectiveMs - budget.unexplored) / best.objectiveMs;
  }
  double leastLinkFloorMs = 0;
  if (modelLayers && partitioner.isApproximate() && !best.stages.empty()) {
    // Every run exact and the search finished: no plan is below the best.
    if (onDevices && partitioner.exactOnDevices() &&
        budget.unexplored >= best.objectiveMs) {
      leastLinkFloorMs = best.objectiveMs;
    } else {
      leastLinkFloorMs = leastLinkFloor(problem, stages, best);
    }
  }
  if (!best.stages.empty()) {
    SearchOutcome outcome{std::move(best), true, !partitioner.isApproximate()};
    outcome.leastLinkFloorMs = leastLinkFloorMs;
    // 1F1B: the floor under every replay; its search's plans, which let
    // warm-ups hide time, seed the refinement on the replay.
    if (problem.options().training &&
        problem.options().schedule == Schedule::OneFOneB) {
      llvm::Expected<Simulation> found =
          simulate(problem, outcome.plan.stages, /*recordEvents=*/false);
      double replayMs = kInf;
      if (found)
        replayMs = found->iterationMs;
      else
        llvm::consumeError(found.takeError());
      // The tables for the search over replays, and the bounds of the
      // suffixes' own stalls, depend neither on the floor nor on each
      // other: dynamic programs of their own build them on two more
      // threads while the floor is searched. None depends on the order
      // they finish in. Their layout (suffixTableLayout) is the searched
      // partitioner's, or that of one with least links, and a partitioner
      // of the same problem, stage count and links fills it. (The pool,
      // declared last, waits for its tasks before the tables go.)
      SuffixTables tables, responses;
      if (modelLayers)
        tables = suffixTableLayout(problem, partitioner, replayMs, stages);
      bool tabulated = !tables.radix.empty();
      llvm::DefaultThreadPool pool(llvm::hardware_concurrency(2));
      if (tabulated) {
        responses = tables;
        pool.async([&problem, &tables, stages] {
          Partitioner own(problem, stages, tables.leastLinks);
          fillSuffixTables(problem, own, tables);
        });
        pool.async(
            [&problem, &responses] { tabulateResponses(problem, responses); });
      }
      if (found)
        outcome.replayFloorMs =
            replayFloor(problem, partitioner, stages, replayMs, modelLayers,
                        outcome.plan.floorPlans);
      if (tabulated) {
        pool.wait();
        tables.takeResponses(responses);
        // (Nor where they would take too many steps; one microbatch has no
        // stalls.)
        if (tables.leastLinks && tables.response.empty() &&
            problem.options().microbatches > 1)
          tables = SuffixTables();
        outcome.suffixes = std::move(tables);
      }
    }
    return outcome;
  }
  // None below the cap.
  if (capMs < kInf)
    return SearchOutcome{std::move(best), false, false};

  // Nothing fits: the plan whose worst memory overflow is least.
  SearchLimits overflow;
  overflow.overflow = true;
  std::optional<std::vector<StagePlan>> closest = partitioner.search(overflow);
  if (!closest)
    return llvm::createStringError(llvm::formatv(
        "no plan of the model's {0} layers on the cluster's {1} devices meets "
        "the given --stages, --cut-after and --device-order",
        problem.numLayers(), problem.numDevices()));
  PipelinePlan failed;
  failed.stages = std::move(*closest);
  return SearchOutcome{std::move(failed), false, false};
}
