//===- Partitioner.cpp - the dynamic program over suffixes ----------------===//
//
// The objective of a plan with stage times t_1..t_S (forward, backward and
// recompute of one microbatch) and cut transfer times x_1..x_{S-1} is
//
//   J = sum(t) + k * sum(x) + (M - 1) * max(t, x),   k = 2 in training
//
// (the gradients cross each cut back). PlanSearch.cpp minimizes it by a
// walk over the Pareto front of (sum, max): this dynamic program finds the
// least sum among the plans whose slowest element is at most B, then B
// drops just below that plan's slowest element, until no plan can beat the
// best J seen.
//
// The dynamic program runs over suffixes of the layer order. A state is
// (first layer of the suffix, devices used per device class, class of the
// suffix's first stage). Devices of one class (same kind, host and links)
// are interchangeable, so counting them is enough; the class of the next
// stage prices the link of the cut; the number of stages already placed
// after a stage is its distance from the end, which fixes its 1F1B stash.
// Where hosts alike in devices and links make too many keys, a key counts
// the devices up to relabeling those hosts (buildSymmetricKeys).
// See docs/planner.md.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();

/// Cells of the dynamic program over `numLayers` layers whose devices form
/// classes of these sizes: per layer boundary, every count of devices used
/// per class, and the class of the first stage (or none).
double mlir::pipe::dynamicProgramCells(unsigned numLayers,
                                       ArrayRef<size_t> classSizes) {
  double keys = 1;
  for (size_t size : classSizes)
    keys *= double(size + 1);
  return keys * double(classSizes.size() + 1) * double(numLayers + 1);
}

/// The devices, fastest (least time for the whole model) first.
std::vector<unsigned> mlir::pipe::fastestFirst(const PlanProblem &problem) {
  // Devices as fast host by host (hosts in the order they first appear),
  // so that neighbouring stages share a host's links where they can.
  const Cluster &cluster = problem.cluster();
  llvm::StringMap<unsigned> hostRank;
  for (const Device &device : cluster.devices)
    hostRank.try_emplace(device.host, hostRank.size());
  std::vector<unsigned> order(problem.numDevices());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    double ta = problem.modelMs(a), tb = problem.modelMs(b);
    if (ta != tb)
      return ta < tb;
    return hostRank.lookup(cluster.devices[a].host) <
           hostRank.lookup(cluster.devices[b].host);
  });
  return order;
}

