//===- PlanReport.cpp - the plan in the IR, in plan.json and as a table ---===//
//
// A plan is recorded in the IR (#pipe.plan on the module, pipe.stage on the
// ops of @main), and plan.json and the table are printed from there, so
// every later pass and every output reads the same plan.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/PlanDriver.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pipe;

static const char *scheduleName(bool training, Schedule schedule) {
  if (!training)
    return "inference";
  return schedule == Schedule::GPipe ? "gpipe" : "1f1b";
}

llvm::json::Object mlir::pipe::planToJSON(const PlanResult &result,
                                          const PlanOptions &options) {
  const PipelinePlan &plan = result.plan;
  llvm::json::Array stages;
  double optimizerMs = 0;
  for (auto [s, stage] : llvm::enumerate(plan.stages)) {
    const Device &device = result.cluster.devices[stage.device];
    const StageCost &cost = result.costs[s];
    const StageMemory &memory = cost.memory;
    optimizerMs = std::max(optimizerMs, cost.optimizerMs);
    std::string arch = device.spec.isCPU() ? "cpu" : device.spec.arch();
    llvm::json::Object entry{
        {"index", int64_t(s)},
        {"device", device.name},
        {"kind", device.spec.kind},
        {"host", device.host},
        {"arch", arch},
        {"cores", int64_t(device.spec.cores)},
        {"ops", int64_t(cost.ops)},
        {"layers", int64_t(stage.end - stage.begin)},
        {"flops", cost.flops},
        {"param_bytes", memory.parameters},
        {"predicted_compute_ms", double(options.microbatches) * cost.busyMs()},
        {"forward_ms", cost.forwardMs},
        {"backward_ms", cost.backwardMs},
        {"recompute_ms", cost.recomputeMs},
        {"optimizer_ms", cost.optimizerMs},
        {"predicted_peak_memory_bytes", memory.total()},
        {"memory_capacity_bytes", result.capacityBytes[s]},
        {"memory",
         llvm::json::Object{
             {"parameters", memory.parameters},
             {"gradients", memory.gradients},
             {"optimizer_state", memory.optimizerState},
             {"stash_per_microbatch", memory.stashPerMicrobatch},
             {"microbatches_in_flight", memory.microbatchesInFlight},
             {"recompute_buffer", memory.recomputeBuffer},
             {"workspace", memory.workspace}}},
        {"recompute", stringifyRecompute(stage.recompute)},
        {"first_node", result.graph.layers[stage.begin].name},
        {"last_node", result.graph.layers[stage.end - 1].name},
        {"send_bytes", result.sendBytes[s]},
        {"send_ms", result.sendMs[s]}};
    // A GPU's index on its host: the stage's process uses that GPU.
    if (device.gpu >= 0)
      entry["gpu"] = int64_t(device.gpu);
    stages.push_back(std::move(entry));
  }
  // Every layer (cut candidate) with its work and the parameters it is the
  // first to read.
  llvm::json::Array layers;
  std::vector<bool> seen(result.graph.params.size(), false);
  for (const PlanLayer &layer : result.graph.layers) {
    int64_t flops = 0, params = 0, backwardFlops = 0;
    for (const OpCost &cost : layer.ops) {
      flops += cost.flops;
      if (!result.graph.derivedBackward)
        backwardFlops += backwardCost(cost).flops;
    }
    for (const OpCost &cost : layer.backwardOps)
      backwardFlops += cost.flops;
    for (unsigned p : layer.params)
      if (!seen[p]) {
        seen[p] = true;
        params += result.graph.params[p].bytes;
      }
    llvm::json::Object entry{
        {"name", layer.name}, {"flops", flops}, {"param_bytes", params}};
    if (options.training)
      entry["backward_flops"] = backwardFlops;
    layers.push_back(std::move(entry));
  }
  return llvm::json::Object{
      {"schedule", scheduleName(options.training, options.schedule)},
      {"training", options.training},
      {"microbatches", options.microbatches},
      {"predicted_iteration_ms", plan.predictedIterationMs},
      {"predicted_step_ms", plan.predictedStepMs},
      {"objective_ms", plan.objectiveMs},
      {"search_objective_ms", plan.optimalObjectiveMs},
      {"lower_bound_ms", result.lowerBoundMs},
      {"bubble_fraction", plan.bubbleFraction},
      {"optimizer_ms", optimizerMs},
      {"exact", plan.exact},
      {"backward_pricing", options.training ? result.backwardPricing : "none"},
      // Whether the stash is the compiled stages' (derived from the
      // gradient ops) or priced per layer.
      {"stash_pricing", !options.training           ? "none"
                        : result.graph.derivedStash ? "derived"
                                                    : "per layer"},
      {"objective_gap_bound", plan.gapBound},
      {"iteration_exact", plan.iterationExact},
      {"iteration_gap_bound", plan.iterationGapBound},
      {"planner_seconds", result.plannerSeconds},
      {"layers", std::move(layers)},
      {"devices", int64_t(result.cluster.devices.size())},
      {"stages", std::move(stages)}};
}

