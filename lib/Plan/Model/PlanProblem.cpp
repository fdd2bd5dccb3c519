//===- PlanProblem.cpp - per-range stage costs for the planner ------------===//
//
// Prefix sums over layers (per device) and [begin][end] tables make every
// stage's time and memory an O(1) lookup, which is what lets the
// partitioner try every stage.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/PlanProblem.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

/// Bytes the optimizer update reads and writes per byte of parameters:
/// SGD reads the weight and gradient and writes the weight (3); momentum
/// also reads and writes its buffer (5); Adam both moments (7).
static int64_t optimizerTraffic(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::None:
    return 0;
  case Optimizer::SGD:
    return 3;
  case Optimizer::SGDMomentum:
    return 5;
  case Optimizer::Adam:
    return 7;
  }
  return 0;
}

PlanProblem::PlanProblem(const LayerGraph &graph, const Cluster &cluster,
                         const PlanOptions &options)
    : graphRef(graph), clusterRef(cluster), opts(options),
      cuts(graph.cutBytes()) {
  unsigned numLayers = graph.layers.size();
  unsigned numDevices = cluster.devices.size();
  fwd.assign(numDevices, std::vector<double>(numLayers + 1, 0));
  bwd = cheapFwd = fwd;
  linkPrices.reserve(size_t(numDevices) * numDevices);
  for (unsigned from = 0; from < numDevices; ++from)
    for (unsigned to = 0; to < numDevices; ++to) {
      LinkSpec link = cluster.link(from, to);
      linkPrices.push_back({link.latencyUs * 1e-3, link.bandwidthGBps * 1e9});
    }
  pricedAs.resize(numDevices);
  for (unsigned d = 0; d < numDevices; ++d) {
    const DeviceSpec &spec = cluster.devices[d].spec;
    // Devices of one kind share their costs.
    unsigned e = 0;
    while (e < d && !sameSpec(cluster.devices[e].spec, spec))
      ++e;
    pricedAs[d] = e;
    if (e < d) {
      fwd[d] = fwd[e];
      bwd[d] = bwd[e];
      cheapFwd[d] = cheapFwd[e];
      continue;
    }
    for (unsigned l = 0; l < numLayers; ++l) {
      double f = 0, b = 0, cheap = 0;
      for (const OpCost &cost : graph.layers[l].ops) {
        // Ops that move nothing (reshapes alias their input) cost nothing:
        // the stage program emits no kernel for them.
        if (!cost.flops && !cost.bytesRead && !cost.bytesWritten)
          continue;
        double t = estimateOpTimeMs(cost, spec, opts.precision);
        f += t;
        if (!cost.contraction)
          cheap += t;
        if (opts.training && !graph.derivedBackward)
          b += estimateOpTimeMs(backwardCost(cost), spec, opts.precision);
      }
      if (opts.training && graph.derivedBackward)
        for (const OpCost &cost : graph.layers[l].backwardOps)
          b += estimateOpTimeMs(cost, spec, opts.precision);
      fwd[d][l + 1] = fwd[d][l] + f;
      bwd[d][l + 1] = bwd[d][l] + b;
      cheapFwd[d][l + 1] = cheapFwd[d][l] + cheap;
    }
  }

  prefixFlops.assign(numLayers + 1, 0);
  prefixOps = prefixStash = prefixContraction = prefixFlops;
  for (unsigned l = 0; l < numLayers; ++l) {
    const PlanLayer &layer = graph.layers[l];
    int64_t flops = 0;
    for (const OpCost &cost : layer.ops)
      flops += cost.flops;
    prefixFlops[l + 1] = prefixFlops[l] + flops;
    if (opts.training && graph.derivedBackward)
      for (const OpCost &cost : layer.backwardOps)
        backwardFlops += double(cost.flops);
    else if (opts.training)
      backwardFlops += 2.0 * double(flops);
    prefixOps[l + 1] = prefixOps[l] + layer.ops.size();
    prefixStash[l + 1] = prefixStash[l] + layer.stashBytes;
    prefixContraction[l + 1] = prefixContraction[l] + layer.contractionBytes;
  }

  workspaceMax.emplace_back();
  for (const PlanLayer &layer : graph.layers)
    workspaceMax.back().push_back(layer.workspaceBytes);
  for (unsigned width = 2; width <= numLayers; width *= 2) {
    const std::vector<int64_t> &below = workspaceMax.back();
    std::vector<int64_t> level(numLayers - width + 1);
    for (unsigned i = 0; i + width <= numLayers; ++i)
      level[i] = std::max(below[i], below[i + width / 2]);
    workspaceMax.push_back(std::move(level));
  }

  if (opts.training && graph.derivedStash) {
    readsAt.resize(numLayers);
    for (auto [v, value] : llvm::enumerate(graph.values))
      for (const StashRead &read : value.stashReads)
        readsAt[read.layer].push_back({unsigned(v), read});
  }

  // Distinct parameters and stage inputs of every range [i, j): sweep j
  // for each i. Past kMaxTableLayers the [i][j] tables would take too much
  // memory, and ranges are summed when asked for.
  if (numLayers > kMaxTableLayers)
    return;
  Stamps stamps = freshStamps();
  size_t width = numLayers + 1;
  paramAll.assign(width * width, 0);
  paramTrainable = inputs = paramAll;
  for (unsigned i = 0; i < numLayers; ++i) {
    RangeBytes sums;
    for (unsigned j = i; j < numLayers; ++j) {
      addLayer(sums, stamps, i, j);
      paramAll[i * width + j + 1] = sums.all;
      paramTrainable[i * width + j + 1] = sums.trainable;
      inputs[i * width + j + 1] = sums.inputs;
    }
  }
  if (readsAt.empty() || numLayers > kMaxStashTableLayers)
    return;
  // The stash of every range [i, j) under each recompute choice the plan
  // may take, and what it rebuilds under those that recompute: sweeping i
  // down, a value counts for every j past the least neededBy of its reads
  // in layers i and later.
  SmallVector<StashKind> kinds;
  for (Recompute recompute : recomputeChoices()) {
    kinds.push_back({recompute, /*rebuilt=*/false});
    if (recompute != Recompute::None)
      kinds.push_back({recompute, /*rebuilt=*/true});
  }
  for (StashKind kind : kinds) {
    std::vector<int64_t> &table = stashTables[kind.index()];
    table.assign(width * width, 0);
    std::vector<unsigned> least(graph.values.size(), StashRead::kNeverNeeded);
    std::vector<unsigned> read;
    std::vector<int64_t> delta(width + 1);
    for (unsigned i = numLayers; i-- > 0;) {
      for (const auto &[v, stashRead] : readsAt[i]) {
        unsigned neededBy = kind.neededBy(stashRead);
        if (neededBy >= least[v])
          continue;
        if (least[v] == StashRead::kNeverNeeded)
          read.push_back(v);
        least[v] = neededBy;
      }
      std::fill(delta.begin(), delta.end(), 0);
      for (unsigned v : read)
        if (counts(graph.values[v], i, kind))
          delta[least[v] + 1] += graph.values[v].bytes;
      int64_t running = 0;
      for (unsigned j = i + 1; j <= numLayers; ++j)
        table[i * width + j] = running += delta[j];
    }
  }
}