Partitioner::Partitioner(const PlanProblem &problem, unsigned stages,
                         bool leastLinks)
    : problem(problem), options(problem.options()), leastLinks(leastLinks) {
  if (!stages)
    stages = options.stages;
  const Cluster &cluster = problem.cluster();
  unsigned numDevices = cluster.devices.size();
  if (!options.deviceOrder.empty()) {
    forcedOrder = true;
    for (unsigned device : options.deviceOrder)
      classes.push_back({{device}});
    keyStages.resize(classes.size() + 1);
    std::iota(keyStages.begin(), keyStages.end(), 0);
    requiredStages = classes.size();
  } else {
    for (std::vector<unsigned> &group : cluster.interchangeableDevices())
      classes.push_back({SmallVector<unsigned>(group.begin(), group.end())});
    // Too many classes to count exactly, or cuts at their least transfer:
    // devices of one kind form one class whatever their hosts (host by
    // host, so that neighbouring stages of a class share a host); failing
    // that, every device takes a stage, fastest first.
    auto cells = [&] {
      SmallVector<size_t> sizes;
      for (const DeviceClass &cls : classes)
        sizes.push_back(cls.devices.size());
      return dynamicProgramCells(problem.numLayers(), sizes);
    };
    // (Never past kMaxCells, where the fastest devices take a stage each
    // below and the search would claim a proof it does not have.) Counting
    // up to the hosts' symmetry may keep them exact.
    bool tooMany = cells() > std::min(options.tuning.classCells, kMaxCells);
    if (tooMany && !leastLinks && options.tuning.hostSymmetry && buildSymmetricKeys())
      tooMany = false;
    if (leastLinks || tooMany) {
      approximate = !leastLinks;
      std::vector<unsigned> byHost(numDevices);
      std::iota(byHost.begin(), byHost.end(), 0);
      llvm::stable_sort(byHost, [&](unsigned a, unsigned b) {
        return cluster.devices[a].host < cluster.devices[b].host;
      });
      classes.clear();
      for (unsigned d : byHost) {
        auto it = llvm::find_if(classes, [&](const DeviceClass &cls) {
          return problem.pricedLike(cls.devices.front()) ==
                 problem.pricedLike(d);
        });
        if (it == classes.end())
          classes.push_back({{d}});
        else
          it->devices.push_back(d);
      }
    }
    if (!symmetric && cells() > kMaxCells) {
      forcedOrder = fastestOnly = true;
      classes.clear();
      for (unsigned device : fastestFirst(problem))
        classes.push_back({{device}});
      // The stage count fixed, else one stage per device (or per layer):
      // the fastest devices take them (searchFastestCount searches the
      // count).
      unsigned wanted = stages ? stages
                        : !options.cutAfter.empty()
                            ? unsigned(options.cutAfter.size() + 1)
                            : std::min(numDevices, problem.numLayers());
      if (wanted < classes.size())
        classes.resize(wanted);
      keyStages.resize(classes.size() + 1);
      std::iota(keyStages.begin(), keyStages.end(), 0);
      requiredStages = classes.size();
    }
  }
  if (leastLinks) {
    classOf.resize(numDevices);
    for (auto [c, cls] : llvm::enumerate(classes))
      for (unsigned device : cls.devices)
        classOf[device] = c;
  }
  if (!forcedOrder && !symmetric) {
    unsigned keys = 1;
    for (const DeviceClass &cls : classes) {
      radix.push_back(keys);
      keys *= cls.devices.size() + 1;
    }
    keyStages.assign(keys, 0);
    keyDigits.resize(size_t(keys) * classes.size());
    for (unsigned key = 0; key < keys; ++key)
      for (auto [c, cls] : llvm::enumerate(classes)) {
        unsigned digit = (key / radix[c]) % (cls.devices.size() + 1);
        keyDigits[size_t(key) * classes.size() + c] = digit;
        keyStages[key] += digit;
      }
    requiredStages = stages;
  }
  if (symmetric)
    requiredStages = stages;
  keysByStages.resize(numKeys());
  std::iota(keysByStages.begin(), keysByStages.end(), 0);
  llvm::stable_sort(keysByStages, [&](unsigned a, unsigned b) {
    return keyStages[a] < keyStages[b];
  });
  stagesBegin.assign(keyStages[keysByStages.back()] + 2, 0);
  for (unsigned key : keysByStages)
    ++stagesBegin[keyStages[key] + 1];
  std::partial_sum(stagesBegin.begin(), stagesBegin.end(), stagesBegin.begin());

  unsigned numLayers = problem.numLayers();
  if (!options.cutAfter.empty()) {
    previousBoundary.assign(numLayers + 1, -1);
    int previous = 0;
    for (unsigned cut : options.cutAfter) {
      previousBoundary[cut + 1] = previous;
      previous = cut + 1;
    }
    previousBoundary[numLayers] = previous;
    requiredStages = options.cutAfter.size() + 1;
  }

  recomputeChoices = problem.recomputeChoices();

  // Every layer runs somewhere, at best on its fastest device, so every
  // stage is at least as slow as its slowest layer there; and some stage
  // carries at least its share of the total.
  split = problem.splitBottleneck();
  prefixFloor.assign(numLayers + 1, 0);
  double sumForward = 0, sumBackward = 0, sumBoth = 0;
  for (unsigned l = 0; l < numLayers; ++l) {
    double forward = kInf, backward = kInf, both = kInf;
    for (unsigned d = 0; d < numDevices; ++d) {
      double f = problem.layerForwardMs(l, d),
             b = problem.layerBackwardMs(l, d);
      forward = std::min(forward, f);
      backward = std::min(backward, b);
      if (f > 0) {
        // With recompute the backward step also redoes the forward.
        ratioLow = std::min(ratioLow, b / f);
        ratioHigh = std::max(ratioHigh, b / f + 1);
      } else if (b > 0) {
        ratioHigh = kInf;
      }
      both = std::min(both, f + b);
    }
    prefixFloor[l + 1] = prefixFloor[l] + both;
    layerFloor.push_back({forward, backward, both});
    if (split) {
      floorForward = std::max(floorForward, forward);
      floorBackward = std::max(floorBackward, backward);
      floorStep = std::max(floorStep, both);
      sumForward += forward;
      sumBackward += backward;
      sumBoth += both;
    } else {
      floorForward = std::max(floorForward, both);
      sumForward += both;
    }
  }
  floorForward = std::max(floorForward, sumForward / numDevices);
  floorBackward = std::max(floorBackward, sumBackward / numDevices);
  floorStep = std::max(floorStep, sumBoth / numDevices);
}

