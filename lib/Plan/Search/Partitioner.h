//===- Partitioner.h - the dynamic program over suffixes --------*- C++ -*-===//
//
// The partitioner's dynamic program (Partitioner.cpp), which the searches
// for the best plan (PlanSearch.cpp) run under changing limits.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_LIB_PLAN_PARTITIONER_H
#define PIPE_LIB_PLAN_PARTITIONER_H

#include "pipe/Plan/PlanProblem.h"

#include "llvm/ADT/StringMap.h"

#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace mlir {
namespace pipe {

/// No limit.
inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();
/// Past this many cells, even with one class per set of devices with the
/// same numbers, the fastest devices take one stage each; classes are
/// simplified past SearchTuning::classCells, at most this; and the search
/// over every layer is not cheap past this many with the cluster's
/// classes (layerSearchIsCheap).
inline constexpr double kMaxCells = 4e6;
/// More stages than any plan has.
inline constexpr unsigned kUnreachableStages = 1u << 30;

/// Cells of the dynamic program over `numLayers` layers whose devices form
/// classes of these sizes: per layer boundary, every count of devices used
/// per class, and the class of the first stage (or none).
double dynamicProgramCells(unsigned numLayers, ArrayRef<size_t> classSizes);

/// The devices, fastest (least time for the whole model) first.
std::vector<unsigned> fastestFirst(const PlanProblem &problem);

/// Hosts that swap with each other: each host's classes, in an order that
/// matches them from host to host.
using HostGroup = std::vector<SmallVector<unsigned>>;

/// The groups of hosts among `classes` (devices by class, each on one
/// host) whose classes match one to one in numbers and sizes, and where
/// swapping the first host of a group with any other keeps every link:
/// any relabeling of a group's hosts maps every plan to one that costs the
/// same. Hosts in no group are left out.
std::vector<HostGroup>
identicalHostGroups(const PlanProblem &problem,
                    ArrayRef<std::vector<unsigned>> classes);

/// Puts the hosts of each of `groups` in order of their counts in `digits`
/// (devices used per class): the canonical form of the counts up to
/// relabeling those hosts. `perm[c]` is the class that class c becomes.
void canonicalizeHosts(ArrayRef<HostGroup> groups,
                       MutableArrayRef<uint16_t> digits,
                       MutableArrayRef<unsigned> perm);

/// Interchangeable devices.
struct DeviceClass {
  SmallVector<unsigned> devices;
};

/// One run of the dynamic program.
struct SearchLimits {
  /// No forward (backward) step, stage or transfer, may take longer. With
  /// a single bottleneck, `forward` bounds whole stages.
  double forward = kUnbounded, backward = kUnbounded;
  /// With split bottlenecks, no stage may take longer in all (forward,
  /// backward and recompute), and no transfer longer than half this: the
  /// limit of GPipe's relaxation to one bottleneck (searchPlan).
  double step = kUnbounded;
  /// Plans whose sum exceeds this are of no use.
  double sumCap = kUnbounded;
  /// Minimize the worst memory overflow instead of time, ignoring memory
  /// limits (to explain why nothing fits).
  bool overflow = false;
  /// Bound each stage's unhidden time (PlanProblem::unhiddenMs) instead of
  /// its whole time: the search then minimizes a lower bound on the 1F1B
  /// replay.
  bool unhidden = false;
  /// Also tabulate, per suffix, the least over its plans of the largest
  /// stage time (unhidden, with `unhidden`) or transfer (suffixLargest)
  /// within the limits. Not with a sum cap.
  bool tabulateLargest = false;
  /// Keep the least sum of every suffix in the tables, even of those whose
  /// devices leave too few for the layers before them to meet the limits
  /// (which the search otherwise skips).
  bool everySuffix = false;
  /// Start from a clean table, so that after the search every suffix's
  /// cell holds its least sum or infinity (a search otherwise resets only
  /// the states it visits).
  bool freshTables = false;
};

/// The dynamic program over suffixes of the layer order (see
/// Partitioner.cpp): the least sum of stage and transfer times among the
/// plans within given limits, with its tables kept from one search to the
/// next.
class Partitioner {
public:
  /// `stages`, when not zero, fixes the stage count as --stages would.
  /// With `leastLinks`, devices with the same numbers form one class
  /// whatever their hosts, and a cut between two classes costs its transfer
  /// over the fastest link between any two of their devices: no plan costs
  /// more than in the cluster, so the least of any objective that grows
  /// with stage and transfer times is a lower bound on the cluster's, with
  /// fewer classes to count.
  explicit Partitioner(const PlanProblem &problem, unsigned stages = 0,
                       bool leastLinks = false);

  /// The plan of least sum under `limits`, if any.
  std::optional<std::vector<StagePlan>> search(const SearchLimits &limits);

