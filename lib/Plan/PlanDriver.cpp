//===- PlanDriver.cpp - `pipe-opt --emit=plan` ----------------------------===//

#include "pipe/Plan/PlanDriver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::pipe;

static const char *scheduleName(const PlanOptions &options) {
  if (!options.training)
    return "inference";
  return options.schedule == Schedule::GPipe ? "gpipe" : "1f1b";
}

static const char *recomputeName(Recompute recompute) {
  switch (recompute) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

/// This host's CPU: its hardware threads and physical memory.
static Cluster hostCluster() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double bytes = double(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return Cluster::hostCPU(cores, bytes / 1073741824.0);
}

llvm::Expected<PlanResult> mlir::pipe::planModule(ModuleOp module,
                                                  const PlanRequest &request) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return llvm::createStringError("the module has no func.func @main to plan");

  PlanResult result;
  if (request.clusterPath.empty()) {
    result.cluster = hostCluster();
  } else {
    llvm::Expected<Cluster> cluster = readCluster(request.clusterPath);
    if (!cluster)
      return cluster.takeError();
    result.cluster = std::move(*cluster);
  }
  llvm::Expected<LayerGraph> graph = buildLayerGraph(main);
  if (!graph)
    return graph.takeError();
  result.graph = std::move(*graph);
  // Training is priced on the gradient ops the compiler would build; a
  // model it cannot differentiate keeps the estimate (twice the forward
  // FLOPs), and plan.json says so.
  if (request.options.training) {
    std::string estimatedBecause;
    if (llvm::Error error =
            deriveBackwardCosts(module, result.graph, estimatedBecause))
      return error;
    if (!result.graph.derivedBackward)
      result.backwardPricing = "estimated (2x forward): " + estimatedBecause;
  }

  PlanOptions options = request.options;
  // Cut points by node name: the last layer of that node.
  for (const std::string &name : request.cutAfter) {
    std::optional<unsigned> found;
    unsigned matches = 0;
    for (auto [index, layer] : llvm::enumerate(result.graph.layers))
      if (layer.name == name) {
        found = index;
        ++matches;
      }
    if (matches > 1)
      return llvm::createStringError(llvm::formatv(
          "--cut-after: {0} nodes apart are called '{1}'; a cut point needs "
          "a name no other node has",
          matches, name));
    if (!found && request.foldedNodes.contains(name))
      return llvm::createStringError(
          "--cut-after: node '" + name +
          "' only computes constants, which compilation folds away; cut "
          "after a node that computes on tensors");
    if (!found)
      return llvm::createStringError("--cut-after: the model has no node '" +
                                     name + "'");
    if (*found + 1 == result.graph.layers.size())
      return llvm::createStringError(
          "--cut-after: '" + name +
          "' is the model's last node; there is nothing to cut after it");
    options.cutAfter.push_back(*found);
  }
  // Node names in program order. With --device-order, which pairs with
  // them stage by stage, another order is an error, not a guess.
  for (auto [i, cut] : llvm::enumerate(options.cutAfter))
    if (llvm::is_contained(ArrayRef(options.cutAfter).take_front(i), cut))
      return llvm::createStringError("--cut-after: node '" +
                                     result.graph.layers[cut].name +
                                     "' is given twice");
  if (request.deviceOrder.empty())
    llvm::sort(options.cutAfter);
  for (unsigned i = 1; i < options.cutAfter.size(); ++i) {
    unsigned before = options.cutAfter[i - 1], cut = options.cutAfter[i];
    if (cut < before)
      return llvm::createStringError(
          "--cut-after: '" + result.graph.layers[cut].name +
          "' comes before '" + result.graph.layers[before].name +
          "' in the model; with --device-order, give the cut points in the "
          "model's order");
  }
  for (const std::string &name : request.deviceOrder) {
    std::optional<unsigned> device = result.cluster.find(name);
    if (!device)
      return llvm::createStringError(
          "--device-order: the cluster has no device '" + name + "'");
    if (llvm::is_contained(options.deviceOrder, *device))
      return llvm::createStringError("--device-order: device '" + name +
                                     "' is given twice");
    options.deviceOrder.push_back(*device);
  }

  if (request.partition != Partition::Auto) {
    if (!options.cutAfter.empty())
      return llvm::createStringError(
          "--partition and --cut-after both choose the cuts; give one");
    unsigned numDevices = result.cluster.devices.size();
    unsigned numLayers = result.graph.layers.size();
    unsigned numStages = options.stages ? options.stages
                         : !options.deviceOrder.empty()
                             ? unsigned(options.deviceOrder.size())
                             : std::min(numDevices, numLayers);
    if (numStages > numDevices)
      return llvm::createStringError(llvm::formatv(
          "--partition: {0} stages need {0} devices, but the cluster has {1}",
          numStages, numDevices));
    if (numStages > numLayers)
      return llvm::createStringError(llvm::formatv(
          "--partition: {0} stages need {0} layers, but the model has {1}",
          numStages, numLayers));
    if (options.deviceOrder.empty())
      for (unsigned d = 0; d < numStages; ++d)
        options.deviceOrder.push_back(d);
    PlanProblem unconstrained(result.graph, result.cluster, options);
    options.cutAfter =
        baselineCuts(unconstrained, request.partition, numStages);
  }

  auto start = std::chrono::steady_clock::now();
  PlanProblem problem(result.graph, result.cluster, options);
  llvm::Expected<PipelinePlan> plan = planPipeline(problem);
  if (!plan)
    return plan.takeError();
  result.plan = std::move(*plan);
  result.plannerSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::Expected<Simulation> simulation = simulate(problem, result.plan.stages);
  if (!simulation)
    return simulation.takeError();
  result.simulation = std::move(*simulation);
  result.plan.predictedIterationMs = result.simulation.iterationMs;
  result.plan.bubbleFraction = result.simulation.bubbleFraction;
  result.plan.predictedStepMs = result.simulation.stepMs;
  result.lowerBoundMs = problem.lowerBoundMs();

  unsigned numStages = result.plan.stages.size();
  for (auto [s, stage] : llvm::enumerate(result.plan.stages)) {
    result.costs.push_back(problem.stageCost(stage.begin, stage.end,
                                             stage.device, numStages - 1 - s,
                                             stage.recompute));
    result.capacityBytes.push_back(problem.capacityBytes(stage.device));
    bool last = s + 1 == numStages;
    result.sendBytes.push_back(last ? 0 : problem.cutBytes(stage.end - 1));
    result.sendMs.push_back(
        last ? 0
             : problem.cutMs(stage.end - 1, stage.device,
                             result.plan.stages[s + 1].device));
  }
  return result;
}