bool Partitioner::classAllowed(unsigned key, unsigned cls) const {
  if (forcedOrder)
    return keyStages[key] < classes.size() &&
           cls == classes.size() - 1 - keyStages[key];
  return usedOf(key, cls) < classes[cls].devices.size();
}

void Partitioner::preparePricing() {
  unsigned numLayers = problem.numLayers();
  unsigned numClasses = classes.size();
  if (pricedFor.empty()) {
    priced.resize(size_t(numClasses) * numLayers * recomputeChoices.size());
    pricedFor.assign(size_t(numClasses) * numLayers, ~0u);
    // Stage costs depend on a device's numbers only (its memory is checked
    // apart): with one class per device, there are far fewer numbers than
    // classes.
    // The first class of the devices each class is priced like.
    llvm::DenseMap<unsigned, unsigned> firstPricedLike;
    for (auto [c, cls] : llvm::enumerate(classes))
      pricingClass.push_back(
          firstPricedLike
              .try_emplace(problem.pricedLike(cls.devices.front()), c)
              .first->second);
  }
  // Devices of a class share host and links unless the classes were
  // simplified, so a class pair prices a cut.
  if (!approximate && cutByClass.empty())
    cutByClass.assign(size_t(numLayers + 1) * (numClasses + 1) * slotsPerKey(),
                      std::numeric_limits<double>::quiet_NaN());
  if (inFlight.empty()) {
    inFlight.resize(numDevices() + 1);
    for (unsigned p = 0; p < inFlight.size(); ++p)
      inFlight[p] = microbatchesInFlight(
          {0, p + 1, options.microbatches, options.schedule, options.training});
  }
}

double Partitioner::cutTime(unsigned j, unsigned c, unsigned from,
                            unsigned next, unsigned to) {
  if (approximate)
    return problem.cutMs(j - 1, from, to);
  unsigned numClasses = classes.size();
  double &x = cutByClass[(size_t(j) * (numClasses + 1) + c) * slotsPerKey() +
                         (forcedOrder ? 0 : next)];
  if (!std::isnan(x))
    return x;
  x = leastLinks
          ? problem.leastCutMs(j - 1, classes[c].devices, classes[next].devices)
          : problem.cutMs(j - 1, from, to);
  return x;
}

void Partitioner::priceStages(size_t slot, unsigned c, unsigned i, unsigned j) {
  // The costs of stages ending at j, per class, start and recompute: they
  // do not depend on the rest of the state but for the stash's microbatches
  // in flight.
  pricedFor[slot] = j;
  unsigned numChoices = recomputeChoices.size();
  for (unsigned r = 0; r < numChoices; ++r) {
    StageCost cost = problem.stageCost(i, j, classes[c].devices.front(), 0,
                                       recomputeChoices[r]);
    const StageMemory &memory = cost.memory;
    priced[slot * numChoices + r] = {
        cost.forwardMs, cost.backwardMs + cost.recomputeMs, cost.busyMs(),
        memory.total() -
            memory.stashPerMicrobatch * memory.microbatchesInFlight,
        memory.stashPerMicrobatch};
  }
}

PlanProblem::Times Partitioner::planTimes(ArrayRef<StagePlan> plan,
                                          bool unhidden) {
  if (!leastLinks)
    return problem.times(plan, unhidden);
  return problem.times(
      plan, unhidden, [&](unsigned cut, unsigned from, unsigned to) {
        return cutTime(cut + 1, classOf[from], from, classOf[to], to);
      });
}