bool PlanProblem::counts(const PlanValue &value, unsigned begin,
                         StashKind kind) const {
  bool received = value.producer < int(begin);
  bool kept = true;
  switch (kind.recompute) {
  case Recompute::None:
    break;
  case Recompute::Selective:
    kept = received || value.contraction;
    break;
  case Recompute::Full:
    kept = received;
    break;
  }
  return kind.rebuilt ? !kept : kept;
}

int64_t PlanProblem::derivedBytes(unsigned begin, unsigned end,
                                  StashKind kind) const {
  const std::vector<int64_t> &table = stashTables[kind.index()];
  if (!table.empty())
    return table[size_t(begin) * (numLayers() + 1) + end];
  llvm::DenseSet<unsigned> counted;
  int64_t bytes = 0;
  for (unsigned l = begin; l < end; ++l)
    for (const auto &[v, read] : readsAt[l])
      if (kind.neededBy(read) < end && counts(graphRef.values[v], begin, kind) &&
          counted.insert(v).second)
        bytes += graphRef.values[v].bytes;
  return bytes;
}

PlanProblem::Stamps PlanProblem::freshStamps() const {
  return {std::vector<unsigned>(graphRef.params.size(), ~0u),
          std::vector<unsigned>(graphRef.values.size(), ~0u)};
}

void PlanProblem::addLayer(RangeBytes &sums, Stamps &stamps, unsigned begin,
                           unsigned layerIndex) const {
  const PlanLayer &layer = graphRef.layers[layerIndex];
  for (unsigned p : layer.params) {
    if (stamps.params[p] == begin)
      continue;
    stamps.params[p] = begin;
    sums.all += graphRef.params[p].bytes;
    if (graphRef.params[p].trainable)
      sums.trainable += graphRef.params[p].bytes;
  }
  for (unsigned v : layer.inputs) {
    const PlanValue &value = graphRef.values[v];
    if (value.producer >= int(begin) || stamps.values[v] == begin)
      continue;
    stamps.values[v] = begin;
    sums.inputs += value.bytes;
  }
}