  /// With simplified classes, makes later searches exact over the cluster's
  /// own devices where they can be (DeviceSearch.cpp): a search with every
  /// cut at its least transfer gives each search the incumbent (its plan on
  /// the devices its stages reach fastest) and the tables that bound a
  /// search over the devices. Only where memory does not depend on a stage's
  /// position (GPipe, inference), and for plain searches (no overflow,
  /// unhidden times or exported tables: one of those ends it). A search
  /// past `maxTransitions` transitions or two million states gives up, and
  /// so do the later ones, as do all past a few times that many
  /// transitions in all. Returns whether it applies.
  bool searchOnDevices(uint64_t maxTransitions);
  /// Whether every search since searchOnDevices was exact over the
  /// devices.
  bool exactOnDevices() const { return onDevices && !onDevicesGaveUp; }

  /// PlanProblem::times as the searches price `plan`: with `leastLinks`,
  /// each cut at its least transfer. After a search.
  PlanProblem::Times planTimes(ArrayRef<StagePlan> plan, bool unhidden);

  /// For each of the ascending `limits` and each suffix (by cell), the
  /// least sum of its plans whose unhidden stage times and transfers are all
  /// within the limit, at [cell * limits.size() + limit]: one pass of the
  /// dynamic program for every limit.
  std::vector<double> sumsWithin(ArrayRef<double> limits);

  /// The last search's tables, by a suffix's first layer, devices used per
  /// class (SuffixTables) and first class: the least sum of its plans,
  /// and with SearchLimits::tabulateLargest the least largest stage time or
  /// transfer.
  const std::vector<double> &suffixSums() const { return value; }
  const std::vector<double> &suffixLargest() const { return largest; }
  /// The classes' places in a key, when the keys count the devices used
  /// per class (the cluster's interchangeable devices, or with leastLinks
  /// the devices with the same numbers); empty otherwise.
  SmallVector<unsigned> keyRadix() const {
    return forcedOrder || approximate || symmetric
               ? SmallVector<unsigned>()
               : SmallVector<unsigned>(radix.begin(), radix.end());
  }
  /// The devices of each class.
  std::vector<std::vector<unsigned>> classDevices() const {
    std::vector<std::vector<unsigned>> devices;
    for (const DeviceClass &cls : classes)
      devices.emplace_back(cls.devices.begin(), cls.devices.end());
    return devices;
  }

  /// Lower bounds on every plan's slowest forward and backward steps.
  double forwardFloor() const { return floorForward; }
  double backwardFloor() const { return floorBackward; }
  /// With split bottlenecks, a lower bound on every plan's slowest stage in
  /// all (SearchLimits::step).
  double stepFloor() const { return floorStep; }
  /// A lower bound on every plan's sum.
  double sumFloor() const { return prefixFloor.back(); }
  /// Whether the device classes were simplified, which restricts the
  /// search: the result is then not proven optimal.
  bool isApproximate() const { return approximate; }
  /// The states of the dynamic program per layer boundary.
  size_t numStates() const { return size_t(numKeys()) * slotsPerKey(); }
  /// The cells of the dynamic program: states times layer boundaries.
  double numCells() const {
    return double(numStates()) * (problem.numLayers() + 1);
  }
  /// Whether the keys count devices up to the symmetry of identical hosts
  /// (SearchTuning::hostSymmetry): still exact.
  bool countsUpToSymmetry() const { return symmetric; }
  /// Whether cuts cost their least transfer (the constructor's
  /// `leastLinks`): the results then bound the cluster's from below.
  bool leastLinkCuts() const { return leastLinks; }
  /// Whether, with too many classes even by kind, the fastest devices take
  /// one stage each, fastest first: as many as the stage count fixed, else
  /// one per device (or per layer), and the caller searches the count.
  bool takesTheFastest() const { return fastestOnly; }
  /// Bounds on (slowest backward step) / (slowest forward step) of any
  /// plan: a stage's backward-to-forward ratio lies between its layers'
  /// extremes, and a transfer is as slow both ways.
  double lowRatio() const { return std::min(1.0, ratioLow); }
  double highRatio() const { return std::max(1.0, ratioHigh); }

private:
  /// The dynamic program over the partitioner's classes.
  std::optional<std::vector<StagePlan>>
  searchClasses(const SearchLimits &limits);
  /// The plan of least sum under `limits` over the cluster's own devices,
  /// if any; where it stops early, sets onDevicesGaveUp and returns the
  /// better of the incumbent and the plan of searchClasses.
  std::optional<std::vector<StagePlan>>
  searchDevices(const SearchLimits &limits);

