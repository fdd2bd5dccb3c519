//===- Simulator.h - event-level replay of a pipeline schedule --*- C++ -*-===//
//
// Replays one iteration of a plan under its schedule on the cost model:
// every stage runs its program (forward, recompute and backward of each
// microbatch) in order, each as soon as its
// device is free and its inputs have arrived; every link carries its
// transfers one at a time, in each direction. The replay also proves the
// schedule complete and deadlock-free: it fails if some stage can never
// run its next step.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_SIMULATOR_H
#define PIPE_PLAN_SIMULATOR_H

#include "pipe/Plan/PlanProblem.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

namespace mlir {
namespace pipe {

/// A step of a stage's program: the forward or backward pass of one
/// microbatch.
struct ProgramStep {
  Phase phase;
  unsigned microbatch;
};

/// The program of stage `stage` of `numStages` under `schedule` with
/// `microbatches` microbatches: for inference all forward passes; GPipe
/// all forward then all backward passes; 1F1B min(S - 1 - stage, M)
/// forward passes, then one forward and one backward pass at a time, then
/// the remaining backward passes.
std::vector<ProgramStep> stageProgram(Schedule schedule, bool training,
                                      unsigned stage, unsigned numStages,
                                      unsigned microbatches);

/// One interval of the replay.
struct SimEvent {
  /// Update: the stage's optimizer update, after its last step (training).
  enum Kind { Forward, Recompute, Backward, Update, Activation, Gradient };
  Kind kind;
  /// The stage; for transfers, the stage that sends.
  unsigned stage;
  unsigned microbatch;
  double startMs, endMs;
};

struct Simulation {
  /// The pipelined work of the microbatches: the plan's predicted
  /// iteration.
  double iterationMs = 0;
  /// The training step: each stage's optimizer update follows its last
  /// step. Set by simulate() only; replay() leaves it 0.
  double stepMs = 0;
  /// The share of device time the stages stand idle.
  double bubbleFraction = 0;
  std::vector<SimEvent> events;
};

/// The times of one stage for one microbatch.
struct ReplayStage {
  double forwardMs = 0, recomputeMs = 0, backwardMs = 0;
};

/// A least round trip through the stages from `stage` on: each
/// microbatch's gradient leaves them no sooner than `ms` after its
/// activations reach them. Replaying stages that take no time from `stage`
/// on with it bounds every replay with real stages there whose round trip
/// (stage and transfer times, and the transfer back) is at least `ms`.
/// A replay in a known order (ReplayScratch) passes such stages over
/// without simulating their steps.
struct RoundTrip {
  unsigned stage = 0;
  double ms = 0;
  /// When not empty, also: microbatch m's gradient leaves them no sooner
  /// than response[m] after the first microbatch's activations reach them.
  /// Not owned: it must outlive the replay.
  llvm::ArrayRef<double> response;
  /// Also: the cut into them takes at least `entryMs` each way, one
  /// microbatch at a time, and their first stage's forward pass of one
  /// microbatch and backward pass of another at least `firstMs`. That
  /// stage, at position p of S, runs its backward pass of microbatch m
  /// only after its forward pass of min(m + S - p - 1, M - 1)
  /// (stageProgram), so the gradient of m comes back no sooner than those
  /// activations arrive there, plus `firstMs` and `entryMs`. (The stages
  /// replayed from `stage` on take no time, nor their cuts: this is where
  /// the cut's own throughput counts.)
  double entryMs = 0, firstMs = 0;
};

/// Working space of replays, kept by callers that replay many times.
struct ReplayScratch {
  std::vector<double> activationAt, gradientAt, forwardDone, deviceFree,
      downFree, upFree, busy, entryAt;
  std::vector<unsigned> next;
  /// The stages in the order the last replay of this shape ran their
  /// steps: whatever the durations, each step's inputs come before it, so
  /// later replays of the shape run the steps in this order unchecked.
  std::vector<std::pair<unsigned, ProgramStep>> order;
  unsigned orderStages = 0, orderMicrobatches = 0;
  Schedule orderSchedule = Schedule::OneFOneB;
  bool orderTraining = false;

