//===- LayerGraph.cpp - the planner's view of a model ---------------------===//
//
// Groups a function's ops into layers (one per ONNX node), and records the
// bytes each layer keeps, reads and passes on.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Planner.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pipe;

/// The ONNX node an op was imported from, or empty.
static StringRef nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().strref();
  return {};
}

static std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return text;
}

/// The planner's byte and FLOP counts stay well within int64_t: a model's
/// tensors take at most 64 TiB together (so a stage's stash, times 65,536
/// microbatches in flight, still fits), and its ops at most 2^60 FLOPs per
/// microbatch (GPT-3 takes about 2^54 per microbatch of 16,384 tokens).
static constexpr int64_t kMaxModelBytes = int64_t(1) << 46;
static constexpr int64_t kMaxModelFlops = int64_t(1) << 60;

llvm::Expected<LayerGraph> mlir::pipe::buildLayerGraph(func::FuncOp func) {
  LayerGraph graph;
  auto module = func->getParentOfType<ModuleOp>();
  llvm::DenseMap<Value, unsigned> valueIds;
  llvm::StringMap<unsigned> paramIds;
  llvm::DenseMap<Operation *, unsigned> constantIds;

  // Every tensor's bytes, checked, and the model's in all.
  int64_t modelBytes = 0, modelFlops = 0;
  auto tooLarge = [](const llvm::Twine &what, const char *past) {
    return llvm::createStringError(what + ": the model's " + past +
                                   ", more than the planner counts");
  };
  auto count = [&](Type type, llvm::function_ref<std::string()> what)
      -> llvm::Expected<std::optional<int64_t>> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return std::nullopt;
    std::optional<int64_t> bytes = checkedTensorBytes(tensor);
    if (!bytes || *bytes > kMaxModelBytes ||
        (modelBytes += *bytes) > kMaxModelBytes) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << what() << " (" << type << ")";
      return tooLarge(text, "tensors take more than 64 TiB");
    }
    return bytes;
  };

  for (BlockArgument arg : func.getArguments()) {
    // By its ONNX name where it has one.
    std::string input = "graph input " + std::to_string(arg.getArgNumber());
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "pipe.name"))
      input = "graph input '" + name.str() + "'";
    llvm::Expected<std::optional<int64_t>> bytes =
        count(arg.getType(), [&] { return input; });
    if (!bytes)
      return bytes.takeError();
    if (!*bytes)
      return llvm::createStringError(
          input + " has no static shape; give one with --input-shape");
    valueIds[arg] = graph.values.size();
    graph.values.push_back({**bytes, -1});
  }

  // Parameters and constants are not layers: the layers that read them
  // hold them.
  llvm::DenseMap<Value, unsigned> paramOfValue;
  std::string lastNode;
  unsigned unnamed = 0;
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      break;
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      StringRef name = ref.getName();
      auto [it, inserted] = paramIds.try_emplace(name, graph.params.size());
      if (inserted) {
        llvm::Expected<std::optional<int64_t>> bytes = count(
            ref.getType(), [&] { return ("parameter '" + name + "'").str(); });
        if (!bytes)
          return bytes.takeError();
        auto decl = module ? module.lookupSymbol<ParameterOp>(name) : nullptr;
        graph.params.push_back({name.str(), tensorBytes(ref.getType()),
                                decl && decl.getTrainable()});
      }
      paramOfValue[ref.getResult()] = it->second;
      continue;
    }
    if (isa<ConstantOp>(op)) {
      llvm::Expected<std::optional<int64_t>> bytes =
          count(op.getResult(0).getType(),
                [&] { return "the constant of " + describe(&op); });
      if (!bytes)
        return bytes.takeError();
      unsigned id = graph.params.size();
      graph.params.push_back(
          {"constant", tensorBytes(op.getResult(0).getType()), false});
      paramOfValue[op.getResult(0)] = id;
      continue;
    }
    for (Value result : op.getResults()) {
      llvm::Expected<std::optional<int64_t>> bytes = count(
          result.getType(), [&] { return "a result of " + describe(&op); });
      if (!bytes)
        return bytes.takeError();
      if (!*bytes)
        return llvm::createStringError(describe(&op) +
                                       " has a result without a static shape");
    }

    StringRef node = nodeName(&op);
    if (node.empty() || node != lastNode || graph.layers.empty()) {
      PlanLayer layer;
      layer.name =
          node.empty()
              ? (op.getName().stripDialect() + "_" + llvm::Twine(unnamed++))
                    .str()
              : node.str();
      graph.layers.push_back(std::move(layer));
    }
    lastNode = node.str();
    unsigned layerIndex = graph.layers.size() - 1;
    PlanLayer &layer = graph.layers.back();

    OpCost cost = estimateOpCost(&op);
    if (cost.flops > kMaxModelFlops ||
        (modelFlops += cost.flops) > kMaxModelFlops)
      return tooLarge(describe(&op),
                      "ops take more than 2^60 FLOPs per microbatch");
    layer.ops.push_back(cost);
    graph.layerOfLocation.try_emplace(op.getLoc(), layerIndex);
    graph.layerOfOp.push_back({&op, layerIndex});
    int64_t results = 0;
    for (Value result : op.getResults())
      results += tensorBytes(result.getType());
    // A reshape aliases its input: it keeps nothing and takes no workspace.
    if (!isa<ReshapeOp>(op)) {
      // While an op runs, its activation operands and results are live (in
      // the backward pass, their gradients). A reshaped parameter is the
      // parameter, counted as one already.
      int64_t live = results;
      SmallVector<Value> counted;
      for (Value operand : op.getOperands()) {
        Value aliased = operand;
        while (auto reshape = aliased.getDefiningOp<ReshapeOp>())
          aliased = reshape.getInput();
        if (!paramOfValue.count(aliased) &&
            !llvm::is_contained(counted, operand)) {
          counted.push_back(operand);
          live += tensorBytes(operand.getType());
        }
      }
      layer.workspaceBytes = std::max(layer.workspaceBytes, live);
      layer.stashBytes += results;
      if (cost.contraction)
        layer.contractionBytes += results;
    }
    for (Value operand : op.getOperands()) {
      if (auto it = paramOfValue.find(operand); it != paramOfValue.end()) {
        if (!llvm::is_contained(layer.params, it->second))
          layer.params.push_back(it->second);
        continue;
      }
      auto it = valueIds.find(operand);
      if (it == valueIds.end())
        return llvm::createStringError(describe(&op) +
                                       " reads a value defined elsewhere");
      // Values this layer produced itself are not inputs.
      if (graph.values[it->second].producer == int(layerIndex))
        continue;
      if (!llvm::is_contained(layer.inputs, it->second))
        layer.inputs.push_back(it->second);
    }
    for (Value result : op.getResults()) {
      valueIds[result] = graph.values.size();
      graph.values.push_back({tensorBytes(result.getType()), int(layerIndex)});
    }
  }
  if (graph.layers.empty())
    return llvm::createStringError("the function '" + func.getSymName() +
                                   "' computes nothing to plan");
  return graph;
}

