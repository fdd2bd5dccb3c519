//===- DeviceSearch.cpp - exact searches past simplified classes ----------===//
//
// Where the cluster's interchangeable devices make too many classes to
// count, the partitioner counts devices by kind (Partitioner.cpp): its
// plans then need not be the least, since devices of one kind on different
// hosts differ in their links. This file makes each of its searches exact
// where it can. A search with every cut at its least transfer (the
// constructor's `leastLinks`) prices no suffix above any plan on the
// devices, so its tables bound the rest of every partial plan. A search
// over the devices themselves, layer boundary by layer boundary from the
// first, keeps only the partial plans whose sum plus that bound stays
// below an incumbent (that search's plan on the devices its stages reach
// fastest, or where it gives up, the kinds' search's), and merges those
// that reach a boundary with the same devices used and the same last
// device class. When it ends within its budget, its plan is the least
// over the devices.
//
// A state is where a stage ends: the devices used per class of the
// cluster's interchangeable devices, and the class of the last stage. A
// stage's memory depends on its position only through its stash, which
// does not under GPipe and inference; 1F1B would need the stages left in
// the state, and is left out. A fixed stage count (--stages, --cut-after)
// is the devices used at the end.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <utility>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();
/// The searches over devices since searchOnDevices give up past this many
/// times the transitions one may make.
static constexpr uint64_t kCallsInBudget = 3;
/// A search over devices gives up past this many states (about 100 MB).
static constexpr size_t kMaxDeviceStates = 2000000;

std::optional<std::vector<StagePlan>>
Partitioner::search(const SearchLimits &limits) {
  bool plain = !limits.overflow && !limits.unhidden &&
               !limits.tabulateLargest && !limits.everySuffix &&
               !limits.freshTables;
  if (!onDevices || onDevicesGaveUp)
    return searchClasses(limits);
  // Searches of another kind stay with the classes: the later ones are
  // then no longer all exact.
  if (!plain) {
    onDevicesGaveUp = true;
    return searchClasses(limits);
  }
  return searchDevices(limits);
}

bool Partitioner::searchOnDevices(uint64_t maxTransitions) {
  if (!approximate || forcedOrder ||
      (options.training && options.schedule == Schedule::OneFOneB))
    return false;
  if (!leastLinkSearch) {
    leastLinkSearch = std::make_unique<Partitioner>(problem, requiredStages,
                                                    /*leastLinks=*/true);
    if (leastLinkSearch->takesTheFastest() || leastLinkSearch->symmetric ||
        leastLinkSearch->forcedOrder) {
      leastLinkSearch.reset();
      return false;
    }
  }
  deviceClasses = problem.cluster().interchangeableDevices();
  deviceHostGroups = identicalHostGroups(problem, deviceClasses);
  onDevices = true;
  onDevicesGaveUp = false;
  nearIncumbentFirst = true;
  deviceTransitions = 0;
  maxDeviceTransitions = maxTransitions;
  return true;
}