  /// Whether `order` is that of replays of this shape.
  bool knowsOrder(unsigned numStages, unsigned microbatches, Schedule schedule,
                  bool training) const {
    return order.size() ==
               size_t(training ? 2 : 1) * microbatches * numStages &&
           orderStages == numStages && orderMicrobatches == microbatches &&
           orderSchedule == schedule && orderTraining == training;
  }
};

/// Replays `plan`; with `recordEvents`, keeps every interval for a
/// timeline. In training, each stage's optimizer update runs after its last
/// step, which gives the step time. Fails if the schedule deadlocks.
/// `scratch` is as for replay.
llvm::Expected<Simulation> simulate(const PlanProblem &problem,
                                    llvm::ArrayRef<StagePlan> plan,
                                    bool recordEvents = true,
                                    ReplayScratch *scratch = nullptr);

/// Replays stages of the given times, with cut[s] the transfer between
/// stages s and s + 1 (each way).
llvm::Expected<Simulation> replay(llvm::ArrayRef<ReplayStage> stages,
                                  llvm::ArrayRef<double> cut, Schedule schedule,
                                  bool training, unsigned microbatches,
                                  bool recordEvents = false,
                                  RoundTrip roundTrip = {},
                                  ReplayScratch *scratch = nullptr);

/// The first stages of a pipeline as a max-plus linear map: every time
/// in a replay is the longest path to it, so the end of each microbatch's
/// forward pass on the last of these stages, and the end of all their work,
/// is the latest over the map's inputs (the arrival of each microbatch's
/// gradient at that stage, and the replay's start) of the input plus the
/// longest path from it; the stages after decide only the inputs. Of two
/// sets of first stages of the same shape, one whose every path is no
/// longer replays no slower followed by any stages.
struct PrefixResponse {
  /// Rows: the forward pass of each microbatch, then the end; columns: the
  /// gradient of each microbatch, then the start. Row-major, M + 1 square;
  /// -inf where no path leads.
  std::vector<double> paths;

  /// Kept from one call to the next: the steps in an order that runs each
  /// after its inputs, per stage count, number of first stages and
  /// microbatches.
  std::map<std::tuple<unsigned, unsigned, unsigned>,
           std::vector<std::pair<unsigned, ProgramStep>>>
      orders;
  std::vector<double> activationAt, gradientAt, forwardDone, deviceFree,
      downFree, upFree;
  std::vector<unsigned> activationReach, gradientReach, forwardReach, freeReach,
      downReach, upReach;
};

/// Computes into `response` the map of `stages`, the first stages of a
/// 1F1B training pipeline of `numStages` stages, with cut[s] the transfer
/// between stages s and s + 1 of them (the transfer after the last one
/// belongs to the stages after).
void prefixResponse(llvm::ArrayRef<ReplayStage> stages,
                    llvm::ArrayRef<double> cut, unsigned numStages,
                    unsigned microbatches, PrefixResponse &response);

/// Maps of partial plans searched (PrefixResponse::paths), by a key of
/// their shape: the search skips a partial plan when one kept under its key
/// is no later anywhere (lib/Plan/Bounds/PrefixMaps.cpp).
class PrefixMaps {
public:
  /// Keeps at most `maxNumbers` numbers in all; past that, maps are still
  /// compared with those kept.
  explicit PrefixMaps(size_t maxNumbers) : maxNumbers(maxNumbers) {}

