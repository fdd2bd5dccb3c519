//===- PlanDriver.h - `pipe-opt --emit=plan` ---------------------*- C++
//-*-===//
//
// Plans a module for a cluster and writes the result: OUT/plan.json, a table
// of the stages on a stream and, on request, a Chrome-trace timeline.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_PLANDRIVER_H
#define PIPE_PLAN_PLANDRIVER_H

#include "pipe/Plan/Planner.h"
#include "pipe/Plan/Simulator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// The command line's planning options, as given.
struct PlanRequest {
  /// The cluster file; empty for this host's CPU.
  std::string clusterPath;
  PlanOptions options;
  /// ONNX node names (or layer names) to cut after.
  std::vector<std::string> cutAfter;
  /// Device names, one per stage.
  std::vector<std::string> deviceOrder;
  /// A baseline strategy instead of the planner's own cuts; its stages go
  /// to the devices in cluster order unless a device order is given.
  Partition partition = Partition::Auto;
  /// Nodes of the model that compilation folded into constants, to tell
  /// them apart from names that were never there.
  llvm::StringSet<> foldedNodes;
  /// Where the Chrome trace goes; empty for none.
  std::string timelinePath;
};

/// A planned module.
struct PlanResult {
  Cluster cluster;
  LayerGraph graph;
  PipelinePlan plan;
  /// Per stage: its costs, its memory and the tensors it sends on.
  std::vector<StageCost> costs;
  std::vector<int64_t> capacityBytes, sendBytes;
  std::vector<double> sendMs;
  Simulation simulation;
  double lowerBoundMs = 0;
  double plannerSeconds = 0;
  /// How training's backward pass was priced: "derived" from the gradient
  /// ops, or why it was estimated.
  std::string backwardPricing = "derived";
};

/// Plans `module`'s `main` function. Errors name what is at fault: the
/// cluster file, an unknown node or device, or the device that lacks
/// memory.
llvm::Expected<PlanResult> planModule(ModuleOp module,
                                      const PlanRequest &request);

/// Writes `result` as JSON (see docs/planner.md for the keys).
void writePlanJSON(const PlanResult &result, const PlanOptions &options,
                   llvm::raw_ostream &os);

/// Prints a table of the stages.
void printPlanTable(const PlanResult &result, const PlanOptions &options,
                    llvm::raw_ostream &os);

/// Plans `module` and writes OUT/plan.json (created atomically), the table
/// on `table` and the timeline if requested.
llvm::Error emitPlan(ModuleOp module, const PlanRequest &request,
                     llvm::StringRef outDir, llvm::raw_ostream &table);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_PLANDRIVER_H
