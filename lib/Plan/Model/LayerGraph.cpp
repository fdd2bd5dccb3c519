//===- LayerGraph.cpp - the planner's view of a model ---------------------===//
//
// Groups a function's ops into layers (one per ONNX node), and records the
// bytes each layer keeps, reads and passes on.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/PlanProblem.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
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
  // Ops as the targets run them: fused elementwise steps.
  SmallVector<Operation *> bodyOps;
  for (Operation &op : func.getBody().front())
    bodyOps.push_back(&op);
  llvm::DenseMap<Operation *, OpCost> stepCosts = estimateStepCosts(bodyOps);
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

    OpCost cost = stepCosts.lookup(&op);
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
      graph.values.push_back(
          {tensorBytes(result.getType()), int(layerIndex), cost.contraction});
    }
  }
  if (graph.layers.empty())
    return llvm::createStringError("the function '" + func.getSymName() +
                                   "' computes nothing to plan");
  return graph;
}

/// Records in `graph` the reads that may stash each value (StashRead), from
/// `main` after --pipe-autodiff: its forward ops carry `forward`, an index
/// into graph.layerOfOp where they belong to a layer. The gradient ops get
/// the layers --pipe-partition gives them (by stage): the layer of the
/// forward op whose location they carry, or of the earliest gradient op
/// they read where that is earlier; else the latest layer that reads them.
static void deriveStashReads(func::FuncOp main, StringAttr forward,
                             LayerGraph &graph) {
  constexpr unsigned kNever = StashRead::kNeverNeeded;
  Block &body = main.getBody().front();
  unsigned lastLayer = graph.layers.size() - 1;

  // The graph value of a forward op's result.
  std::vector<unsigned> firstValue;
  unsigned next = main.getNumArguments();
  for (auto [op, layer] : graph.layerOfOp) {
    firstValue.push_back(next);
    next += op->getNumResults();
  }
  auto indexOf = [&](Operation *op) -> std::optional<unsigned> {
    if (auto index = op ? op->getAttrOfType<IntegerAttr>(forward) : nullptr)
      return index.getInt();
    return std::nullopt;
  };
  auto valueOf = [&](Value value) -> std::optional<unsigned> {
    if (std::optional<unsigned> index = indexOf(value.getDefiningOp()))
      return firstValue[*index] + cast<OpResult>(value).getResultNumber();
    return std::nullopt;
  };
  auto isGradient = [&](Operation *op) {
    return op && !op->hasAttr(forward) && !isa<ParamRefOp, ConstantOp>(op);
  };
  // Simplification may have replaced a forward op by one that carries no
  // index: then what the forward pass computes is no longer known, and the
  // stash keeps its per-layer price.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() == 0 ||
      isGradient(ret.getOperand(0).getDefiningOp()))
    return;
  for (Operation &op : body.without_terminator())
    if (indexOf(&op) && llvm::any_of(op.getOperands(), [&](Value operand) {
          return isGradient(operand.getDefiningOp());
        }))
      return;

  // The layer of each location; a location that ops of several layers
  // share (none at all, in IR printed without debug info) says nothing.
  llvm::DenseMap<Location, std::optional<unsigned>> layerOfLocation;
  for (auto [op, layer] : graph.layerOfOp)
    if (auto [it, inserted] = layerOfLocation.try_emplace(op->getLoc(), layer);
        !inserted && it->second != layer)
      it->second = std::nullopt;

  llvm::DenseMap<Operation *, unsigned> gradientLayer;
  SmallVector<Operation *> floating;
  for (Operation &op : body.without_terminator()) {
    if (!isGradient(&op))
      continue;
    std::optional<unsigned> layer;
    if (auto it = layerOfLocation.find(op.getLoc());
        it != layerOfLocation.end())
      layer = it->second;
    for (Value operand : op.getOperands())
      if (auto it = gradientLayer.find(operand.getDefiningOp());
          it != gradientLayer.end())
        layer = std::min(layer.value_or(lastLayer), it->second);
    if (layer)
      gradientLayer[&op] = *layer;
    else
      floating.push_back(&op);
  }
  // A floating op goes to the latest layer that reads it; a reader of no
  // layer (the return) is the last.
  for (Operation *op : llvm::reverse(floating)) {
    std::optional<unsigned> latest;
    for (Operation *user : op->getUsers()) {
      auto it = gradientLayer.find(user);
      latest = std::max(latest.value_or(0),
                        it != gradientLayer.end() ? it->second : lastLayer);
    }
    gradientLayer[op] = latest.value_or(lastLayer);
  }

  // What a forward op's results are needed by, under selective and full
  // recompute: the earliest layer of a gradient op that reads them, or
  // that reads what a forward op rebuilds from them. Selective recompute
  // keeps what contractions compute, so it rebuilds nothing from there.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    if (indexOf(&op))
      forwardOps.push_back(&op);
  llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>> needed;
  for (Operation *op : llvm::reverse(forwardOps)) {
    unsigned selective = kNever, full = kNever;
    for (Operation *user : op->getUsers()) {
      if (auto it = gradientLayer.find(user); it != gradientLayer.end()) {
        selective = std::min(selective, it->second);
        full = std::min(full, it->second);
      } else if (auto it = needed.find(user); it != needed.end()) {
        selective = std::min(selective, it->second.first);
        full = std::min(full, it->second.second);
      }
    }
    if (estimateOpCost(op).contraction)
      selective = kNever;
    needed[op] = {selective, full};
  }

  // The reads of each value, one per reading layer.
  auto addRead = [&](unsigned value, unsigned layer, unsigned none,
                     unsigned selective, unsigned full) {
    if (selective == kNever && full == kNever)
      return;
    // A read is needed no earlier than its own layer (a stage holds the
    // reading op).
    auto atLeast = [&](unsigned neededBy) {
      return neededBy == kNever ? kNever : std::max(neededBy, layer);
    };
    none = atLeast(none);
    selective = atLeast(selective);
    full = atLeast(full);
    SmallVector<StashRead, 1> &reads = graph.values[value].stashReads;
    auto it = llvm::find_if(
        reads, [&](const StashRead &read) { return read.layer == layer; });
    if (it == reads.end())
      it = reads.insert(reads.end(), StashRead{layer});
    it->neededBy[0] = std::min(it->neededBy[0], none);
    it->neededBy[1] = std::min(it->neededBy[1], selective);
    it->neededBy[2] = std::min(it->neededBy[2], full);
  };
  for (Operation &op : body.without_terminator()) {
    if (auto it = gradientLayer.find(&op); it != gradientLayer.end()) {
      unsigned layer = it->second;
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (std::optional<unsigned> value = valueOf(operand))
            addRead(*value, layer, layer, layer, layer);
      });
      continue;
    }
    std::optional<unsigned> index = indexOf(&op);
    if (!index)
      continue;
    auto [selective, full] = needed.lookup(&op);
    for (Value operand : op.getOperands())
      if (std::optional<unsigned> value = valueOf(operand))
        addRead(*value, graph.layerOfOp[*index].second, kNever, selective,
                full);
  }
  for (PlanValue &value : graph.values)
    llvm::sort(value.stashReads, [](const StashRead &a, const StashRead &b) {
      return a.layer < b.layer;
    });
  graph.derivedStash = true;
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
  // Each forward op is marked, with its index into graph.layerOfOp where it
  // belongs to a layer: buildLayerGraph walked the same ops in this order.
  auto forward = StringAttr::get(context, "pipe.forward");
  Builder builder(context);
  int64_t index = 0;
  for (Operation &op : main.getBody().front()) {
    if (isa<func::ReturnOp, ParamRefOp, ConstantOp>(op) ||
        size_t(index) >= graph.layerOfOp.size())
      op.setAttr(forward, UnitAttr::get(context));
    else
      op.setAttr(forward, builder.getI64IntegerAttr(index++));
  }

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
  // The forward and the gradient ops run in functions of their own (the
  // stage's forward and backward), so they fuse apart.
  SmallVector<Operation *> forwardOps, gradientOps;
  for (Operation &op : main.getBody().front()) {
    if (!op.hasAttr(forward))
      gradientOps.push_back(&op);
    else if (op.getAttrOfType<IntegerAttr>(forward))
      forwardOps.push_back(&op);
  }
  llvm::DenseMap<Operation *, OpCost> stepCosts =
      estimateStepCosts(gradientOps);
  for (Operation &op : main.getBody().front()) {
    if (op.hasAttr(forward) ||
        isa<func::ReturnOp, ParamRefOp, ConstantOp, ReshapeOp>(op))
      continue;
    auto it = graph.layerOfLocation.find(op.getLoc());
    unsigned layer = it != graph.layerOfLocation.end()
                         ? it->second
                         : graph.layers.size() - 1;
    OpCost cost = stepCosts.lookup(&op);
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

  // The training step's forward pass also hands what the backward pass
  // reads on: those values end fused steps there, so the forward ops are
  // priced as the differentiated program runs them. The op marked i is
  // graph.layerOfOp[i], the i-th op pushed into the layers.
  std::vector<OpCost *> slots;
  std::vector<unsigned> position(graph.layers.size(), 0);
  for (auto [op, layer] : graph.layerOfOp)
    slots.push_back(&graph.layers[layer].ops[position[layer]++]);
  llvm::DenseMap<Operation *, OpCost> forwardCosts =
      estimateStepCosts(forwardOps);
  for (Operation *op : forwardOps) {
    int64_t i = op->getAttrOfType<IntegerAttr>(forward).getInt();
    auto it = forwardCosts.find(op);
    if (it != forwardCosts.end() && size_t(i) < slots.size())
      *slots[i] = it->second;
  }

  // The stash is what the training step reads once simplified, as the
  // training pipeline simplifies it.
  PassManager simplify(context);
  simplify.addPass(createCanonicalizerPass());
  simplify.addPass(createCSEPass());
  if (succeeded(simplify.run(*copy)))
    deriveStashReads(main, forward, graph);
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
