//===- ExhaustivePlan.cpp - every plan, for the tests ---------------------===//
//
// The reference the partitioner's tests compare it with: every cut set,
// device sequence and recompute, priced by the same objective.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Testing/ExhaustivePlan.h"

#include <functional>

using namespace mlir;
using namespace mlir::pipe;

std::optional<PipelinePlan>
mlir::pipe::exhaustivePlan(const PlanProblem &problem) {
  const PlanOptions &options = problem.options();
  unsigned numLayers = problem.numLayers();
  unsigned numDevices = problem.numDevices();
  std::optional<PipelinePlan> best;
  std::vector<StagePlan> plan;
  std::vector<bool> taken(numDevices, false);

  // For a fixed cut set and device sequence, each stage's fastest recompute
  // that fits is best for both the sum and the maximum.
  auto evaluate = [&]() {
    if (!fitRecompute(problem, plan))
      return;
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
    bool orderOk =
        options.deviceOrder.empty() || options.deviceOrder.size() == numStages;
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