  /// Whether a map kept under `key` is no later than `paths` at every
  /// entry; if none is, keeps `paths`. Every map of a key must have its
  /// -inf entries in the same places. Adds about the work it took, in
  /// replay steps, to `steps`.
  bool dominatedOrKeep(llvm::StringRef key, llvm::ArrayRef<double> paths,
                       uint64_t &steps);
  void clear();
  size_t numbers() const { return kept; }

private:
  /// Per map, the sum of its finite entries and kProbes of them spread
  /// over them, side by side so that a scan reads on, ascending by the
  /// sum; where its finite entries start in `entries`.
  static constexpr unsigned kProbes = 8;
  struct Maps {
    std::vector<double> heads;
    std::vector<size_t> starts;
    std::vector<double> entries;
  };
  llvm::StringMap<Maps> byKey;
  std::vector<double> finite;
  size_t maxNumbers, kept = 0;
};

/// Improves a 1F1B plan by local search on its replayed iteration time
/// (the objective does not see a 1F1B stage stalling for gradients):
/// single-cut moves, device swaps and replacements, within the options'
/// hand-given parts and every device's memory. Never makes it slower.
void refinePlanBySimulation(const PlanProblem &problem, PipelinePlan &plan);

/// Descends from `plan`, whose replay is `timeMs`, by the moves of
/// refinePlanBySimulation while one shortens the replay, with a budget as
/// large as a whole refinement's; returns the replay reached.
double descendByReplay(const PlanProblem &problem, std::vector<StagePlan> &plan,
                       double timeMs);

/// Moves single cuts of `plan`, whose objective is `objectiveMs`, each to
/// its best place between its neighbours, while one lowers the objective
/// (inference and GPipe, whose objective is the replay); returns the
/// objective reached. A candidate re-prices only the two stages it
/// changes; at most 200,000 are tried. Leaves hand-given cuts alone.
double descendOnCuts(const PlanProblem &problem, std::vector<StagePlan> &plan,
                     double objectiveMs);

/// Lower bounds, by the layers a plan has left, on what they add to a 1F1B
/// replay, from the partitioner's dynamic program: for the layers from
/// `layer` on, placed on exactly the devices of `key` (devices used per
/// class, in mixed radix) with the first of their stages on class `first`,
/// the least sum of stage and transfer times, and the least largest
/// unhidden stage time (PlanProblem::unhiddenMs) or transfer. Each is the
/// least over such suffixes that fit their devices' memory and have no
/// unhidden time or transfer above what a plan replaying below the tables'
/// cap allows; infinite where none does.
///
/// The classes are the cluster's interchangeable devices
/// (Cluster::interchangeableDevices) where the partitioner counts by them.
/// Where it cannot (too many classes to count, or counting up to the
/// symmetry of identical hosts), they are the devices with the same
/// numbers whatever their hosts, and every cut costs its least transfer
/// between two devices of the classes it joins (`leastLinks`, as
/// Partitioner's): no suffix of the cluster costs less than its image
/// there, so the tables still bound every suffix from below.
struct SuffixTables {
  /// Per class: its place value in a key, its size and its devices.
  SmallVector<unsigned> radix, sizes;
  std::vector<std::vector<unsigned>> classes;
  /// Per class of Cluster::interchangeableDevices, the class of the tables
  /// that holds its devices (the identity without `leastLinks`).
  SmallVector<unsigned> classOf;
  bool leastLinks = false;
  unsigned numKeys = 0;
  std::vector<double> sum, slowest;
  /// Ascending limits, and for each cell and limit the least sum of the
  /// suffixes whose unhidden stage times and transfers are all within it,
  /// at [cell * limits.size() + limit].
  SmallVector<double> limits;
  std::vector<double> sumWithin;
  /// No unhidden stage time or transfer of a plan that replays below the
  /// tables' cap (tabulateSuffixes) exceeds this: the tables leave out
  /// suffixes that have one.
  double stageLimit = std::numeric_limits<double>::infinity();

  /// Per suffix cell from layers 1 to L - 1 (its first layer and devices)
  /// and class of the stage before it, a lower bound on when the gradient
  /// of each microbatch reaches that stage, after it sent the first
  /// microbatch's activations (tabulateResponses); empty when not
  /// tabulated. Rows by responseRow.
  std::vector<double> response;
  unsigned responseLayers = 0, responseMicrobatches = 0;
  /// By stage count, a lower bound on the replay of every plan that fits
  /// and replays below the tables' cap, from the same dynamic program.
  /// (The rows of `response` likewise bound the suffixes of such plans.)
  std::vector<double> responseByStages;