std::vector<double> Partitioner::sumsWithin(ArrayRef<double> limits) {
  assert(!problem.splitBottleneck() && llvm::is_sorted(limits));
  unsigned numLayers = problem.numLayers();
  unsigned numClasses = classes.size();
  unsigned none = numClasses;
  unsigned width = limits.size();
  double transfers = options.training ? 2 : 1;
  size_t numCells = size_t(numLayers + 1) * numKeys() * slotsPerKey();
  std::vector<double> within(numCells * width, kInf);
  std::fill_n(&within[cellIndex(numLayers, 0, none) * width], width, 0.0);
  preparePricing();

  // As search() under each limit, with the same early stops under the
  // largest: stage times only grow as a stage starts earlier.
  SmallVector<double> here(width);
  for (unsigned j = numLayers; j > 0; --j) {
    if (!previousBoundary.empty() && j != numLayers && previousBoundary[j] < 0)
      continue;
    for (unsigned key = 0; key < numKeys(); ++key) {
      unsigned position = keyStages[key];
      if (requiredStages && position >= requiredStages)
        continue;
      auto [firstClass, endClass] = stageClasses(key);
      for (unsigned c = firstClass; c < endClass; ++c) {
        if (!classAllowed(key, c))
          continue;
        unsigned newKey = addStage(key, c), newClass = addedClass(key, c);
        unsigned device = representative(c, forcedOrder ? 0 : usedOf(key, c));
        // Per limit, the best suffix to put the stage before, with its
        // cut's transfer; it only falls as the limit grows.
        std::fill(here.begin(), here.end(), kInf);
        auto [firstNext, endNext] = firstClasses(key);
        for (unsigned next = firstNext; next < endNext; ++next) {
          const double *suffix = &within[cellIndex(j, key, next) * width];
          if (suffix[width - 1] == kInf)
            continue;
          double x = 0;
          if (next != none) {
            unsigned nextUsed = forcedOrder ? 0 : usedOf(key, next) - 1;
            x = cutTime(j, c, device, next, representative(next, nextUsed));
          }
          for (unsigned k = llvm::lower_bound(limits, x) - limits.begin();
               k < width; ++k)
            here[k] = std::min(here[k], suffix[k] + transfers * x);
        }
        unsigned reachable =
            llvm::find_if(here, [](double v) { return v != kInf; }) -
            here.begin();
        if (reachable == width)
          continue;
        int64_t capacity = problem.capacityBytes(device);
        auto [lowest, highest] = startRange(j);
        for (int i = highest; i >= lowest; --i) {
          double *cell = &within[cellIndex(i, newKey, newClass) * width];
          // The limits from `done` up took the fastest recompute that fits
          // within them already.
          unsigned done = width;
          bool longerMayDo = false;
          for (unsigned r = 0; r < recomputeChoices.size() && done; ++r) {
            const Priced &cost = price(c, i, j, r);
            double slowest =
                problem.unhiddenMs(cost.forward, cost.backward, position);
            if (slowest > limits.back())
              continue;
            longerMayDo = true;
            if (cost.fixedBytes + cost.stashBytes * inFlight[position] >
                capacity)
              continue;
            unsigned from = std::max<unsigned>(
                llvm::lower_bound(limits, slowest) - limits.begin(), reachable);
            for (unsigned k = from; k < done; ++k)
              cell[k] = std::min(cell[k], here[k] + cost.busy);
            done = std::min(done, from);
          }
          if (!longerMayDo)
            break;
        }
      }
    }
  }
  return within;
}