std::optional<std::vector<StagePlan>>
Partitioner::searchDevices(const SearchLimits &limits) {
  unsigned numLayers = problem.numLayers();
  double transfers = options.training ? 2 : 1;
  Partitioner &bound = *leastLinkSearch;

  // The bound's tables under the same limits, and per suffix the least
  // over the suffixes that use a subset of its devices. The search drops
  // states that no partial plan below the sum cap reaches, and keeps that
  // least: those that a subset of their devices beats; those whose layers
  // the cap rules out, since the layers before them take at least their
  // floor; and those whose devices leave too few stages for the layers
  // before them, which no partial plan within the limits has.
  SearchLimits tableLimits = limits;
  tableLimits.freshTables = true;
  std::optional<std::vector<StagePlan>> relaxed =
      bound.searchClasses(tableLimits);
  // No plan within the limits and the cap, even at the least transfers.
  if (!relaxed)
    return std::nullopt;
  // The incumbent: the relaxation's plan, each stage on the device of its
  // numbers that the stage before reaches fastest, where its transfers
  // stay within the limits (its stages are the relaxation's, within them).
  // The least at the least transfers may prove it the least. (The search
  // over the partitioner's classes, which costs several times the
  // relaxation's with no state dropped, is left for where the search over
  // devices gives up.)
  std::optional<std::vector<StagePlan>> plan = problem.onNearDevices(*relaxed);
  for (unsigned s = 1; plan && s < plan->size(); ++s)
    if (transferOver(limits,
                     problem.cutMs((*plan)[s - 1].end - 1,
                                   (*plan)[s - 1].device, (*plan)[s].device)))
      plan.reset();
  auto sumOf = [&](const std::optional<std::vector<StagePlan>> &stages) {
    return stages ? problem.times(*stages, false).sum : limits.sumCap;
  };
  // (Without one, a plan whose sum is the cap itself is not searched for:
  // it beats no incumbent of the searches that set the cap.)
  double incumbent = sumOf(plan);
  if (!(incumbent < limits.sumCap)) {
    plan.reset();
    incumbent = limits.sumCap;
  }
  double relaxedSum = bound.planTimes(*relaxed, false).sum;
  if (!(incumbent > relaxedSum * (1 + 1e-12)))
    return plan;

  unsigned numKinds = bound.classes.size(), slots = bound.slotsPerKey();
  unsigned numKindKeys = bound.numKeys();
  std::vector<double> least(bound.value);
  for (unsigned i = 0; i <= numLayers; ++i)
    for (unsigned key = 1; key < numKindKeys; ++key) {
      double *cells = &least[bound.cellIndex(i, key, 0)];
      for (unsigned k = 0; k < numKinds; ++k) {
        if (!bound.usedOf(key, k))
          continue;
        const double *subset =
            &least[bound.cellIndex(i, key - bound.radix[k], 0)];
        for (unsigned next = 0; next < slots; ++next)
          cells[next] = std::min(cells[next], subset[next]);
      }
    }
  unsigned allKinds = 0;
  for (unsigned k = 0; k < numKinds; ++k)
    allKinds += bound.radix[k] * bound.classes[k].devices.size();

  // The cluster's classes, each device's kind, and where each class's
  // count sits in a state's bits.
  const std::vector<std::vector<unsigned>> &devices = deviceClasses;
  unsigned numClasses = devices.size(), none = numClasses;
  SmallVector<unsigned> kindOf, shift;
  SmallVector<uint64_t> mask;
  unsigned bits = 0;
  for (const std::vector<unsigned> &cls : devices) {
    kindOf.push_back(bound.classOf[cls.front()]);
    shift.push_back(bits);
    unsigned width = llvm::Log2_32_Ceil(cls.size() + 1);
    mask.push_back((uint64_t(1) << width) - 1);
    bits += width;
  }
  if (bits > 64) {
    onDevicesGaveUp = true;
    std::optional<std::vector<StagePlan>> byClass = searchClasses(limits);
    if (sumOf(byClass) < incumbent)
      return byClass;
    return plan;
  }
  auto usedOn = [&](uint64_t used, unsigned c) {
    return unsigned((used >> shift[c]) & mask[c]);
  };
  // A state up to the symmetry of identical hosts: their hosts in order of
  // their counts (canonicalizeHosts), and the last class relabeled with
  // them. Swapping such hosts maps every plan to one that costs the same,
  // so the states that swap into each other share their best completions.
  SmallVector<uint16_t> digits(numClasses);
  SmallVector<unsigned> perm(numClasses);
  auto canonical = [&](uint64_t used, unsigned last) {
    if (deviceHostGroups.empty())
      return std::make_pair(used, last);
    for (unsigned c = 0; c < numClasses; ++c)
      digits[c] = usedOn(used, c);
    canonicalizeHosts(deviceHostGroups, digits, perm);
    uint64_t key = 0;
    for (unsigned c = 0; c < numClasses; ++c)
      key |= uint64_t(digits[c]) << shift[c];
    return std::make_pair(key, perm[last]);
  };

  // The least the rest adds after a stage of kind `kind` ends at
  // boundary j, with the kinds' devices `left`: the transfer into it at
  // its least and its table's sum.
  std::vector<double> restBound(size_t(numLayers + 1) * numKindKeys * numKinds,
                                std::numeric_limits<double>::quiet_NaN());
  auto rest = [&](unsigned j, unsigned left, unsigned kind) {
    if (j == numLayers)
      return 0.0;
    double &memo =
        restBound[(size_t(j) * numKindKeys + left) * numKinds + kind];
    if (!std::isnan(memo))
      return memo;
    memo = kInf;
    const double *cells = &least[bound.cellIndex(j, left, 0)];
    for (unsigned next = 0; next < numKinds; ++next) {
      const SmallVector<unsigned> &from = bound.classes[kind].devices;
      const SmallVector<unsigned> &to = bound.classes[next].devices;
      // (One device of the kind: the stage before has it.)
      if (cells[next] == kInf || (next == kind && to.size() < 2))
        continue;
      unsigned b = next == kind ? to[1] : to.front();
      memo = std::min(
          memo, cells[next] +
                    transfers * bound.cutTime(j, kind, from.front(), next, b));
    }
    return memo;
  };

  struct State {
    uint64_t used;
    unsigned kindsUsed, stages;
    unsigned last;
    double sum;
    // The state before, and the stage from there to here.
    int before;
    unsigned end, device;
    Recompute recompute;
  };
  preparePricing();
  int64_t stashed = inFlight[0];
  struct StageChoice {
    double busy = kInf;
    Recompute recompute = Recompute::None;
    bool longerMayDo = false;
  };
  // Per boundary i: the stages from it on each of the partitioner's
  // classes (devices with the same numbers), by end; and the transfers
  // into each class from each. Both are filled afresh at each boundary.
  std::vector<unsigned> pricedOn(problem.numDevices());
  for (auto [c, cls] : llvm::enumerate(classes))
    for (unsigned device : cls.devices)
      pricedOn[device] = c;
  std::vector<std::vector<StageChoice>> ahead(classes.size());
  std::vector<double> cuts(size_t(numClasses) * numClasses);

  // The search from layer 0 for a plan below `cap`: `below` is the least
  // such plan, if any. False where it gives up, past `maxTransitions`
  // (`below` is then the least it found, if any).
  auto searchBelow = [&](double cap, uint64_t maxTransitions,
                         std::optional<std::vector<StagePlan>> &below) {
    uint64_t transitions = 0;
    std::vector<State> states;
    std::vector<std::vector<unsigned>> at(numLayers + 1);
    llvm::DenseMap<std::pair<uint64_t, uint64_t>, unsigned> index;
    states.push_back({0, 0, 0, none, 0, -1, 0, 0, Recompute::None});
    at[0].push_back(0);

    int found = -1;
    unsigned foundDevice = 0;
    Recompute foundRecompute = Recompute::None;
    // Past its transitions or states the search stops, keeping the least
    // plan it found so far.
    bool finished = [&] {
      for (unsigned i = 0; i < numLayers; ++i) {
        if (at[i].empty())
          continue;
        for (std::vector<StageChoice> &ends : ahead)
          ends.clear();
        if (i > 0)
          for (unsigned from = 0; from < numClasses; ++from)
            for (unsigned c = 0; c < numClasses; ++c)
              cuts[from * numClasses + c] =
                  problem.classCutMs(i - 1, devices[from], devices[c]);
        // The stage [i, j) on class c: its fastest recompute that fits within
        // the limits, priced as the dynamic program does.
        auto stageOn = [&](unsigned c, unsigned j) -> const StageChoice & {
          unsigned device = devices[c].front(), priceClass = pricedOn[device];
          std::vector<StageChoice> &ends = ahead[priceClass];
          while (ends.size() < j - i) {
            unsigned end = i + 1 + ends.size();
            StageChoice choice;
            int64_t capacity = problem.capacityBytes(device);
            for (unsigned r = 0; r < recomputeChoices.size(); ++r) {
              const Priced &cost = price(priceClass, i, end, r);
              if (stageOver(limits, cost, cost.busy))
                continue;
              choice.longerMayDo = true;
              if (cost.fixedBytes + cost.stashBytes * stashed > capacity)
                continue;
              choice.busy = cost.busy;
              choice.recompute = recomputeChoices[r];
              break;
            }
            ends.push_back(choice);
          }
          return ends[j - i - 1];
        };
        for (unsigned s : at[i]) {
          State state = states[s];
          // A state at the same boundary with the same last class and one
          // device fewer, and no greater sum, leaves every completion of this
          // one to itself (unless the stage count is fixed).
          bool dominated = false;
          for (unsigned c = 0;
               c < numClasses && !dominated && i > 0 && !requiredStages; ++c) {
            unsigned count = usedOn(state.used, c);
            if (count < (c == state.last ? 2u : 1u))
              continue;
            auto [key, last] =
                canonical(state.used - (uint64_t(1) << shift[c]), state.last);
            auto it = index.find({key, uint64_t(i) << 32 | last});
            dominated =
                it != index.end() && states[it->second].sum <= state.sum;
          }
          if (dominated)
            continue;
          for (unsigned c = 0; c < numClasses; ++c) {
            unsigned usedHere = usedOn(state.used, c);
            if (usedHere == devices[c].size())
              continue;
            unsigned device = devices[c][usedHere];
            double x = 0;
            if (state.last != none) {
              x = cuts[state.last * numClasses + c];
              if (transferOver(limits, x))
                continue;
            }
            double base = state.sum + transfers * x;
            uint64_t used = state.used + (uint64_t(1) << shift[c]);
            unsigned kind = kindOf[c];
            unsigned kindsUsed = state.kindsUsed + bound.radix[kind];
            unsigned left = allKinds - kindsUsed;
            unsigned stages = state.stages + 1;
            if (requiredStages && stages > requiredStages)
              continue;
            for (unsigned j = i + 1; j <= numLayers; ++j) {
              // With cuts given, the stage ends at the next one.
              if (!previousBoundary.empty() && previousBoundary[j] != int(i))
                continue;
              if (++transitions > maxTransitions ||
                  ++deviceTransitions > maxDeviceTransitions * kCallsInBudget ||
                  states.size() > kMaxDeviceStates)
                return false;
              const StageChoice &stage = stageOn(c, j);
              if (!stage.longerMayDo)
                break;
              if (stage.busy == kInf)
                continue;
              double sum = base + stage.busy;
              // Stages only grow longer.
              if (sum >= cap)
                break;
              if (sum + rest(j, left, kind) >= cap)
                continue;
              // The stage count, where fixed, is met at the end and only there.
              if (requiredStages &&
                  (j == numLayers) != (stages == requiredStages))
                continue;
              if (j == numLayers) {
                cap = sum;
                found = s;
                foundDevice = device;
                foundRecompute = stage.recompute;
                continue;
              }
              // A state reached again keeps its cheapest way there, in that
              // way's own labeling of the hosts: no state after it is made
              // before every way to it is known.
              auto [key, last] = canonical(used, c);
              auto [it, added] = index.try_emplace(
                  {key, uint64_t(j) << 32 | last}, unsigned(states.size()));
              if (added) {
                states.push_back({used, kindsUsed, stages, c, sum, int(s), j,
                                  device, stage.recompute});
                at[j].push_back(it->second);
              } else if (sum < states[it->second].sum) {
                State &kept = states[it->second];
                kept.used = used;
                kept.last = c;
                kept.sum = sum;
                kept.before = int(s);
                kept.end = j;
                kept.device = device;
                kept.recompute = stage.recompute;
              }
            }
          }
        }
      }
      return true;
    }();
    below.reset();
    if (found < 0)
      return finished;

    // The stages back from the last, each beginning where the one before
    // ends.
    std::vector<StagePlan> stages;
    stages.push_back(
        {states[found].end, numLayers, foundDevice, foundRecompute});
    for (int s = found; states[s].before >= 0; s = states[s].before) {
      const State &state = states[s];
      stages.push_back(
          {states[state.before].end, state.end, state.device, state.recompute});
    }
    std::reverse(stages.begin(), stages.end());
    below = std::move(stages);
    return finished;
  };

  // First with a quarter of the transitions, below that incumbent. Out of
  // them or of states: the search over the classes, and the search over
  // devices once more with all of them, below the best plan yet (at 100
  // layers × 16 devices of random kinds on four hosts, the incumbent alone
  // gave up where the search by kind's plan proved the least). Once a
  // first try gives up, the later searches start with the search by kind,
  // as where the relaxation's cuts within a host are rare (three kinds
  // round robin on four hosts), its plan is a poor incumbent and the first
  // tries only waste transitions.
  std::optional<std::vector<StagePlan>> below;
  if (nearIncumbentFirst) {
    bool finished = searchBelow(incumbent, maxDeviceTransitions / 4, below);
    if (below) {
      incumbent = sumOf(below);
      plan = std::exchange(below, std::nullopt);
    }
    if (finished)
      return plan;
    nearIncumbentFirst = false;
  }
  std::optional<std::vector<StagePlan>> byClass = searchClasses(limits);
  if (sumOf(byClass) < incumbent) {
    incumbent = sumOf(byClass);
    plan = std::move(byClass);
  }
  if (!(incumbent > relaxedSum * (1 + 1e-12)))
    return plan;
  bool finished = searchBelow(incumbent, maxDeviceTransitions, below);
  if (below)
    plan = std::exchange(below, std::nullopt);
  if (!finished)
    onDevicesGaveUp = true;
  return plan;
}