PlanProblem::RangeBytes PlanProblem::rangeBytes(unsigned begin,
                                                unsigned end) const {
  RangeBytes sums;
  if (!paramAll.empty()) {
    size_t at = size_t(begin) * (numLayers() + 1) + end;
    return {paramAll[at], paramTrainable[at], inputs[at]};
  }
  // Stamps of this call's own: searches on other threads price stages too.
  Stamps stamps = freshStamps();
  for (unsigned l = begin; l < end; ++l)
    addLayer(sums, stamps, begin, l);
  return sums;
}

StageMemory PlanProblem::stageMemory(unsigned begin, unsigned end,
                                     unsigned positionFromEnd,
                                     Recompute recompute) const {
  StageMemory memory;
  RangeBytes range = rangeBytes(begin, end);
  memory.parameters = range.all;
  // The largest workspace in [begin, end): two overlapping power-of-two
  // windows of the sparse table.
  unsigned level = llvm::Log2_32(end - begin);
  memory.workspace = std::max(workspaceMax[level][begin],
                              workspaceMax[level][end - (1u << level)]);
  StagePosition position{0, positionFromEnd + 1, opts.microbatches,
                         opts.schedule, opts.training};
  memory.microbatchesInFlight = microbatchesInFlight(position);
  if (!opts.training)
    return memory;
  int64_t trainable = range.trainable;
  memory.gradients = trainable;
  switch (opts.optimizer) {
  case Optimizer::None:
  case Optimizer::SGD:
    break;
  case Optimizer::SGDMomentum:
    memory.optimizerState = trainable;
    break;
  case Optimizer::Adam:
    memory.optimizerState = 2 * trainable;
    break;
  }
  if (!readsAt.empty()) {
    // What the compiled stage keeps, and what its backward pass rebuilds
    // of what it reads (the results of its pipe.recompute region), one
    // microbatch at a time.
    memory.stashPerMicrobatch = derivedBytes(begin, end, {recompute, false});
    if (recompute != Recompute::None)
      memory.recomputeBuffer = derivedBytes(begin, end, {recompute, true});
    return memory;
  }
  int64_t all = prefixStash[end] - prefixStash[begin];
  int64_t contraction = prefixContraction[end] - prefixContraction[begin];
  int64_t in = range.inputs;
  switch (recompute) {
  case Recompute::None:
    // The stage's inputs too: the backward pass reads them (a weight's
    // gradient needs the activation the weight multiplied).
    memory.stashPerMicrobatch = in + all;
    break;
  case Recompute::Selective:
    memory.stashPerMicrobatch = in + contraction;
    memory.recomputeBuffer = all - contraction;
    break;
  case Recompute::Full:
    memory.stashPerMicrobatch = in;
    memory.recomputeBuffer = all;
    break;
  }
  return memory;
}

StageCost PlanProblem::stageCost(unsigned begin, unsigned end, unsigned device,
                                 unsigned positionFromEnd,
                                 Recompute recompute) const {
  StageCost cost;
  cost.forwardMs = fwd[device][end] - fwd[device][begin];
  cost.backwardMs = bwd[device][end] - bwd[device][begin];
  if (opts.training) {
    if (recompute == Recompute::Selective)
      cost.recomputeMs = cheapFwd[device][end] - cheapFwd[device][begin];
    else if (recompute == Recompute::Full)
      cost.recomputeMs = cost.forwardMs;
    const DeviceSpec &spec = clusterRef.devices[device].spec;
    int64_t traffic =
        optimizerTraffic(opts.optimizer) * rangeBytes(begin, end).trainable;
    if (traffic)
      cost.optimizerMs =
          traffic / (spec.memoryBandwidthGBps * 1e9 * 0.80) * 1e3 +
          (spec.isCPU() ? 1e-3 : 5e-3);
  }
  cost.memory = stageMemory(begin, end, positionFromEnd, recompute);
  cost.flops = prefixFlops[end] - prefixFlops[begin];
  cost.ops = prefixOps[end] - prefixOps[begin];
  return cost;
}

double PlanProblem::cutMs(unsigned cut, unsigned from, unsigned to) const {
  // As transferTimeMs, without looking the link up.
  const auto &[latencyMs, bytesPerSecond] =
      linkPrices[size_t(from) * numDevices() + to];
  return latencyMs + double(cuts[cut]) / bytesPerSecond * 1e3;
}

double PlanProblem::classCutMs(unsigned cut, ArrayRef<unsigned> from,
                               ArrayRef<unsigned> to) const {
  bool same = from.front() == to.front();
  return cutMs(cut, from.front(), same && to.size() > 1 ? to[1] : to.front());
}