  /// Where the row of `response` for the suffix from `layer` on the
  /// devices of `key`, after a stage of class `before`, starts: the rows
  /// of one suffix at consecutive layers lie side by side.
  size_t responseRow(unsigned layer, unsigned key, unsigned before) const {
    return ((size_t(key) * sizes.size() + before) * (responseLayers + 1) +
            layer) *
           responseMicrobatches;
  }

  /// Takes the bounds that tabulateResponses put in `other`, tables of
  /// the same layout.
  void takeResponses(SuffixTables &other) {
    response = std::move(other.response);
    responseByStages = std::move(other.responseByStages);
    responseLayers = other.responseLayers;
    responseMicrobatches = other.responseMicrobatches;
  }

  bool empty() const { return sum.empty(); }
  /// How many devices of class `cls` the suffixes of `key` use.
  unsigned devicesOf(unsigned key, unsigned cls) const {
    return key / radix[cls] % (sizes[cls] + 1);
  }
  size_t index(unsigned layer, unsigned key, unsigned first) const {
    return (size_t(layer) * numKeys + key) * (sizes.size() + 1) + first;
  }
};

/// The tables the planner builds for `problem`'s 1F1B replay search,
/// with limits up to what a plan replaying below `capMs` allows (none
/// when its devices are not counted by class). With `perLimit`, from one
/// run of the dynamic program per limit instead of one pass for all
/// limits: the same tables, for tests.
SuffixTables tabulateSuffixes(const PlanProblem &problem, double capMs,
                              bool perLimit = false);

/// The most numbers tabulateResponses keeps (256 MiB), and the most steps
/// (a microbatch's passes on one stage) its dynamic program may simulate
/// (about a second). 100 layers on 16 devices with 16 microbatches take at
/// most 4.0·10⁶ numbers and 1.4·10⁸ steps with four kinds on one host, and
/// 2.2·10⁷ and 6.9·10⁸ with three kinds on two hosts (six classes); twice
/// as many with 32 microbatches, which is past both limits for six classes.
inline constexpr size_t kMaxResponseNumbers = size_t(32) << 20;
inline constexpr uint64_t kMaxResponseSteps = 1200000000;

/// Fills `tables.response` and `tables.responseByStages` for `problem`'s
/// 1F1B replay search (lib/Plan/Bounds/SuffixResponse.cpp); leaves them empty
/// when `tables` counts no devices by class, or the bounds would take more
/// than kMaxResponseNumbers numbers or kMaxResponseSteps steps.
void tabulateResponses(const PlanProblem &problem, SuffixTables &tables);

/// Finds the 1F1B plan with the least replayed iteration time by branch
/// and bound over every plan the options allow, starting from `plan`
/// (lib/Plan/Bounds/ReplaySearch.cpp). `floorMs` is a proven lower bound on every
/// plan's replay (0 for none): a plan that meets it needs no search.
/// Replaces `plan`'s stages if it finds a faster one, and sets
/// iterationExact when the search finished within its budget, else
/// iterationGapBound. Without `branch`, only bounds the gap (for models
/// too long to search).
/// `tables`, when given, bound the suffixes of the plans that replay below
/// their cap, which must be at least `plan`'s replay.
void searchLeastReplay(const PlanProblem &problem, PipelinePlan &plan,
                       double floorMs, bool branch = true,
                       const SuffixTables *tables = nullptr);

/// Writes `simulation` as a Chrome trace (JSON; opens in Perfetto and
/// chrome://tracing): one track per stage and per link direction.
void writeChromeTrace(const Cluster &cluster, llvm::ArrayRef<StagePlan> plan,
                      const Simulation &simulation, llvm::raw_ostream &os);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_SIMULATOR_H
