//===- RandomInstances.h - random planning problems -------------*- C++ -*-===//
//
// Random layer graphs and clusters for the planner's tests and its scaling
// benchmark (bench/plan_scaling.cpp): chains with skip connections, costs
// over three orders of magnitude, and mixed device kinds and memories.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_TESTING_RANDOMINSTANCES_H
#define PIPE_PLAN_TESTING_RANDOMINSTANCES_H

#include "pipe/Plan/PlanProblem.h"

#include <random>

namespace mlir {
namespace pipe {

/// A random chain of `numLayers` layers with skip connections (a DAG whose
/// cuts carry several tensors), parameters of paramScale/16 to paramScale
/// bytes, and costs spread over three orders of magnitude.
LayerGraph randomLayerGraph(std::mt19937 &rng, unsigned numLayers,
                            int64_t paramScale);

/// A random cluster of `numDevices` devices of mixed kinds on one or two
/// hosts, with 1 to 6 GiB each, so that some plans do not fit.
Cluster randomCluster(std::mt19937 &rng, unsigned numDevices);

/// The scaling benchmark's cluster: device d is of the (d mod numKinds)-th
/// of A100-80GB, V100-32GB, T4 and L4, on host d mod numHosts.
Cluster roundRobinCluster(unsigned numDevices, unsigned numKinds,
                          unsigned numHosts);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_TESTING_RANDOMINSTANCES_H
