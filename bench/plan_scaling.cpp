//===- plan_scaling.cpp - planner wall time on random instances -----------===//
//
// Times the partitioner on random layer graphs (lib/Plan/RandomInstances)
// for a grid of layer counts, device counts, device kinds and schedules,
// and says whether each search was exact: under the closed-form
// objective, and for the predicted (replayed) iteration time. Not a test: run
// it by hand and record the table in docs/benchmarks.md.
//
//   build/bin/pipe-plan-scaling [--hosts=LAYOUT] [--inference]
//                               [--only=1f1b|gpipe|inference]
//                               [LAYERS DEVICES KINDS HOSTS [SEED [M [STEPS]]]]
//
// With arguments, times that one case instead of the grid, with M
// microbatches (16 by default) and at most STEPS simulated steps for the
// 1F1B replay search (PlanOptions::replaySteps by default). LAYOUT places
// device d: `round-robin` (the default) on host d mod HOSTS with kind
// d mod KINDS, so that each host has one kind when KINDS = HOSTS;
// `mixed` on host d div (DEVICES / HOSTS), so that each host has one
// device of each kind then; `random` as `mixed` with a random kind (by
// SEED). --inference also plans inference; --only plans that one alone.
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Testing/RandomInstances.h"
#include "pipe/Plan/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace mlir;
using namespace mlir::pipe;

int main(int argc, char **argv) {
  struct Case {
    unsigned layers, devices, kinds, hosts;
  };
  std::vector<Case> cases = {{100, 16, 2, 1},
                             {100, 16, 4, 1},
                             {300, 16, 2, 1},
                             {1000, 64, 2, 4},
                             {1000, 64, 4, 4}};
  unsigned seed = 1;
  int microbatches = 16;
  uint64_t replaySteps = PlanOptions().replaySteps;
  const char *usage =
      "usage: pipe-plan-scaling [--hosts=round-robin|mixed|random] "
      "[--inference] [--only=1f1b|gpipe|inference] "
      "[LAYERS DEVICES KINDS(1-4) HOSTS [SEED [M [STEPS]]]]\n";
  std::string layout = "round-robin", only;
  bool inference = false;
  while (argc > 1 && llvm::StringRef(argv[1]).starts_with("--")) {
    llvm::StringRef option = argv[1];
    if (option == "--inference")
      inference = true;
    else if (option.consume_front("--hosts="))
      layout = option.str();
    else if (option.consume_front("--only=") &&
             llvm::is_contained({"1f1b", "gpipe", "inference"}, option))
      only = option.str();
    else
      argc = 0;
    if (layout != "round-robin" && layout != "mixed" && layout != "random")
      argc = 0;
    if (!argc)
      break;
    --argc;
    ++argv;
  }
  if (argc >= 5 && argc <= 8) {
    if (argc >= 6)
      seed = unsigned(std::atoi(argv[5]));
    if (argc >= 7)
      microbatches = std::atoi(argv[6]);
    if (argc == 8) {
      char *end = nullptr;
      replaySteps = std::strtoull(argv[7], &end, 10);
      if (*argv[7] == '-' || *end) {
        llvm::errs() << usage;
        return 1;
      }
    }
    Case one{unsigned(std::atoi(argv[1])), unsigned(std::atoi(argv[2])),
             unsigned(std::atoi(argv[3])), unsigned(std::atoi(argv[4]))};
    if (!one.layers || !one.devices || one.kinds < 1 || one.kinds > 4 ||
        !one.hosts || microbatches < 1) {
      llvm::errs() << usage;
      return 1;
    }
    cases = {one};
  } else if (argc != 1 || layout != "round-robin") {
    llvm::errs() << usage;
    return 1;
  }
  llvm::outs()
      << "| layers | devices | kinds | hosts | schedule | seconds "
         "| objective | predicted ms | predicted iteration | stages |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Case &c : cases) {
    std::mt19937 rng(seed);
    LayerGraph graph = randomLayerGraph(rng, c.layers, int64_t(1) << 26);
    Cluster cluster = roundRobinCluster(c.devices, c.kinds, c.hosts);
    if (layout != "round-robin") {
      // One device of each kind, to draw from.
      Cluster kinds = roundRobinCluster(c.kinds, c.kinds, 1);
      std::mt19937 kindRng(seed);
      unsigned perHost = (c.devices + c.hosts - 1) / c.hosts;
      for (auto [d, device] : llvm::enumerate(cluster.devices)) {
        device.host = "h" + std::to_string(d / perHost);
        if (layout == "random")
          device.spec = kinds.devices[kindRng() % c.kinds].spec;
      }
    }
    SmallVector<std::pair<bool, Schedule>> runs = {{true, Schedule::OneFOneB},
                                                   {true, Schedule::GPipe}};
    if (inference || only == "inference")
      runs.push_back({false, Schedule::GPipe});
    for (auto [training, schedule] : runs) {
      const char *name = !training                     ? "inference"
                         : schedule == Schedule::GPipe ? "gpipe"
                                                       : "1f1b";
      if (!only.empty() && only != name)
        continue;
      PlanOptions options;
      options.training = training;
      options.microbatches = microbatches;
      options.optimizer = Optimizer::Adam;
      options.schedule = schedule;
      options.replaySteps = replaySteps;
      PlanProblem problem(graph, cluster, options);
      auto start = std::chrono::steady_clock::now();
      llvm::Expected<PipelinePlan> plan = planPipeline(problem);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (!plan) {
        llvm::errs() << llvm::toString(plan.takeError()) << "\n";
        return 1;
      }
      auto proof = [](bool exact, double gap) {
        return exact ? std::string("exact")
                     : llvm::formatv("gap <= {0:F1}%", 100 * gap).str();
      };
      llvm::outs() << llvm::formatv(
          "| {0} | {1} | {2} | {3} | {4} | {5:F2} | {6} | {7:F1} | {8} | {9} "
          "|\n",
          c.layers, c.devices, c.kinds, c.hosts, name, seconds,
          proof(plan->exact, plan->gapBound),
          simulate(problem, plan->stages, false)->iterationMs,
          proof(plan->iterationExact, plan->iterationGapBound),
          plan->stages.size());
    }
  }
  return 0;
}