  struct Priced {
    double forward, backward, busy;
    int64_t fixedBytes, stashBytes;
  };
  /// Whether a transfer taking `x` is over `limits`.
  bool transferOver(const SearchLimits &limits, double x) const {
    return x > limits.forward ||
           (split && (x > limits.backward || 2 * x > limits.step));
  }
  /// Whether a stage priced `cost` is over `limits`; `slowest` is its time
  /// as a single bottleneck bounds it (whole, or unhidden).
  bool stageOver(const SearchLimits &limits, const Priced &cost,
                 double slowest) const {
    return split
               ? cost.forward > limits.forward ||
                     cost.backward > limits.backward || cost.busy > limits.step
               : slowest > limits.forward;
  }
  /// The costs of the stage [i, j) on class c with the recompute choice
  /// `choiceIndex`, priced on first use for each end j (the dynamic
  /// program visits the ends in turn).
  const Priced &price(unsigned c, unsigned i, unsigned j,
                      unsigned choiceIndex) {
    c = pricingClass[c];
    size_t slot = size_t(c) * problem.numLayers() + i;
    if (pricedFor[slot] != j)
      priceStages(slot, c, i, j);
    return priced[slot * recomputeChoices.size() + choiceIndex];
  }
  /// Prices the stages [i, j) on class c, at `slot`, for every recompute
  /// choice.
  void priceStages(size_t slot, unsigned c, unsigned i, unsigned j);
  /// The transfer after layer j - 1 from device `from` of class c to
  /// device `to` of class `next`.
  double cutTime(unsigned j, unsigned c, unsigned from, unsigned next,
                 unsigned to);
  /// Sizes the tables of prices and transfers, and the microbatches in
  /// flight by position, on the first search.
  void preparePricing();
  /// The first layers a stage ending before layer j may start at, least
  /// and greatest: with hand-given cuts, only the boundary before.
  std::pair<int, int> startRange(unsigned j) const {
    if (previousBoundary.empty())
      return {0, int(j) - 1};
    return {previousBoundary[j], previousBoundary[j]};
  }
  unsigned numKeys() const { return keyStages.size(); }
  unsigned numDevices() const { return problem.numDevices(); }
  /// Cells per layer and key: one per first class of the suffix, and one
  /// for the empty suffix. Under a forced order the key fixes the first
  /// class, so one.
  unsigned slotsPerKey() const { return forcedOrder ? 1 : classes.size() + 1; }
  size_t cellIndex(unsigned layer, unsigned key, unsigned next) const {
    return (size_t(layer) * numKeys() + key) * slotsPerKey() +
           (forcedOrder ? 0 : next);
  }
  /// The first classes a suffix of `key` may have, as [first, last): under
  /// a forced order only the class its stage count fixes (none when empty).
  std::pair<unsigned, unsigned> firstClasses(unsigned key) const {
    unsigned numClasses = classes.size();
    if (!forcedOrder)
      return {0, numClasses + 1};
    unsigned first = keyStages[key] ? numClasses - keyStages[key] : numClasses;
    return {first, first + 1};
  }
  /// The fewest stages, each within `limits`, that the layers before
  /// (after) each boundary need; kUnreachableStages past (before) a layer
  /// that fits no stage.
  struct StageBounds {
    std::vector<unsigned> before, after;
  };
  StageBounds leastStages(const SearchLimits &limits) const;
  unsigned totalDevices() const {
    unsigned total = 0;
    for (const DeviceClass &cls : classes)
      total += cls.devices.size();
    return total;
  }
  unsigned maxKeyStages() const { return stagesBegin.size() - 2; }
  /// The keys with `low` to `high` stages, fewest first.
  ArrayRef<unsigned> keysWithStages(unsigned low, unsigned high) const {
    high = std::min(high, maxKeyStages());
    if (low > high)
      return {};
    return ArrayRef<unsigned>(keysByStages)
        .slice(stagesBegin[low], stagesBegin[high + 1] - stagesBegin[low]);
  }
  /// Whether a stage before the suffix of `key` may be on class `cls`.
  bool classAllowed(unsigned key, unsigned cls) const;
  /// The classes that may be allowed there, as [first, last): under a
  /// forced order at most the one the key's stage count fixes.
  std::pair<unsigned, unsigned> stageClasses(unsigned key) const {
    unsigned numClasses = classes.size();
    if (!forcedOrder)
      return {0, numClasses};
    if (keyStages[key] >= numClasses)
      return {0, 0};
    unsigned cls = numClasses - 1 - keyStages[key];
    return {cls, cls + 1};
  }
  /// The key of a suffix of `key` after a stage on class `cls`, and that
  /// stage's class there: with symmetric keys, both as the key's canonical
  /// form labels them.
  unsigned addStage(unsigned key, unsigned cls) const {
    if (symmetric)
      return nextKey[size_t(key) * classes.size() + cls];
    return forcedOrder ? key + 1 : key + radix[cls];
  }
  unsigned addedClass(unsigned key, unsigned cls) const {
    return symmetric ? nextClass[size_t(key) * classes.size() + cls] : cls;
  }
  /// The keys up to the hosts' symmetry, from the empty one, if their cells
  /// stay within kMaxCells; sets `symmetric`.
  bool buildSymmetricKeys();
  /// The id of a canonical key's digits.
  unsigned keyId(ArrayRef<uint16_t> digits) const;
  /// How many devices of class `cls` the suffix of `key` uses.
  unsigned usedOf(unsigned key, unsigned cls) const {
    return keyDigits[size_t(key) * classes.size() + cls];
  }
  unsigned representative(unsigned cls, unsigned used) const {
    return classes[cls].devices[used];
  }