llvm::Error mlir::pipe::deriveBackwardCosts(ModuleOp module, LayerGraph &graph,
                                            std::string &estimatedBecause) {
  OwningOpRef<ModuleOp> copy = module.clone();
  auto main = copy->lookupSymbol<func::FuncOp>("main");
  if (!main || graph.layers.empty()) {
    estimatedBecause = "the module has no @main to differentiate";
    return llvm::Error::success();
  }
  MLIRContext *context = module.getContext();
  auto forward = StringAttr::get(context, "pipe.forward");
  for (Operation &op : main.getBody().front())
    op.setAttr(forward, UnitAttr::get(context));

  // The first error of each pass below, and where it is.
  std::string message;
  std::optional<Location> where;
  ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
    if (message.empty()) {
      message = diagnostic.str();
      where = diagnostic.getLocation();
    }
    return success();
  });
  PassManager autodiff(context);
  autodiff.addPass(createAutodiff());
  if (failed(autodiff.run(*copy))) {
    estimatedBecause = message.empty() ? "--pipe-autodiff failed" : message;
    return llvm::Error::success();
  }

  std::vector<llvm::SmallVector<OpCost>> backward(graph.layers.size());
  int64_t backwardFlops = 0;
  for (Operation &op : main.getBody().front()) {
    if (op.hasAttr(forward) ||
        isa<func::ReturnOp, ParamRefOp, ConstantOp, ReshapeOp>(op))
      continue;
    auto it = graph.layerOfLocation.find(op.getLoc());
    unsigned layer = it != graph.layerOfLocation.end()
                         ? it->second
                         : graph.layers.size() - 1;
    OpCost cost = estimateOpCost(&op);
    // The forward ops are within kMaxModelFlops; their gradients take about
    // twice as many.
    if (cost.flops > kMaxModelFlops ||
        (backwardFlops += cost.flops) > 2 * kMaxModelFlops)
      return llvm::createStringError(
          describe(&op) + " brings the backward pass's FLOPs past 2^61");
    backward[layer].push_back(cost);
  }
  // What the training step would refuse (batch normalization statistics
  // that two writers update, or that are also trained), the plan refuses.
  PassManager statistics(context);
  statistics.addPass(createUpdateStatistics());
  message.clear();
  where.reset();
  if (failed(statistics.run(*copy))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (where)
      os << *where << ": ";
    os << (message.empty() ? "--pipe-update-statistics failed" : message);
    return llvm::createStringError(text);
  }

  for (auto [layer, ops] : llvm::zip(graph.layers, backward))
    layer.backwardOps = std::move(ops);
  graph.derivedBackward = true;
  return llvm::Error::success();
}

std::vector<int64_t> LayerGraph::cutBytes() const {
  size_t numCuts = layers.empty() ? 0 : layers.size() - 1;
  std::vector<int> lastUse(values.size(), -1);
  for (auto [index, layer] : llvm::enumerate(layers))
    for (unsigned value : layer.inputs)
      lastUse[value] = std::max(lastUse[value], int(index));
  // A value produced by layer p and last read by layer q crosses the cuts
  // p, ..., q - 1: accumulate as differences.
  std::vector<int64_t> delta(numCuts + 1, 0);
  for (auto [index, value] : llvm::enumerate(values)) {
    if (value.producer < 0 || lastUse[index] <= value.producer)
      continue;
    delta[value.producer] += value.bytes;
    delta[lastUse[index]] -= value.bytes;
  }
  std::vector<int64_t> bytes(numCuts, 0);
  int64_t running = 0;
  for (size_t cut = 0; cut < numCuts; ++cut)
    bytes[cut] = running += delta[cut];
  return bytes;
}
