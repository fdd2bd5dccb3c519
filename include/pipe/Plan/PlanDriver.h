//===- PlanDriver.h - plan a module, record and print the plan --*- C++ -*-===//
//
// Plans a module for a cluster and writes the result: OUT/plan.json, a table
// of the stages on a stream and, on request, a Chrome-trace timeline.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_PLANDRIVER_H
#define PIPE_PLAN_PLANDRIVER_H

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Plan/Planner.h"
#include "pipe/Plan/Simulator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
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
  /// The ONNX nodes of the model as imported, before compilation folded
  /// some into constants: a cut point among them that no layer has left
  /// only computed constants. Empty: not known.
  llvm::StringSet<> knownNodes;
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

/// The plan as plan.json's object (see docs/planner.md for the keys).
llvm::json::Object planToJSON(const PlanResult &result,
                              const PlanOptions &options);

/// Records the plan in the IR: `pipe.plan` (#pipe.plan) on the module, and
/// on every op of @main that belongs to a layer its stage as `pipe.stage`.
void recordPlan(ModuleOp module, const PlanResult &result,
                const PlanOptions &options);

/// plan.json's object, from the plan recorded in the IR.
llvm::json::Object planToJSON(PlanAttr plan);

/// Prints a table of the stages of plan.json's object.
void printPlanTable(const llvm::json::Object &plan, llvm::raw_ostream &os);

/// Writes the simulated iteration of `result` as a Chrome trace to `path`,
/// atomically.
llvm::Error writeTimeline(const PlanResult &result, llvm::StringRef path);

/// The output folder of `--emit=plan`, checked and made before planning,
/// so that the timeline can go into it: it must be empty, missing, or an
/// earlier output. If the run fails, discard() removes what it made.
class PlanOutputs {
public:
  static llvm::Expected<PlanOutputs> create(llvm::StringRef outDir,
                                            llvm::StringRef timelinePath);

  /// Writes OUT/plan.json (atomically) from the plan recorded in `module`,
  /// and the table on `table`; discards the outputs if that fails.
  llvm::Error write(ModuleOp module, llvm::raw_ostream &table);

  /// Removes the timeline and the folders this run made.
  void discard();

private:
  std::string outDir, timelinePath;
  /// The folders this run made, deepest first.
  llvm::SmallVector<std::string> made;
  bool timelineExisted = false, committed = false;
};

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_PLANDRIVER_H
