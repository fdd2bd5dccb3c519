//===- SearchTuning.h - the plan search's limits ----------------*- C++ -*-===//
//
// Internal: how far the planner's searches go before they settle for a
// proven gap. The defaults are what docs/planner.md measures; the planner's
// tests and benchmarks change them to reach every path. Users set the
// options of PlanOptions instead.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_SEARCHTUNING_H
#define PIPE_PLAN_SEARCHTUNING_H

namespace mlir {
namespace pipe {

struct SearchTuning {
  /// Past this many cells of the dynamic program (states per layer
  /// boundary times boundaries), the 1F1B floor's search makes a few runs
  /// on the cluster's classes and the rest with one class per kind, each
  /// cut at its least transfer (docs/planner.md, "The floor").
  double floorCells = 1e6;
  /// Runs of the dynamic program over simplified classes (classCells) that
  /// no search over the devices makes exact prove nothing (1F1B, blocks of
  /// layers, or where that search gave up): a floor bounds their plans'
  /// gaps. With no state dropped, each
  /// visits all its cells, so past this many cells in all (about 2.5 s on
  /// a 2-core machine) the search stops there with the plan it has. 100
  /// layers × 16 devices take at most a seventh of it; 256 layers on 26
  /// devices of four kinds took up to 16 s without it (docs/planner.md,
  /// "There are three other limits").
  double inexactCells = 8e7;
  /// On blocks of layers, the floor over the model's own layers makes as
  /// many runs of the dynamic program as fit in this much work (cells times
  /// the layers a stage spans on average; about 0.6 s on a 2-core machine),
  /// and none if fewer than four fit (six under 1F1B). 0 turns it off
  /// (docs/planner.md, "A floor over every layer").
  double layerFloorWork = 2.5e8;
  /// Past this many cells of the dynamic program over the cluster's
  /// interchangeable devices, devices with the same numbers form one class
  /// whatever their hosts and links: the plan is then not proven the least,
  /// and a search with every cut at its least transfer bounds its gap
  /// (docs/planner.md, "There are three other limits").
  double classCells = 4e6;
  /// Past classCells, first count the devices used per class up to the
  /// cluster's symmetries: hosts with alike devices and links are
  /// interchangeable, so a state need only know which counts its hosts
  /// have, not which host has which. The search stays exact, and is used
  /// where these states make at most 4 million cells whatever classCells
  /// says (docs/planner.md, "Identical hosts").
  bool hostSymmetry = true;
  /// GPipe's relaxation to one bottleneck stops, and the nested searches
  /// search every step, where a plan it finds below the best has a J this
  /// much (relative) above its relaxed objective (docs/planner.md, "GPipe's
  /// relaxation to one bottleneck"). Infinity keeps it to the end.
  double weakRelaxation = 0.01;
};

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_SEARCHTUNING_H