Partitioner::StageBounds
Partitioner::leastStages(const SearchLimits &limits) const {
  // Whether layers can form one stage within the limits, each on its
  // fastest device (stage times add their layers' times; a recompute only
  // adds to them). Shrinking a stage keeps it within them, so taking the
  // longest stage each time reaches every boundary with the fewest. The
  // sums add layers in another order than a stage's cost does: a relative
  // slack keeps a stage that meets a limit to the last bit.
  constexpr double kSlack = 1 + 1e-9;
  double forward = limits.forward * kSlack, backward = limits.backward * kSlack,
         step = limits.step * kSlack;
  auto fits = [&](const LayerFloor &sum) {
    if (limits.overflow)
      return true;
    if (split)
      return sum.forward <= forward && sum.backward <= backward &&
             sum.both <= step;
    // An unhidden time is at least the larger of forward and backward.
    if (limits.unhidden)
      return std::max(sum.forward, sum.backward) <= forward;
    return sum.both <= forward;
  };
  int numLayers = problem.numLayers();
  // The fewest stages from boundary `from` to every boundary `step` away.
  auto cover = [&](int from, int step) {
    std::vector<unsigned> least(numLayers + 1, kUnreachableStages);
    least[from] = 0;
    int begin = from, stop = step > 0 ? numLayers : 0;
    for (unsigned count = 1; begin != stop; ++count) {
      LayerFloor sum;
      int end = begin;
      while (end != stop) {
        const LayerFloor &layer = layerFloor[step > 0 ? end : end - 1];
        LayerFloor longer = {sum.forward + layer.forward,
                             sum.backward + layer.backward,
                             sum.both + layer.both};
        if (!fits(longer))
          break;
        sum = longer;
        end += step;
      }
      if (end == begin)
        break; // a layer that fits no stage: nothing reaches past it
      for (int j = begin + step; j != end + step; j += step)
        least[j] = count;
      begin = end;
    }
    return least;
  };
  return {cover(0, 1), cover(numLayers, -1)};
}

