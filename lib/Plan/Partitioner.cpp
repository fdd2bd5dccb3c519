//===- Partitioner.cpp - the optimal pipeline partition -------------------===//
//
// The objective of a plan with stage times t_1..t_S (forward, backward and
// recompute of one microbatch) and cut transfer times x_1..x_{S-1} is
//
//   J = sum(t) + k * sum(x) + (M - 1) * max(t, x),   k = 2 in training
//
// (the gradients cross each cut back). It is minimized by a walk over the
// Pareto front of (sum, max): a dynamic program finds the least sum among
// the plans whose slowest element is at most B, then B drops just below
// that plan's slowest element, until no plan can beat the best J seen.
//
// The dynamic program runs over suffixes of the layer order. A state is
// (first layer of the suffix, devices used per device class, class of the
// suffix's first stage). Devices of one class (same kind, host and links)
// are interchangeable, so counting them is enough; the class of the next
// stage prices the link of the cut; the number of stages already placed
// after a stage is its distance from the end, which fixes its 1F1B stash.
// See docs/planner.md.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Planner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();

namespace {

/// Interchangeable devices.
struct DeviceClass {
  SmallVector<unsigned> devices;
};

static bool sameSpec(const DeviceSpec &a, const DeviceSpec &b) {
  return a.kind == b.kind && a.peak.fp32 == b.peak.fp32 &&
         a.peak.tf32 == b.peak.tf32 && a.peak.bf16 == b.peak.bf16 &&
         a.peak.fp16 == b.peak.fp16 && a.memoryGB == b.memoryGB &&
         a.memoryBandwidthGBps == b.memoryBandwidthGBps && a.cores == b.cores;
}

/// One run of the dynamic program.
struct SearchLimits {
  /// No forward (backward) step, stage or transfer, may take longer. With
  /// a single bottleneck, `forward` bounds whole stages.
  double forward = kInf, backward = kInf;
  /// Plans whose sum exceeds this are of no use.
  double sumCap = kInf;
  /// Minimize the worst memory overflow instead of time, ignoring memory
  /// limits (to explain why nothing fits).
  bool overflow = false;
};

class Partitioner {
public:
  explicit Partitioner(const PlanProblem &problem);

  /// The plan of least sum under `limits`, if any.
  std::optional<std::vector<StagePlan>> search(const SearchLimits &limits);

  /// Lower bounds on every plan's slowest forward and backward steps.
  double forwardFloor() const { return floorForward; }
  double backwardFloor() const { return floorBackward; }

private:
  unsigned numKeys() const { return keyStages.size(); }
  size_t cellIndex(unsigned layer, unsigned key, unsigned next) const {
    return (size_t(layer) * numKeys() + key) * (classes.size() + 1) + next;
  }
  /// The class a stage at `positionFromEnd` may use from `key`, or all.
  bool classAllowed(unsigned key, unsigned cls) const;
  unsigned addStage(unsigned key, unsigned cls) const {
    return forcedOrder ? key + 1 : key + radix[cls];
  }
  unsigned representative(unsigned cls, unsigned used) const {
    return classes[cls].devices[used];
  }

  const PlanProblem &problem;
  const PlanOptions &options;
  std::vector<DeviceClass> classes;
  bool forcedOrder = false;
  std::vector<unsigned> radix, keyStages;
  /// The stage count a complete plan must have; 0 for any.
  unsigned requiredStages = 0;
  /// With hand-given cuts, the only boundary before each boundary.
  std::vector<int> previousBoundary;
  SmallVector<Recompute, 3> recomputeChoices;
  /// Lower bounds on the time of layers [0, i) (any device).
  std::vector<double> prefixFloor;
  double floorForward = 0, floorBackward = 0;
  bool split = false;
};

} // namespace