std::vector<StagePlan>
PlanProblem::onNearDevices(std::vector<StagePlan> plan) const {
  std::vector<bool> taken(numDevices());
  for (unsigned s = 0; s < plan.size(); ++s) {
    unsigned like = pricedLike(plan[s].device);
    unsigned best = numDevices();
    double fastest = std::numeric_limits<double>::infinity();
    for (unsigned d = 0; d < numDevices(); ++d) {
      if (taken[d] || pricedLike(d) != like)
        continue;
      double x = s ? cutMs(plan[s - 1].end - 1, plan[s - 1].device, d) : 0;
      if (best == numDevices() || x < fastest) {
        fastest = x;
        best = d;
      }
    }
    assert(best < numDevices() && "no device left with the stage's numbers");
    if (best == numDevices())
      best = plan[s].device;
    plan[s].device = best;
    taken[best] = true;
  }
  return plan;
}

double PlanProblem::leastCutMs(unsigned cut, ArrayRef<unsigned> from,
                               ArrayRef<unsigned> to) const {
  double least = std::numeric_limits<double>::infinity();
  for (unsigned a : from)
    for (unsigned b : to)
      if (a != b)
        least = std::min(least, cutMs(cut, a, b));
  return least;
}

int64_t PlanProblem::capacityBytes(unsigned device) const {
  return int64_t(clusterRef.devices[device].spec.capacityGB() * 1073741824.0);
}

double PlanProblem::lowerBoundMs() const {
  // Forward and backward FLOPs (the backward as priced: derived or twice
  // the forward), each at the best efficiency and peak any op gets.
  double flops =
      (double(prefixFlops[numLayers()]) + backwardFlops) * opts.microbatches;
  double rate = 0;
  for (const Device &device : clusterRef.devices)
    rate += 0.80 *
            std::max(peakTflops(device.spec, opts.precision),
                     device.spec.peak.fp32) *
            1e12;
  return rate > 0 ? flops / rate * 1e3 : 0;
}

bool PlanProblem::splitBottleneck() const {
  return opts.training && opts.schedule == Schedule::GPipe;
}

PlanProblem::Times PlanProblem::times(ArrayRef<StagePlan> stages, bool unhidden,
                                      CutPrice cutPrice) const {
  Times result;
  bool split = splitBottleneck();
  double transfers = opts.training ? 2 : 1;
  unsigned numStages = stages.size();
  for (unsigned s = 0; s < numStages; ++s) {
    const StagePlan &stage = stages[s];
    StageCost cost = stageCost(stage.begin, stage.end, stage.device,
                               numStages - 1 - s, stage.recompute);
    result.sum += cost.busyMs();
    if (split) {
      result.slowestForward = std::max(result.slowestForward, cost.forwardMs);
      result.slowestBackward =
          std::max(result.slowestBackward, cost.backwardMs + cost.recomputeMs);
      result.slowestStep = std::max(result.slowestStep, cost.busyMs());
    } else {
      double slowest = unhidden ? unhiddenMs(cost.forwardMs,
                                             cost.backwardMs + cost.recomputeMs,
                                             numStages - 1 - s)
                                : cost.busyMs();
      result.slowestForward = std::max(result.slowestForward, slowest);
    }
    if (s + 1 < numStages) {
      double x =
          cutPrice ? cutPrice(stage.end - 1, stage.device, stages[s + 1].device)
                   : cutMs(stage.end - 1, stage.device, stages[s + 1].device);
      result.sum += transfers * x;
      result.slowestForward = std::max(result.slowestForward, x);
      if (split) {
        result.slowestBackward = std::max(result.slowestBackward, x);
        result.slowestStep = std::max(result.slowestStep, 2 * x);
      }
    }
  }
  return result;
}

bool mlir::pipe::fitsMemory(const PlanProblem &problem,
                            ArrayRef<StagePlan> plan) {
  for (auto [s, stage] : llvm::enumerate(plan))
    if (problem
            .stageMemory(stage.begin, stage.end, plan.size() - 1 - s,
                         stage.recompute)
            .total() > problem.capacityBytes(stage.device))
      return false;
  return true;
}

SmallVector<Recompute, 3> PlanProblem::recomputeChoices() const {
  if (!opts.training)
    return {Recompute::None};
  if (opts.recompute)
    return {*opts.recompute};
  return {Recompute::None, Recompute::Selective, Recompute::Full};
}

std::optional<Recompute>
mlir::pipe::fastestFittingRecompute(const PlanProblem &problem, unsigned begin,
                                    unsigned end, unsigned positionFromEnd,
                                    unsigned device) {
  for (Recompute recompute : problem.recomputeChoices())
    if (problem.stageMemory(begin, end, positionFromEnd, recompute).total() <=
        problem.capacityBytes(device))
      return recompute;
  return std::nullopt;
}

bool mlir::pipe::fitRecompute(const PlanProblem &problem,
                              std::vector<StagePlan> &plan) {
  for (auto [s, stage] : llvm::enumerate(plan)) {
    std::optional<Recompute> recompute = fastestFittingRecompute(
        problem, stage.begin, stage.end, plan.size() - 1 - s, stage.device);
    if (!recompute)
      return false;
    stage.recompute = *recompute;
  }
  return true;
}