std::optional<std::vector<StagePlan>>
Partitioner::searchClasses(const SearchLimits &limits) {
  unsigned numLayers = problem.numLayers();
  unsigned numClasses = classes.size();
  unsigned none = numClasses;
  double transfers = options.training ? 2 : 1;
  size_t numCells = size_t(numLayers + 1) * numKeys() * slotsPerKey();
  // A search whose tables are read afterwards starts from a clean table;
  // the others reset only the states they visit (below).
  bool exported =
      limits.tabulateLargest || limits.everySuffix || limits.freshTables;
  if (exported || value.size() != numCells)
    value.assign(numCells, kInf);
  choice.resize(numCells);
  if (limits.tabulateLargest) {
    largest.assign(numCells, kInf);
    largest[cellIndex(numLayers, 0, none)] = 0;
  }

  preparePricing();

  // A suffix that uses a subset of another's devices, with the same first
  // class and no greater value, leaves the layers before it more devices
  // and no more microbatches in flight: the other state is dominated.
  // Dropping such states keeps the optimum and skips their transitions.
  // (Not with a fixed stage count, where fewer devices may not do; nor
  // when a class's devices differ in their links; nor for unhidden times,
  // which grow as fewer stages follow.)
  bool pruneDominated = !forcedOrder && !approximate && !requiredStages &&
                        !limits.unhidden && !limits.tabulateLargest;
  // leastSubset[key * numClasses + next]: the least value over the states
  // of `key`'s sub-multisets with first class `next`, so that the classes
  // of a key sit side by side.
  std::vector<double> leastSubset(pruneDominated ? numKeys() * numClasses : 0);
  // Over the keys of the given stage counts in turn, so that each key's
  // subsets come before it; keys of fewer stages have no plan within the
  // limits.
  auto dropDominated = [&](unsigned j, unsigned lowStages,
                           unsigned highStages) {
    if (lowStages)
      for (unsigned key : keysWithStages(lowStages - 1, lowStages - 1))
        std::fill_n(&leastSubset[size_t(key) * numClasses], numClasses, kInf);
    for (unsigned key : keysWithStages(lowStages, highStages)) {
      double *least = &leastSubset[size_t(key) * numClasses];
      std::fill_n(least, numClasses, kInf);
      for (unsigned c = 0; c < numClasses; ++c) {
        if (!usedOf(key, c))
          continue;
        if (symmetric) {
          // The subset's key labels the classes its own way.
          size_t at = size_t(key) * numClasses + c;
          const double *subset = &leastSubset[size_t(lessKey[at]) * numClasses];
          const uint8_t *relabel = &lessClass[at * numClasses];
          for (unsigned next = 0; next < numClasses; ++next)
            least[next] = std::min(least[next], subset[relabel[next]]);
          continue;
        }
        const double *subset =
            &leastSubset[size_t(key - radix[c]) * numClasses];
        for (unsigned next = 0; next < numClasses; ++next)
          least[next] = std::min(least[next], subset[next]);
      }
      double *cells = &value[cellIndex(j, key, 0)];
      for (unsigned next = 0; next < numClasses; ++next) {
        double below = least[next];
        least[next] = std::min(below, cells[next]);
        if (below <= cells[next])
          cells[next] = kInf;
      }
    }
  };

  // A suffix with too few stages for its layers has no plan within the
  // limits; one whose devices leave too few for the layers before it is of
  // no use to a whole plan. The search skips both (the tables keep the
  // latter with everySuffix).
  unsigned mostStages = requiredStages ? requiredStages : totalDevices();
  StageBounds counts = leastStages(limits);
  auto completes = [&](unsigned j, unsigned stages) {
    return limits.everySuffix || stages + counts.before[j] <= mostStages;
  };

  // At each inner boundary the search reads and writes only the states
  // of the stage counts its layers allow, between the fewest the layers
  // after need and the most the layers before leave; so it resets only
  // those (the whole table took a tenth of a GPipe search's time on six
  // classes). The last boundary and the first, which the answer is read
  // from, are reset whole.
  if (!exported) {
    size_t slice = size_t(numKeys()) * slotsPerKey();
    std::fill_n(&value[cellIndex(0, 0, 0)], slice, kInf);
    std::fill_n(&value[cellIndex(numLayers, 0, 0)], slice, kInf);
    for (unsigned i = 1; i < numLayers; ++i) {
      if (counts.before[i] > mostStages)
        continue;
      for (unsigned key :
           keysWithStages(counts.after[i], mostStages - counts.before[i]))
        std::fill_n(&value[cellIndex(i, key, 0)], slotsPerKey(), kInf);
    }
  }
  value[cellIndex(numLayers, 0, none)] =
      limits.overflow ? -kInf : 0; // an empty suffix overflows nothing

  for (unsigned j = numLayers; j > 0; --j) {
    if (!previousBoundary.empty() && j != numLayers && previousBoundary[j] < 0)
      continue;
    // The stage counts of the suffixes from j that the search extends.
    unsigned lowStages = counts.after[j];
    unsigned highStages = requiredStages ? requiredStages - 1 : maxKeyStages();
    if (!limits.everySuffix) {
      if (counts.before[j] > mostStages)
        continue;
      highStages = std::min(highStages, mostStages - counts.before[j]);
    }
    if (lowStages > highStages)
      continue;
    if (pruneDominated && j != numLayers)
      dropDominated(j, lowStages, highStages);
    for (unsigned key : keysWithStages(lowStages, highStages)) {
      unsigned position = keyStages[key];
      double *suffixes = &value[cellIndex(j, key, 0)];
      if (std::all_of(suffixes, suffixes + slotsPerKey(),
                      [](double v) { return v == kInf; }))
        continue;
      auto [firstNext, endNext] = firstClasses(key);
      auto [firstClass, endClass] = stageClasses(key);
      for (unsigned c = firstClass; c < endClass; ++c) {
        if (!classAllowed(key, c))
          continue;
        unsigned newKey = addStage(key, c), newClass = addedClass(key, c);
        // The stage's device: the class's next unused one.
        unsigned used = forcedOrder ? 0 : usedOf(key, c);
        unsigned device = representative(c, used);
        // The best suffix to put the stage before, with its cut's transfer:
        // the same for every start of the stage.
        double here = kInf, hereLargest = kInf;
        unsigned bestNext = 0;
        for (unsigned next = firstNext; next < endNext; ++next) {
          double suffix = value[cellIndex(j, key, next)];
          if (suffix == kInf)
            continue;
          double x = 0;
          if (next != none) {
            unsigned nextUsed = forcedOrder ? 0 : usedOf(key, next) - 1;
            x = cutTime(j, c, device, next, representative(next, nextUsed));
            if (!limits.overflow && transferOver(limits, x))
              continue;
          }
          if (limits.tabulateLargest)
            hereLargest = std::min(
                hereLargest, std::max(largest[cellIndex(j, key, next)], x));
          double total = limits.overflow ? suffix : suffix + transfers * x;
          if (total < here) {
            here = total;
            bestNext = next;
          }
        }
        if (here == kInf)
          continue;
        int64_t capacity = problem.capacityBytes(device);
        auto [lowest, highest] = startRange(j);
        for (int i = highest; i >= lowest; --i) {
          // Fewer stages are needed before an earlier start.
          if (!completes(i, position + 1))
            continue;
          // Whether a longer stage could still do: stage times and
          // (with the floor of the layers before) sums only grow as the
          // stage starts earlier. Memory does not always grow.
          bool longerMayDo = false;
          for (unsigned r = 0; r < recomputeChoices.size(); ++r) {
            const Priced &cost = price(c, i, j, r);
            int64_t memory =
                cost.fixedBytes + cost.stashBytes * inFlight[position];
            double candidate;
            if (limits.overflow) {
              candidate = std::max(here, double(memory - capacity));
              longerMayDo = true;
            } else {
              double slowest = limits.unhidden
                                   ? problem.unhiddenMs(cost.forward,
                                                        cost.backward, position)
                                   : cost.busy;
              if (stageOver(limits, cost, slowest))
                continue;
              candidate = here + cost.busy;
              if (candidate + prefixFloor[i] > limits.sumCap)
                continue;
              longerMayDo = true;
              if (memory > capacity)
                continue;
              if (limits.tabulateLargest) {
                double &cell = largest[cellIndex(i, newKey, newClass)];
                cell = std::min(cell, std::max(hereLargest, slowest));
              }
            }
            // A suffix with fewer stages than its layers need is not within
            // the limits: no state the reset above left out is reached.
            assert((exported || limits.overflow ||
                    position + 1 >= counts.after[i]) &&
                   "a suffix with fewer stages than its layers need");
            size_t target = cellIndex(i, newKey, newClass);
            if (candidate < value[target]) {
              value[target] = candidate;
              choice[target] = {j, uint16_t(bestNext),
                                uint8_t(recomputeChoices[r]), uint8_t(c)};
            }
            // The choices come fastest first: the first that fits is best.
            if (!limits.overflow)
              break;
          }
          if (!longerMayDo)
            break;
        }
      }
    }
  }

  double best = kInf;
  unsigned key = 0, cls = none;
  for (unsigned k = 1; k < numKeys(); ++k) {
    if (requiredStages && keyStages[k] != requiredStages)
      continue;
    auto [firstNext, endNext] = firstClasses(k);
    for (unsigned c = firstNext; c < std::min(endNext, none); ++c) {
      double candidate = value[cellIndex(0, k, c)];
      if (candidate < best) {
        best = candidate;
        key = k;
        cls = c;
      }
    }
  }
  if (best == kInf)
    return std::nullopt;

  std::vector<StagePlan> plan;
  unsigned begin = 0;
  // With symmetric keys, the cluster's class of each class as the key of
  // the suffix from `begin` labels it.
  SmallVector<unsigned> real(numClasses), relabeled(numClasses),
      perm(numClasses);
  std::iota(real.begin(), real.end(), 0);
  SmallVector<uint16_t> digits(numClasses);
  while (begin < numLayers) {
    const Choice &taken = choice[cellIndex(begin, key, cls)];
    if (symmetric) {
      // The suffix after the stage is the canonical form of this key less
      // the stage; the search added the stage to it as class
      // `taken.added`, which this key labels `cls`.
      std::copy_n(&keyDigits[size_t(key) * numClasses], numClasses,
                  digits.begin());
      unsigned used = --digits[cls];
      plan.push_back({begin, taken.end, classes[real[cls]].devices[used],
                      Recompute(taken.recompute)});
      canonicalizeHosts(hostGroups, digits, perm);
      unsigned previousKey = keyId(digits);
      std::copy_n(&keyDigits[size_t(previousKey) * numClasses], numClasses,
                  digits.begin());
      ++digits[taken.added];
      canonicalizeHosts(hostGroups, digits, perm);
      assert(perm[taken.added] == cls && "the stage's class relabeled");
      for (unsigned c = 0; c < numClasses; ++c)
        relabeled[c] = real[perm[c]];
      real.swap(relabeled);
      key = previousKey;
    } else {
      unsigned previousKey = forcedOrder ? key - 1 : key - radix[cls];
      unsigned used = forcedOrder ? 0 : usedOf(previousKey, cls);
      plan.push_back({begin, taken.end, representative(cls, used),
                      Recompute(taken.recompute)});
      key = previousKey;
    }
    begin = taken.end;
    cls = taken.next;
  }
  return plan;
}