Partitioner::Partitioner(const PlanProblem &problem)
    : problem(problem), options(problem.options()) {
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
    // Devices named by an explicit link are not interchangeable with any
    // other.
    std::vector<bool> linked(numDevices, false);
    for (unsigned a = 0; a < numDevices; ++a)
      for (unsigned b = 0; b < numDevices; ++b)
        if (a != b && cluster.hasExplicitLink(a, b))
          linked[a] = true;
    for (unsigned d = 0; d < numDevices; ++d) {
      auto it = llvm::find_if(classes, [&](const DeviceClass &cls) {
        unsigned e = cls.devices.front();
        return !linked[d] && !linked[e] &&
               cluster.devices[e].host == cluster.devices[d].host &&
               sameSpec(cluster.devices[e].spec, cluster.devices[d].spec);
      });
      if (it == classes.end())
        classes.push_back({{d}});
      else
        it->devices.push_back(d);
    }
    unsigned keys = 1;
    for (const DeviceClass &cls : classes) {
      radix.push_back(keys);
      keys *= cls.devices.size() + 1;
    }
    keyStages.assign(keys, 0);
    for (unsigned key = 0; key < keys; ++key)
      for (auto [c, cls] : llvm::enumerate(classes))
        keyStages[key] += (key / radix[c]) % (cls.devices.size() + 1);
    requiredStages = options.stages;
  }

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

  if (!options.training)
    recomputeChoices = {Recompute::None};
  else if (options.recompute)
    recomputeChoices = {*options.recompute};
  else
    recomputeChoices = {Recompute::None, Recompute::Selective,
                        Recompute::Full};

  // Every layer runs somewhere, at best on its fastest device, so every
  // stage is at least as slow as its slowest layer there; and some stage
  // carries at least its share of the total.
  split = problem.splitBottleneck();
  prefixFloor.assign(numLayers + 1, 0);
  double sumForward = 0, sumBackward = 0;
  for (unsigned l = 0; l < numLayers; ++l) {
    double forward = kInf, backward = kInf, both = kInf;
    for (unsigned d = 0; d < numDevices; ++d) {
      double f = problem.layerForwardMs(l, d), b = problem.layerBackwardMs(l, d);
      forward = std::min(forward, f);
      backward = std::min(backward, b);
      both = std::min(both, f + b);
    }
    prefixFloor[l + 1] = prefixFloor[l] + both;
    if (split) {
      floorForward = std::max(floorForward, forward);
      floorBackward = std::max(floorBackward, backward);
      sumForward += forward;
      sumBackward += backward;
    } else {
      floorForward = std::max(floorForward, both);
      sumForward += both;
    }
  }
  floorForward = std::max(floorForward, sumForward / numDevices);
  floorBackward = std::max(floorBackward, sumBackward / numDevices);
}

bool Partitioner::classAllowed(unsigned key, unsigned cls) const {
  if (forcedOrder)
    return keyStages[key] < classes.size() &&
           cls == classes.size() - 1 - keyStages[key];
  return (key / radix[cls]) % (classes[cls].devices.size() + 1) <
         classes[cls].devices.size();
}

std::optional<std::vector<StagePlan>>
Partitioner::search(const SearchLimits &limits) {
  unsigned numLayers = problem.numLayers();
  unsigned numClasses = classes.size();
  unsigned none = numClasses;
  double transfers = options.training ? 2 : 1;
  size_t numCells = size_t(numLayers + 1) * numKeys() * (numClasses + 1);
  std::vector<double> value(numCells, kInf);
  struct Choice {
    uint32_t end = 0;
    uint16_t next = 0;
    uint8_t recompute = 0;
  };
  std::vector<Choice> choice(numCells);
  value[cellIndex(numLayers, 0, none)] =
      limits.overflow ? -kInf : 0; // an empty suffix overflows nothing

  for (unsigned j = numLayers; j > 0; --j) {
    if (!previousBoundary.empty() && j != numLayers &&
        previousBoundary[j] < 0)
      continue;
    for (unsigned key = 0; key < numKeys(); ++key) {
      unsigned position = keyStages[key];
      if (requiredStages && position >= requiredStages)
        continue;
      for (unsigned next = 0; next <= numClasses; ++next) {
        double here = value[cellIndex(j, key, next)];
        if (here == kInf)
          continue;
        for (unsigned c = 0; c < numClasses; ++c) {
          if (!classAllowed(key, c))
            continue;
          unsigned newKey = addStage(key, c);
          // The stage's device: the class's next unused one.
          unsigned used =
              forcedOrder ? 0
                          : (key / radix[c]) % (classes[c].devices.size() + 1);
          unsigned device = representative(c, used);
          double x = 0;
          if (next != none) {
            unsigned nextUsed =
                forcedOrder ? 0
                            : (key / radix[next]) %
                                      (classes[next].devices.size() + 1) -
                                  1;
            x = problem.cutMs(j - 1, device, representative(next, nextUsed));
            if (!limits.overflow &&
                (x > limits.forward || (split && x > limits.backward)))
              continue;
          }
          int lowest = previousBoundary.empty() ? 0 : previousBoundary[j];
          int highest = previousBoundary.empty() ? int(j) - 1 : lowest;
          for (int i = highest; i >= lowest; --i) {
            bool anyInTime = false;
            for (Recompute rc : recomputeChoices) {
              StageCost cost = problem.stageCost(i, j, device, position, rc);
              double candidate;
              if (limits.overflow) {
                double over =
                    double(cost.memory.total() - problem.capacityBytes(device));
                candidate = std::max(here, over);
                anyInTime = true;
              } else {
                double t = cost.busyMs();
                if (split ? cost.forwardMs > limits.forward ||
                                cost.backwardMs + cost.recomputeMs >
                                    limits.backward
                          : t > limits.forward)
                  continue;
                anyInTime = true;
                if (cost.memory.total() > problem.capacityBytes(device))
                  continue;
                candidate = here + t + transfers * x;
                if (candidate + prefixFloor[i] > limits.sumCap)
                  continue;
              }
              size_t target = cellIndex(i, newKey, c);
              if (candidate < value[target]) {
                value[target] = candidate;
                choice[target] = {j, uint16_t(next), uint8_t(rc)};
              }
            }
            // Longer stages only get slower.
            if (!anyInTime)
              break;
          }
        }
      }
    }
  }

  double best = kInf;
  size_t bestCell = 0;
  for (unsigned key = 1; key < numKeys(); ++key) {
    if (requiredStages && keyStages[key] != requiredStages)
      continue;
    for (unsigned c = 0; c < numClasses; ++c) {
      size_t cell = cellIndex(0, key, c);
      if (value[cell] < best) {
        best = value[cell];
        bestCell = cell;
      }
    }
  }
  if (best == kInf)
    return std::nullopt;

  std::vector<StagePlan> plan;
  unsigned begin = 0;
  unsigned key = (bestCell / (numClasses + 1)) % numKeys();
  unsigned cls = bestCell % (numClasses + 1);
  while (begin < numLayers) {
    const Choice &taken = choice[cellIndex(begin, key, cls)];
    unsigned previousKey = forcedOrder ? key - 1 : key - radix[cls];
    unsigned used = forcedOrder ? 0
                                : (previousKey / radix[cls]) %
                                      (classes[cls].devices.size() + 1);
    plan.push_back({begin, taken.end, representative(cls, used),
                    Recompute(taken.recompute)});
    begin = taken.end;
    key = previousKey;
    cls = taken.next;
  }
  return plan;
}

