//===- LayerGraph.h - the planner's view of a model -------------*- C++ -*-===//
//
// The planner works on a layer graph: the model's ops in program order,
// grouped by ONNX node ("layers"), with the tensors that cross between them
// and the parameters each one reads.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_LAYERGRAPH_H
#define PIPE_PLAN_LAYERGRAPH_H

#include "pipe/Plan/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace pipe {

/// A parameter, or a constant tensor, some layer reads.
struct PlanParam {
  std::string name;
  int64_t bytes = 0;
  /// Trainable parameters have a gradient and optimizer state.
  bool trainable = false;
};

/// A read of a value that may make a training stage stash it. A stage of
/// layers [begin, end) holding `layer` keeps the value for its backward
/// pass under a recompute choice when end > neededBy[choice]
/// (kNeverNeeded: never). A gradient op of layer l reads it: l under every
/// choice. A forward op of layer l reads it: under selective and full
/// recompute, the layer of the first gradient op whose operand that op
/// helps rebuild (the backward pass of a stage ending there recomputes the
/// op, so it needs the value), and kNeverNeeded under none.
struct StashRead {
  static constexpr unsigned kNeverNeeded = ~0u;
  unsigned layer = 0;
  unsigned neededBy[3] = {kNeverNeeded, kNeverNeeded, kNeverNeeded};
};

/// A tensor a layer produces, or a graph input.
struct PlanValue {
  int64_t bytes = 0;
  /// The producing layer; -1 for a graph input.
  int producer = -1;
  /// Whether a contraction computes it (selective recompute keeps those).
  bool contraction = false;
  /// With LayerGraph::derivedStash: the reads that may stash it.
  llvm::SmallVector<StashRead, 1> stashReads;
};

/// One layer: the ops of one ONNX node (or one op, for IR without node
/// names), in program order.
struct PlanLayer {
  std::string name;
  /// The forward cost of each op.
  llvm::SmallVector<OpCost> ops;
  /// The cost of each op of the layer's gradient, when derived (see
  /// LayerGraph::derivedBackward).
  llvm::SmallVector<OpCost> backwardOps;
  /// Bytes of the results a training stage keeps for the backward pass
  /// without recompute (reshapes alias their input and keep nothing): the
  /// stash's price without LayerGraph::derivedStash.
  int64_t stashBytes = 0;
  /// The part of stashBytes that contractions produce.
  int64_t contractionBytes = 0;
  /// The largest single op's activation operands and results (reshapes,
  /// which alias their input, take none).
  int64_t workspaceBytes = 0;
  /// Distinct parameters and values read (indices into LayerGraph).
  llvm::SmallVector<unsigned> params;
  llvm::SmallVector<unsigned> inputs;
};

/// A model as the planner sees it: layers in a topological order.
struct LayerGraph {
  std::vector<PlanLayer> layers;
  std::vector<PlanValue> values;
  std::vector<PlanParam> params;
  /// Whether the layers' backward costs are those of the ops
  /// --pipe-autodiff builds (deriveBackwardCosts); else a layer's backward
  /// pass is priced from its forward ops (twice the FLOPs).
  bool derivedBackward = false;
  /// Whether the values' stashReads are those of the gradient ops
  /// --pipe-autodiff builds (deriveBackwardCosts); then a stage's stash is
  /// exactly what --pipe-insert-recompute and --pipe-split-stages keep.
  /// Else it is priced per layer (PlanLayer::stashBytes).
  bool derivedStash = false;
  /// The layer of each op location of the function it was built from.
  llvm::DenseMap<Location, unsigned> layerOfLocation;
  /// The layer of each op of that function that belongs to one, in order.
  std::vector<std::pair<Operation *, unsigned>> layerOfOp;

  /// Bytes of the values produced at or before layer `c` and read after
  /// it, for every cut c in [0, layers.size() - 1). Values that skip a
  /// stage are relayed by it, so each cut carries all of them.
  std::vector<int64_t> cutBytes() const;
};

/// Builds the layer graph of `func`: consecutive ops with the same ONNX
/// node name form a layer; parameters and constants become PlanParams.
/// Fails, naming the op, on a tensor without a static shape.
llvm::Expected<LayerGraph> buildLayerGraph(func::FuncOp func);

/// Prices the backward pass of `graph`, built from `module`'s @main, with
/// the gradient ops --pipe-autodiff builds for a copy of the module: each
/// gradient op counts for the layer of the forward op it differentiates
/// (the accumulation of the parameters' gradients for the last layer).
/// When the model cannot be differentiated, leaves `graph` as it was and
/// says why in `estimatedBecause`. Fails only on a model the training step
/// refuses (batch normalization statistics it cannot update) or whose
/// backward pass is past what the planner counts.
llvm::Error deriveBackwardCosts(ModuleOp module, LayerGraph &graph,
                                std::string &estimatedBecause);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_LAYERGRAPH_H