//===----------------------------------------------------------------------===//
// JSON values as attributes and back
//===----------------------------------------------------------------------===//

static Attribute toAttribute(MLIRContext *context,
                             const llvm::json::Value &value) {
  Builder builder(context);
  if (std::optional<bool> flag = value.getAsBoolean())
    return builder.getBoolAttr(*flag);
  if (std::optional<int64_t> integer = value.getAsInteger();
      integer && value.kind() == llvm::json::Value::Number)
    return builder.getI64IntegerAttr(*integer);
  if (std::optional<double> number = value.getAsNumber())
    return builder.getF64FloatAttr(*number);
  if (std::optional<llvm::StringRef> text = value.getAsString())
    return builder.getStringAttr(*text);
  if (const llvm::json::Array *array = value.getAsArray())
    return builder.getArrayAttr(
        llvm::map_to_vector(*array, [&](const llvm::json::Value &element) {
          return toAttribute(context, element);
        }));
  if (const llvm::json::Object *object = value.getAsObject()) {
    SmallVector<NamedAttribute> entries;
    for (const auto &[key, element] : *object)
      entries.push_back(
          builder.getNamedAttr(key.str(), toAttribute(context, element)));
    return builder.getDictionaryAttr(entries);
  }
  return UnitAttr::get(context);
}

static llvm::json::Value toJSON(Attribute attr) {
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getInt();
  if (auto number = dyn_cast<FloatAttr>(attr))
    return number.getValueAsDouble();
  if (auto text = dyn_cast<StringAttr>(attr))
    return text.str();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array elements;
    for (Attribute element : array)
      elements.push_back(toJSON(element));
    return elements;
  }
  if (auto dictionary = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dictionary)
      object[entry.getName().str()] = toJSON(entry.getValue());
    return object;
  }
  return nullptr;
}

/// `object` without `keys`, as a dictionary attribute.
static DictionaryAttr reportOf(MLIRContext *context, llvm::json::Object object,
                               ArrayRef<llvm::StringLiteral> keys) {
  for (llvm::StringLiteral key : keys)
    object.erase(key);
  return cast<DictionaryAttr>(
      toAttribute(context, llvm::json::Value(std::move(object))));
}

void mlir::pipe::recordPlan(ModuleOp module, const PlanResult &result,
                            const PlanOptions &options) {
  MLIRContext *context = module.getContext();
  Builder builder(context);
  llvm::json::Object json = planToJSON(result, options);
  llvm::json::Array jsonStages = std::move(*json.getArray("stages"));
  SmallVector<Attribute> stages;
  for (auto [s, stage] : llvm::enumerate(result.plan.stages)) {
    const Device &device = result.cluster.devices[stage.device];
    llvm::json::Object &entry = *jsonStages[s].getAsObject();
    StringAttr arch = builder.getStringAttr(*entry.getString("arch"));
    DictionaryAttr report = reportOf(
        context, std::move(entry),
        {"index", "device", "kind", "arch", "host", "cores", "recompute"});
    stages.push_back(
        StagePlanAttr::get(context, s, builder.getStringAttr(device.name),
                           builder.getStringAttr(device.spec.kind), arch,
                           builder.getStringAttr(device.host),
                           device.spec.cores, stage.recompute, report));
  }
  module->setAttr(kPlanAttrName,
                  PlanAttr::get(context, options.schedule, options.microbatches,
                                options.training, builder.getArrayAttr(stages),
                                reportOf(context, std::move(json),
                                         {"schedule", "training",
                                          "microbatches", "stages"})));

  // The stage of every op that belongs to a layer.
  std::vector<unsigned> stageOfLayer(result.graph.layers.size());
  for (auto [s, stage] : llvm::enumerate(result.plan.stages))
    for (unsigned layer = stage.begin; layer < stage.end; ++layer)
      stageOfLayer[layer] = s;
  for (auto [op, layer] : result.graph.layerOfOp)
    op->setAttr(kStageAttrName, builder.getI64IntegerAttr(stageOfLayer[layer]));
}