static std::string gib(double bytes) {
  return llvm::formatv("{0:F2} GiB", bytes / 1073741824.0).str();
}

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
      return llvm::createStringError(llvm::formatv(
          "--device-order lists {0} devices for {1} stages",
          options.deviceOrder.size(), stages));
    stages = options.deviceOrder.size();
  }
  if (stages > numDevices)
    return llvm::createStringError(llvm::formatv(
        "{0} stages need {0} devices, but the cluster has {1}", stages,
        numDevices));
  if (stages > numLayers)
    return llvm::createStringError(llvm::formatv(
        "{0} stages need {0} layers, but the model has {1}", stages,
        numLayers));
  if (options.microbatches < 1)
    return llvm::createStringError("--microbatches must be at least 1");
  return llvm::Error::success();
}

llvm::Expected<PipelinePlan> mlir::pipe::planPipeline(const PlanProblem &problem) {
  if (llvm::Error error = checkOptions(problem))
    return std::move(error);
  Partitioner partitioner(problem);
  int64_t m = problem.options().microbatches;

  PipelinePlan best;
  best.objectiveMs = kInf;
  // The walk over the Pareto front: an outer walk down the bound on the
  // slowest forward step and, with split bottlenecks, an inner one down
  // the bound on the slowest backward step. Every plan it skips has a
  // larger sum and no smaller bottleneck than one it has seen.
  bool split = problem.splitBottleneck();
  double floors = partitioner.forwardFloor() + partitioner.backwardFloor();
  SearchLimits limits;
  bool done = false;
  while (!done) {
    limits.backward = kInf;
    double outerSlowest = -kInf;
    bool first = true;
    while (true) {
      std::optional<std::vector<StagePlan>> plan = partitioner.search(limits);
      if (!plan) {
        done = first;
        break;
      }
      PlanProblem::Times times = problem.times(*plan);
      double objective = times.objective(m);
      best.paretoPlans.push_back(*plan);
      if (objective < best.objectiveMs) {
        best.stages = std::move(*plan);
        best.objectiveMs = objective;
      }
      outerSlowest = std::max(outerSlowest, times.slowestForward);
      bool hopeless = times.sum + double(m - 1) * floors >= best.objectiveMs;
      // The first plan has the least sum of every plan left.
      if (first && hopeless)
        done = true;
      first = false;
      if (!split || m == 1 || hopeless ||
          times.slowestBackward <= partitioner.backwardFloor())
        break;
      limits.backward = std::nextafter(times.slowestBackward, 0.0);
      limits.sumCap = best.objectiveMs - double(m - 1) * floors;
    }
    if (m == 1 || outerSlowest <= partitioner.forwardFloor())
      break;
    limits.forward = std::nextafter(outerSlowest, 0.0);
    limits.sumCap = best.objectiveMs - double(m - 1) * floors;
  }
  if (!best.stages.empty())
    return best;

  // Nothing fits: find the plan that misses by the least, and say where.
  SearchLimits overflow;
  overflow.overflow = true;
  std::optional<std::vector<StagePlan>> closest = partitioner.search(overflow);
  if (!closest)
    return llvm::createStringError("no plan meets the given constraints");
  double worst = -kInf;
  std::string where;
  for (auto [s, stage] : llvm::enumerate(*closest)) {
    StageMemory memory = problem.stageMemory(
        stage.begin, stage.end, closest->size() - 1 - s, stage.recompute);
    int64_t capacity = problem.capacityBytes(stage.device);
    double over = double(memory.total() - capacity);
    if (over > worst) {
      worst = over;
      const Device &device = problem.cluster().devices[stage.device];
      where = llvm::formatv(
          "device '{0}' ({1}, {2}) would hold stage {3} ('{4}' to '{5}') "
          "needing {6}: {7} short",
          device.name, device.spec.kind, gib(double(capacity)), s,
          problem.graph().layers[stage.begin].name,
          problem.graph().layers[stage.end - 1].name,
          gib(double(memory.total())), gib(over));
    }
  }
  return llvm::createStringError(
      "the model does not fit the cluster's memory; in the plan that comes "
      "closest, " +
      where);
}

