//===- RandomInstances.cpp - random planning problems ---------------------===//

#include "pipe/Plan/Testing/RandomInstances.h"

#include <cassert>
#include <cmath>
#include <iterator>

using namespace mlir;
using namespace mlir::pipe;

LayerGraph mlir::pipe::randomLayerGraph(std::mt19937 &rng, unsigned numLayers,
                                        int64_t paramScale) {
  std::uniform_real_distribution<double> unit(0, 1);
  auto logUniform = [&](double lo, double hi) {
    return int64_t(lo * std::pow(hi / lo, unit(rng)));
  };
  LayerGraph graph;
  graph.values.push_back({logUniform(1 << 20, 1 << 24), -1});
  for (unsigned l = 0; l < numLayers; ++l) {
    PlanLayer layer;
    layer.name = "layer" + std::to_string(l);
    OpCost contraction;
    contraction.flops = logUniform(1e9, 1e12);
    contraction.bytesRead = logUniform(1 << 20, 1 << 26);
    contraction.bytesWritten = logUniform(1 << 20, 1 << 26);
    contraction.contraction = true;
    OpCost elementwise;
    elementwise.flops = logUniform(1e6, 1e8);
    elementwise.bytesRead = elementwise.bytesWritten =
        logUniform(1 << 20, 1 << 26);
    layer.ops = {contraction, elementwise};
    layer.contractionBytes = contraction.bytesWritten;
    layer.stashBytes = contraction.bytesWritten + elementwise.bytesWritten;
    layer.workspaceBytes =
        std::max(contraction.bytesWritten, elementwise.bytesWritten);
    graph.params.push_back({"w" + std::to_string(l),
                            logUniform(paramScale / 16, paramScale),
                            unit(rng) < 0.9});
    layer.params.push_back(l);
    // Reads the previous layer's output, and sometimes an older one.
    layer.inputs.push_back(graph.values.size() - 1);
    if (l > 2 && unit(rng) < 0.3)
      layer.inputs.push_back(
          1 + std::uniform_int_distribution<unsigned>(0, l - 2)(rng));
    graph.values.push_back({elementwise.bytesWritten, int(l)});
    graph.layers.push_back(std::move(layer));
  }
  return graph;
}

Cluster mlir::pipe::randomCluster(std::mt19937 &rng, unsigned numDevices) {
  static const char *kinds[] = {"A100-80GB", "V100-32GB", "T4", "L4",
                                "H100-SXM"};
  std::uniform_int_distribution<unsigned> kind(0, 4), host(0, 1);
  std::uniform_real_distribution<double> memory(1, 6);
  Cluster cluster;
  for (unsigned d = 0; d < numDevices; ++d) {
    Device device;
    device.name = "d" + std::to_string(d);
    device.host = "h" + std::to_string(host(rng));
    device.spec = *lookupDeviceKind(kinds[kind(rng)]);
    // The memory the stages get: nothing kept for a runtime.
    device.spec.memoryGB = std::round(memory(rng));
    device.spec.reservedGB = 0;
    cluster.devices.push_back(device);
  }
  return cluster;
}

Cluster mlir::pipe::roundRobinCluster(unsigned numDevices, unsigned numKinds,
                                      unsigned numHosts) {
  static const char *kinds[] = {"A100-80GB", "V100-32GB", "T4", "L4"};
  assert(numKinds >= 1 && numKinds <= std::size(kinds) && numHosts >= 1);
  Cluster cluster;
  for (unsigned d = 0; d < numDevices; ++d)
    cluster.devices.push_back({"d" + std::to_string(d),
                               "h" + std::to_string(d % numHosts),
                               *lookupDeviceKind(kinds[d % numKinds])});
  return cluster;
}