llvm::json::Object mlir::pipe::planToJSON(PlanAttr plan) {
  llvm::json::Object json = std::move(*toJSON(plan.getReport()).getAsObject());
  json["schedule"] = scheduleName(plan.getTraining(), plan.getSchedule());
  json["training"] = plan.getTraining();
  json["microbatches"] = plan.getMicrobatches();
  llvm::json::Array stages;
  for (unsigned s = 0, e = plan.getNumStages(); s < e; ++s) {
    StagePlanAttr stage = plan.getStage(s);
    llvm::json::Object entry =
        std::move(*toJSON(stage.getReport()).getAsObject());
    entry["index"] = stage.getIndex();
    entry["device"] = stage.getDevice().str();
    entry["kind"] = stage.getKind().str();
    entry["arch"] = stage.getArch().str();
    entry["host"] = stage.getHost().str();
    entry["cores"] = stage.getCores();
    entry["recompute"] = stringifyRecompute(stage.getRecompute()).str();
    stages.push_back(std::move(entry));
  }
  json["stages"] = std::move(stages);
  return json;
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

void mlir::pipe::printPlanTable(const llvm::json::Object &plan,
                                llvm::raw_ostream &os) {
  auto number = [](const llvm::json::Object &object, llvm::StringRef key) {
    return object.getNumber(key).value_or(0);
  };
  auto integer = [](const llvm::json::Object &object, llvm::StringRef key) {
    return object.getInteger(key).value_or(0);
  };
  auto text = [](const llvm::json::Object &object, llvm::StringRef key) {
    return object.getString(key).value_or("").str();
  };
  int64_t microbatches = integer(plan, "microbatches");
  os << llvm::formatv("{0,-5} {1,-10} {2,-10} {3,6} {4,10} {5,10} {6,10} "
                      "{7,21} {8,-9} {9}\n",
                      "stage", "device", "kind", "ops", "fwd GFLOP", "params",
                      "busy ms", "memory / capacity", "recompute", "nodes");
  for (const llvm::json::Value &value : *plan.getArray("stages")) {
    const llvm::json::Object &stage = *value.getAsObject();
    std::string memory =
        formatBytes(integer(stage, "predicted_peak_memory_bytes")) + " / " +
        formatBytes(integer(stage, "memory_capacity_bytes"));
    os << llvm::formatv(
        "{0,-5} {1,-10} {2,-10} {3,6} {4,10:F2} {5,10} {6,10:F3} {7,21} "
        "{8,-9} {9} .. {10}\n",
        integer(stage, "index"), text(stage, "device"), text(stage, "kind"),
        integer(stage, "ops"), double(integer(stage, "flops")) / 1e9,
        formatBytes(integer(stage, "param_bytes")),
        number(stage, "predicted_compute_ms"), memory, text(stage, "recompute"),
        text(stage, "first_node"), text(stage, "last_node"));
  }
  std::string proof =
      plan.getBoolean("iteration_exact").value_or(false)
          ? "the least the options allow"
          : llvm::formatv("at most {0:F1}% above the least the options allow",
                          100 * number(plan, "iteration_gap_bound"))
                .str();
  // Three decimals, or three significant digits below a microsecond,
  // which three decimals would print as 0.000.
  auto milliseconds = [](double ms) {
    return (ms > 0 && ms < 1e-3 ? llvm::formatv("{0:E2}", ms)
                                : llvm::formatv("{0:F3}", ms))
        .str();
  };
  bool training = plan.getBoolean("training").value_or(false);
  std::string step =
      training ? ", " + milliseconds(number(plan, "predicted_step_ms")) +
                     " ms with the optimizer updates"
               : "";
  os << llvm::formatv(
      "{0} with {1} microbatch{2}: predicted iteration {3} ms ({4}){5}, "
      "bubble {6:F1}%, lower bound {7} ms (planned in {8:F3} s)\n",
      text(plan, "schedule"), microbatches, microbatches == 1 ? "" : "es",
      milliseconds(number(plan, "predicted_iteration_ms")), proof, step,
      100 * number(plan, "bubble_fraction"),
      milliseconds(number(plan, "lower_bound_ms")),
      number(plan, "planner_seconds"));
}