std::optional<PipelinePlan>
mlir::pipe::exhaustivePlan(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  unsigned numLayers = problem.numLayers();
  unsigned numDevices = problem.numDevices();
  SmallVector<Recompute, 3> choices;
  if (!options.training)
    choices = {Recompute::None};
  else if (options.recompute)
    choices = {*options.recompute};
  else
    choices = {Recompute::None, Recompute::Selective, Recompute::Full};

  std::optional<PipelinePlan> best;
  std::vector<StagePlan> plan;
  std::vector<bool> taken(numDevices, false);

  // For a fixed cut set and device sequence, each stage's fastest recompute
  // that fits is best for both the sum and the maximum.
  auto evaluate = [&]() {
    unsigned numStages = plan.size();
    for (unsigned s = 0; s < numStages; ++s) {
      bool fits = false;
      for (Recompute rc : choices) {
        StageMemory memory = problem.stageMemory(
            plan[s].begin, plan[s].end, numStages - 1 - s, rc);
        if (memory.total() <= problem.capacityBytes(plan[s].device)) {
          plan[s].recompute = rc;
          fits = true;
          break;
        }
      }
      if (!fits)
        return;
    }
    double objective = problem.objectiveMs(plan);
    if (!best || objective < best->objectiveMs) {
      best = PipelinePlan();
      best->stages = plan;
      best->objectiveMs = objective;
    }
  };

  // Place devices on the stages of a cut set, in every order.
  std::function<void(unsigned)> placeDevices = [&](unsigned s) {
    if (s == plan.size())
      return evaluate();
    for (unsigned d = 0; d < numDevices; ++d) {
      if (taken[d])
        continue;
      if (!options.deviceOrder.empty() && d != options.deviceOrder[s])
        continue;
      taken[d] = true;
      plan[s].device = d;
      placeDevices(s + 1);
      taken[d] = false;
    }
  };

  std::vector<unsigned> cutSet;
  std::function<void(unsigned)> chooseCuts = [&](unsigned from) {
    unsigned numStages = cutSet.size() + 1;
    bool stagesOk = !options.stages || options.stages == numStages;
    bool cutsOk =
        options.cutAfter.empty() ||
        std::vector<unsigned>(cutSet.begin(), cutSet.end()) == options.cutAfter;
    bool orderOk = options.deviceOrder.empty() ||
                   options.deviceOrder.size() == numStages;
    if (stagesOk && cutsOk && orderOk && numStages <= numDevices) {
      plan.assign(numStages, StagePlan());
      unsigned begin = 0;
      for (unsigned s = 0; s < numStages; ++s) {
        plan[s].begin = begin;
        plan[s].end = s < cutSet.size() ? cutSet[s] + 1 : numLayers;
        begin = plan[s].end;
      }
      placeDevices(0);
    }
    if (numStages >= numDevices)
      return;
    for (unsigned cut = from; cut + 1 < numLayers; ++cut) {
      cutSet.push_back(cut);
      chooseCuts(cut + 1);
      cutSet.pop_back();
    }
  };
  chooseCuts(0);
  return best;
}
