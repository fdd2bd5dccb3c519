//===- PlanDriver.cpp - `pipe-opt --emit=plan` ----------------------------===//

#include "pipe/Plan/PlanDriver.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

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
    if (!found && request.knownNodes.contains(name))
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

llvm::Error mlir::pipe::writeTimeline(const PlanResult &result,
                                      llvm::StringRef path) {
  llvm::Expected<llvm::sys::fs::TempFile> file =
      writeTemporary(path, [&](llvm::raw_ostream &os) {
        writeChromeTrace(result.cluster, result.plan.stages, result.simulation,
                         os);
      });
  if (!file)
    return file.takeError();
  if (llvm::Error error = file->keep(path))
    return llvm::createStringError("cannot write '" + path +
                                   "': " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Expected<PlanOutputs> PlanOutputs::create(llvm::StringRef outDir,
                                                llvm::StringRef timelinePath) {
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
  PlanOutputs outputs;
  outputs.outDir = outDir.str();
  outputs.timelinePath = timelinePath.str();
  outputs.timelineExisted =
      !timelinePath.empty() && llvm::sys::fs::exists(timelinePath);
  // The folders this run makes, deepest first, to remove if it fails.
  for (llvm::SmallString<256> folder(outDir);
       !folder.empty() && !llvm::sys::fs::exists(folder);
       llvm::sys::path::remove_filename(folder))
    outputs.made.push_back(folder.str().str());
  if (!timelinePath.empty() && llvm::sys::fs::is_directory(timelinePath))
    return llvm::createStringError("--timeline '" + timelinePath +
                                   "' is a folder");
  if (std::error_code error = llvm::sys::fs::create_directories(outDir)) {
    outputs.discard();
    return llvm::createStringError("cannot create '" + outDir +
                                   "': " + error.message());
  }
  // Now that the folder exists, its links resolve.
  if (!timelinePath.empty() &&
      realFilePath(timelinePath) == realFilePath(planPath)) {
    outputs.discard();
    return llvm::createStringError(
        "--timeline '" + timelinePath +
        "' is the plan.json the plan goes to; write the trace elsewhere");
  }
  return outputs;
}

void PlanOutputs::discard() {
  if (committed)
    return;
  if (!timelinePath.empty() && !timelineExisted)
    llvm::sys::fs::remove(timelinePath);
  for (const std::string &folder : made)
    llvm::sys::fs::remove(folder);
  made.clear();
}

llvm::Error PlanOutputs::write(ModuleOp module, llvm::raw_ostream &table) {
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan)
    return llvm::createStringError(
        "the module has no plan (pipe.plan); run --pipe-plan first");
  llvm::json::Object json = planToJSON(plan);
  std::string planPath = outDir + "/plan.json";

  auto fail = [&](llvm::Error error) {
    discard();
    return error;
  };
  llvm::Expected<llvm::sys::fs::TempFile> file =
      writeTemporary(planPath, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}",
                            llvm::json::Value(llvm::json::Object(json)))
           << "\n";
      });
  if (!file)
    return fail(file.takeError());
  if (llvm::Error error = file->keep(planPath))
    return fail(llvm::createStringError("cannot write '" + planPath + "': " +
                                        llvm::toString(std::move(error))));
  committed = true;
  printPlanTable(json, table);
  return llvm::Error::success();
}
