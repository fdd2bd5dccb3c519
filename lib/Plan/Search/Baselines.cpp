//===- Baselines.cpp - the partitions other pipeline systems choose -------===//
//
// For comparison with the planner, the cut points three common strategies
// would choose; the plans are then priced by the same cost model:
//   - uniform: the same number of layers per stage (Megatron-LM, and
//     DeepSpeed's partition_method="uniform");
//   - parameters: balanced parameter bytes (DeepSpeed's "parameters");
//   - speed-blind: balanced time, assuming every device is like the first
//     (PipeDream's dynamic program, which profiles one kind of device).
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/PlanProblem.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

/// Cuts `weights` into `parts` contiguous non-empty parts minimizing the
/// heaviest part (exact dynamic program); returns the cut points.
static std::vector<unsigned> balancedCuts(ArrayRef<double> weights,
                                          unsigned parts) {
  unsigned n = weights.size();
  std::vector<double> prefix(n + 1, 0);
  for (unsigned i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + weights[i];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // heaviest[k][j]: the best heaviest part splitting [0, j) into k parts.
  std::vector<std::vector<double>> heaviest(parts + 1,
                                            std::vector<double>(n + 1, kInf));
  std::vector<std::vector<unsigned>> from(parts + 1,
                                          std::vector<unsigned>(n + 1, 0));
  heaviest[0][0] = 0;
  for (unsigned k = 1; k <= parts; ++k)
    for (unsigned j = k; j <= n; ++j)
      for (unsigned i = k - 1; i < j; ++i) {
        double value = std::max(heaviest[k - 1][i], prefix[j] - prefix[i]);
        if (value < heaviest[k][j]) {
          heaviest[k][j] = value;
          from[k][j] = i;
        }
      }
  std::vector<unsigned> cuts;
  for (unsigned k = parts, j = n; k > 1; --k) {
    j = from[k][j];
    cuts.push_back(j - 1);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

std::vector<unsigned> mlir::pipe::baselineCuts(const PlanProblem &problem,
                                               Partition strategy,
                                               unsigned numStages) {
  const LayerGraph &graph = problem.graph();
  unsigned numLayers = graph.layers.size();
  numStages = std::min(numStages, numLayers);
  std::vector<double> weights(numLayers, 0);
  switch (strategy) {
  case Partition::Auto:
    return {};
  case Partition::Uniform:
    std::fill(weights.begin(), weights.end(), 1.0);
    break;
  case Partition::Parameters: {
    // Each parameter counts once, at the first layer that reads it.
    std::vector<bool> seen(graph.params.size(), false);
    for (unsigned l = 0; l < numLayers; ++l)
      for (unsigned p : graph.layers[l].params)
        if (!seen[p]) {
          seen[p] = true;
          weights[l] += double(graph.params[p].bytes);
        }
    break;
  }
  case Partition::SpeedBlind:
    for (unsigned l = 0; l < numLayers; ++l)
      weights[l] = problem.layerForwardMs(l, 0) + problem.layerBackwardMs(l, 0);
    break;
  }
  return balancedCuts(weights, numStages);
}