  const PlanProblem &problem;
  const PlanOptions &options;
  std::vector<DeviceClass> classes;
  /// Each device's class, with `leastLinks`.
  std::vector<unsigned> classOf;
  bool forcedOrder = false;
  bool approximate = false, fastestOnly = false, leastLinks = false;
  /// Whether a key counts devices up to the hosts' symmetry: its digits are
  /// canonical (canonicalizeHosts), and addStage and addedClass follow tables.
  bool symmetric = false;
  /// Per group of interchangeable hosts, each host's classes in matching
  /// order (the same numbers at the same place).
  std::vector<HostGroup> hostGroups;
  /// With symmetric keys: per key and class, the key after a stage on the
  /// class and the class it has there (addStage, addedClass); the ids of
  /// the canonical digits.
  std::vector<unsigned> nextKey;
  std::vector<uint16_t> nextClass;
  /// With symmetric keys: per key and class used, the key with one device
  /// of the class less, and the class each class is there (by [key, class,
  /// class]); for the dominance of subsets.
  std::vector<unsigned> lessKey;
  std::vector<uint8_t> lessClass;
  llvm::StringMap<unsigned> keyIds;
  std::vector<unsigned> radix, keyStages;
  /// The digits of every key: devices used per class.
  std::vector<uint16_t> keyDigits;
  /// The keys by stage count, and where those of each count begin.
  std::vector<unsigned> keysByStages, stagesBegin;
  /// The stage count a complete plan must have; 0 for any.
  unsigned requiredStages = 0;
  /// With hand-given cuts, the only boundary before each boundary.
  std::vector<int> previousBoundary;
  SmallVector<Recompute, 3> recomputeChoices;
  /// Lower bounds on the time of layers [0, i) (any device).
  std::vector<double> prefixFloor;
  /// Each layer's least forward, backward and whole time on any device.
  struct LayerFloor {
    double forward = 0, backward = 0, both = 0;
  };
  std::vector<LayerFloor> layerFloor;
  double floorForward = 0, floorBackward = 0, floorStep = 0;
  double ratioLow = kUnbounded, ratioHigh = 0;
  bool split = false;

  // Kept from one search to the next, which differ only in their limits.
  struct Choice {
    uint32_t end = 0;
    uint16_t next = 0;
    uint8_t recompute = 0;
    /// With symmetric keys, the stage's class as the suffix after it
    /// labels it.
    uint8_t added = 0;
  };
  std::vector<double> value, largest;
  std::vector<Choice> choice;
  /// The costs of the stages [i, pricedFor[c, i]) on class c, per recompute
  /// choice.
  std::vector<Priced> priced;
  std::vector<unsigned> pricedFor;
  /// The first class whose devices have the same numbers as each class's:
  /// the classes share its prices.
  std::vector<unsigned> pricingClass;
  /// The transfer after layer j - 1 from class c to class next, by
  /// (j, c, next), or by (j, c) under a forced order, where c fixes next;
  /// NaN until priced. Empty when a class's devices differ in their links.
  std::vector<double> cutByClass;
  /// Microbatches in flight on a stage with this many stages after it.
  std::vector<int64_t> inFlight;

  /// searchOnDevices: the search with every cut at its least transfer
  /// whose tables bound the searches over devices, and their budget.
  std::unique_ptr<Partitioner> leastLinkSearch;
  /// The cluster's interchangeable devices, and the groups of identical
  /// hosts among them.
  std::vector<std::vector<unsigned>> deviceClasses;
  std::vector<HostGroup> deviceHostGroups;
  bool onDevices = false, onDevicesGaveUp = false;
  /// Whether the searches over devices still try first below the
  /// relaxation's plan on near devices, before the search by kind.
  bool nearIncumbentFirst = true;
  uint64_t deviceTransitions = 0, maxDeviceTransitions = 0;
};

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_PLAN_PARTITIONER_H