void mlir::pipe::writePlanJSON(const PlanResult &result,
                               const PlanOptions &options,
                               llvm::raw_ostream &os) {
  const PipelinePlan &plan = result.plan;
  llvm::json::Array stages;
  double optimizerMs = 0;
  for (auto [s, stage] : llvm::enumerate(plan.stages)) {
    const Device &device = result.cluster.devices[stage.device];
    const StageCost &cost = result.costs[s];
    const StageMemory &memory = cost.memory;
    optimizerMs = std::max(optimizerMs, cost.optimizerMs);
    std::string arch = device.spec.isCPU() ? "cpu" : device.spec.arch();
    stages.push_back(llvm::json::Object{
        {"index", int64_t(s)},
        {"device", device.name},
        {"kind", device.spec.kind},
        {"host", device.host},
        {"arch", arch},
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
        {"recompute", recomputeName(stage.recompute)},
        {"first_node", result.graph.layers[stage.begin].name},
        {"last_node", result.graph.layers[stage.end - 1].name},
        {"send_bytes", result.sendBytes[s]},
        {"send_ms", result.sendMs[s]}});
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
  llvm::json::Object root{
      {"schedule", scheduleName(options)},
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
      {"objective_gap_bound", plan.gapBound},
      {"iteration_exact", plan.iterationExact},
      {"iteration_gap_bound", plan.iterationGapBound},
      {"planner_seconds", result.plannerSeconds},
      {"layers", std::move(layers)},
      {"devices", int64_t(result.cluster.devices.size())},
      {"stages", std::move(stages)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

void mlir::pipe::printPlanTable(const PlanResult &result,
                                const PlanOptions &options,
                                llvm::raw_ostream &os) {
  const PipelinePlan &plan = result.plan;
  os << llvm::formatv("{0,-5} {1,-10} {2,-10} {3,6} {4,10} {5,10} {6,10} "
                      "{7,21} {8,-9} {9}\n",
                      "stage", "device", "kind", "ops", "fwd GFLOP", "params",
                      "busy ms", "memory / capacity", "recompute", "nodes");
  for (auto [s, stage] : llvm::enumerate(plan.stages)) {
    const Device &device = result.cluster.devices[stage.device];
    const StageCost &cost = result.costs[s];
    std::string memory = formatBytes(cost.memory.total()) + " / " +
                         formatBytes(result.capacityBytes[s]);
    os << llvm::formatv(
        "{0,-5} {1,-10} {2,-10} {3,6} {4,10:F2} {5,10} {6,10:F3} {7,21} "
        "{8,-9} {9} .. {10}\n",
        s, device.name, device.spec.kind, cost.ops, double(cost.flops) / 1e9,
        formatBytes(cost.memory.parameters),
        double(options.microbatches) * cost.busyMs(), memory,
        recomputeName(stage.recompute), result.graph.layers[stage.begin].name,
        result.graph.layers[stage.end - 1].name);
  }
  std::string proof =
      plan.iterationExact
          ? "the least the options allow"
          : llvm::formatv("at most {0:F1}% above the least the options allow",
                          100 * plan.iterationGapBound)
                .str();
  // Three decimals, or three significant digits below a microsecond,
  // which three decimals would print as 0.000.
  auto milliseconds = [](double ms) {
    return (ms > 0 && ms < 1e-3 ? llvm::formatv("{0:E2}", ms)
                                : llvm::formatv("{0:F3}", ms))
        .str();
  };
  std::string step = options.training
                         ? ", " + milliseconds(plan.predictedStepMs) +
                               " ms with the optimizer updates"
                         : "";
  os << llvm::formatv(
      "{0} with {1} microbatch{2}: predicted iteration {3} ms ({4}){5}, "
      "bubble {6:F1}%, lower bound {7} ms (planned in {8:F3} s)\n",
      scheduleName(options), options.microbatches,
      options.microbatches == 1 ? "" : "es",
      milliseconds(plan.predictedIterationMs), proof, step,
      100 * plan.bubbleFraction, milliseconds(result.lowerBoundMs),
      result.plannerSeconds);
}

/// Writes a temporary file of a unique name next to `path` with `write`
/// (llvm::sys::fs::TempFile: removed on a crash or a signal too), for the
/// caller to keep under `path` once every output is written, or discard.
static llvm::Expected<llvm::sys::fs::TempFile>
writeTemporary(llvm::StringRef path,
               llvm::function_ref<void(llvm::raw_ostream &)> write) {
  auto failure = [&](const llvm::Twine &message) {
    return llvm::createStringError("cannot write '" + path + "': " + message);
  };
  llvm::Expected<llvm::sys::fs::TempFile> file =
      llvm::sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
  if (!file)
    return failure(llvm::toString(file.takeError()));
  llvm::raw_fd_ostream os(file->FD, /*shouldClose=*/false);
  write(os);
  os.flush();
  if (os.has_error()) {
    std::error_code error = os.error();
    os.clear_error();
    llvm::consumeError(file->discard());
    return failure(error.message());
  }
  return file;
}

/// The real path of `path`'s folder, followed by its file name: the same
/// for two paths of one file through links or "..".
static std::string realFilePath(llvm::StringRef path) {
  llvm::SmallString<256> folder(llvm::sys::path::parent_path(path));
  if (folder.empty())
    folder = ".";
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(folder, real))
    return path.str();
  llvm::sys::path::append(real, llvm::sys::path::filename(path));
  return real.str().str();
}

llvm::Error mlir::pipe::emitPlan(ModuleOp module, const PlanRequest &request,
                                 llvm::StringRef outDir,
                                 llvm::raw_ostream &table) {
  if (outDir.empty() || outDir == "-")
    return llvm::createStringError(
        "--emit=plan needs an output folder: -o OUT");
  std::string planPath = (outDir + "/plan.json").str();
  if (llvm::sys::fs::exists(outDir)) {
    if (!llvm::sys::fs::is_directory(outDir))
      return llvm::createStringError("'" + outDir + "' is not a folder");
    std::error_code error;
    llvm::sys::fs::directory_iterator it(outDir, error), end;
    if (!error && it != end && !llvm::sys::fs::is_regular_file(planPath))
      return llvm::createStringError(
          "'" + outDir +
          "' exists and is not a pipe output folder; refusing to overwrite it");
  }
  bool trace = !request.timelinePath.empty();
  if (trace && llvm::sys::fs::is_directory(request.timelinePath))
    return llvm::createStringError("--timeline '" + request.timelinePath +
                                   "' is a folder");
  llvm::Expected<PlanResult> result = planModule(module, request);
  if (!result)
    return result.takeError();

  // The folders this run makes, deepest first, to remove if it fails.
  llvm::SmallVector<std::string> made;
  for (llvm::SmallString<256> folder(outDir);
       !folder.empty() && !llvm::sys::fs::exists(folder);
       llvm::sys::path::remove_filename(folder))
    made.push_back(folder.str().str());
  std::optional<llvm::sys::fs::TempFile> timeline, plan;
  auto fail = [&](llvm::Error error) {
    for (std::optional<llvm::sys::fs::TempFile> *file : {&timeline, &plan})
      if (*file && !(*file)->TmpName.empty())
        llvm::consumeError((*file)->discard());
    for (const std::string &folder : made)
      llvm::sys::fs::remove(folder);
    return error;
  };
  auto keep = [&](llvm::sys::fs::TempFile &file, llvm::StringRef path) {
    return llvm::handleErrors(file.keep(path), [&](const llvm::ECError &e) {
      return llvm::createStringError("cannot write '" + path +
                                     "': " + e.convertToErrorCode().message());
    });
  };
  if (std::error_code error = llvm::sys::fs::create_directories(outDir))
    return fail(llvm::createStringError("cannot create '" + outDir +
                                        "': " + error.message()));
  // Now that the folder exists, its links resolve.
  if (trace && realFilePath(request.timelinePath) == realFilePath(planPath))
    return fail(llvm::createStringError(
        "--timeline '" + request.timelinePath +
        "' is the plan.json the plan goes to; write the trace elsewhere"));

  if (trace) {
    llvm::Expected<llvm::sys::fs::TempFile> file =
        writeTemporary(request.timelinePath, [&](llvm::raw_ostream &os) {
          writeChromeTrace(result->cluster, result->plan.stages,
                           result->simulation, os);
        });
    if (!file)
      return fail(file.takeError());
    timeline.emplace(std::move(*file));
  }
  llvm::Expected<llvm::sys::fs::TempFile> file =
      writeTemporary(planPath, [&](llvm::raw_ostream &os) {
        writePlanJSON(*result, request.options, os);
      });
  if (!file)
    return fail(file.takeError());
  plan.emplace(std::move(*file));
  // plan.json last: a folder with it is a finished output.
  if (timeline)
    if (llvm::Error error = keep(*timeline, request.timelinePath))
      return fail(std::move(error));
  if (llvm::Error error = keep(*plan, planPath))
    return fail(std::move(error));
  printPlanTable(*result, request.options, table);
  return llvm::Error::success();
}
