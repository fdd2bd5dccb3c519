//===- SuffixResponse.cpp - least gradient returns of 1F1B suffixes -------===//
//
// For the replay search's stand-in (ReplaySearch.cpp): per suffix of the
// layer order on given devices, a lower bound on when each microbatch's
// gradient comes back to the stage before the suffix, counted from when
// that stage sends the first microbatch's activations. It sees the
// suffix's own stalls, which its least sum and largest unhidden time do
// not.
//
// A replay is a max-plus linear system: it is monotone in its inputs and
// moves with them. So if the activations reach a suffix no sooner than a
// times a₀ ≤ a₁ ≤ …, its first stage ends the backward pass of microbatch
// m no sooner than a₀ + E[m], where E is the suffix replayed alone with
// every microbatch's activations there at time 0; and no sooner than
// aₘ + R, with R its least round trip. Replaying the suffix's first stage
// alone, with the gradients of the rest of it coming back at the larger of
// those two bounds for the rest, gives such a bound E for the suffix; the
// least over every first stage bounds every suffix of a cell. The rest's
// own first stage takes in activations before it returns a gradient (its
// warm-up), one at a time over the cut: each gradient also waits for
// those. The dynamic program runs over the cells from the last layer to
// the first. Only the plans that replay below the tables' cap count: first
// stages longer than such a plan has are left out.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Simulator.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();
/// Pricing a stage for a recompute choice, and finding where it fits,
/// costs about as much as this many steps.
static constexpr uint64_t kPricingSteps = 16;

void mlir::pipe::tabulateResponses(const PlanProblem &problem,
                                   SuffixTables &tables) {
  tables.response.clear();
  tables.responseByStages.clear();
  const PlanOptions &options = problem.options();
  unsigned m = options.microbatches;
  unsigned numLayers = problem.numLayers();
  const std::vector<std::vector<unsigned>> &classes = tables.classes;
  unsigned numClasses = classes.size();
  unsigned numKeys = tables.numKeys;
  if (!options.training || options.schedule != Schedule::OneFOneB || m < 2 ||
      tables.radix.empty())
    return;
  size_t numCells = size_t(numLayers + 1) * numKeys * numClasses;
  if (numCells * m > kMaxResponseNumbers)
    return;

  std::vector<unsigned> keyStages(numKeys, 0);
  // Per key, the set of classes it has devices of.
  std::vector<unsigned> keyClasses(numKeys, 0);
  for (unsigned key = 0; key < numKeys; ++key)
    for (unsigned c = 0; c < numClasses; ++c)
      if (unsigned devices = tables.devicesOf(key, c)) {
        keyStages[key] += devices;
        keyClasses[key] |= 1u << c;
      }
  unsigned numDevices = problem.numDevices();
  // At most this many steps: every stage after every cell replayed, and
  // every stage priced (kPricingSteps each).
  uint64_t steps = uint64_t(numLayers) * (numLayers + 1) / 2 * numClasses *
                   problem.recomputeChoices().size() * kPricingSteps;
  for (unsigned i = 0; i < numLayers; ++i)
    for (unsigned key = 1; key < numKeys; ++key) {
      unsigned stages = keyStages[key];
      if (stages > numLayers - i)
        continue;
      unsigned ends = stages > 1 ? numLayers - i - stages + 1 : 1;
      for (unsigned c = 0; c < numClasses; ++c)
        if (tables.devicesOf(key, c))
          steps += uint64_t(ends) * m;
    }
  if (steps > kMaxResponseSteps)
    return;

  // Per class and stage [i, j) of the cells at layer i: the times of each
  // recompute choice, and the most stages after it at which it still fits
  // (its stash grows with them); -1 where it fits nowhere.
  SmallVector<Recompute, 3> choices = problem.recomputeChoices();
  unsigned numChoices = choices.size();
  auto rangeIndex = [&](unsigned c, unsigned j, unsigned r) {
    return (size_t(c) * (numLayers + 1) + j) * numChoices + r;
  };
  size_t numRanges = size_t(numClasses) * (numLayers + 1) * numChoices;
  std::vector<double> forward(numRanges), backward(numRanges);
  std::vector<int> fitsUpTo(numRanges);
  auto price = [&](unsigned i) {
    for (unsigned c = 0; c < numClasses; ++c) {
      unsigned device = classes[c].front();
      int64_t capacity = problem.capacityBytes(device);
      for (unsigned j = i + 1; j <= numLayers; ++j)
        for (unsigned r = 0; r < numChoices; ++r) {
          size_t at = rangeIndex(c, j, r);
          StageCost cost = problem.stageCost(i, j, device, 0, choices[r]);
          forward[at] = cost.forwardMs;
          backward[at] = cost.recomputeMs + cost.backwardMs;
          auto fits = [&](unsigned after) {
            return problem.stageMemory(i, j, after, choices[r]).total() <=
                   capacity;
          };
          fitsUpTo[at] = -1;
          if (!fits(0))
            continue;
          unsigned low = 0, high = numDevices - 1;
          while (low < high) {
            unsigned mid = (low + high + 1) / 2;
            if (fits(mid))
              low = mid;
            else
              high = mid - 1;
          }
          fitsUpTo[at] = int(low);
        }
    }
  };

  // The bounds E and least round trips R of the cells at one layer (by
  // key and first class); for the later layers, by the rows of `response`,
  // the bounds the stage before a suffix sees (by key and that stage's
  // class): the least over first classes of E plus the transfers there and
  // back, and likewise of R.
  std::vector<double> cellBounds(size_t(numKeys) * numClasses * m),
      cellTrips(size_t(numKeys) * numClasses);
  std::vector<double> &response = tables.response;
  response.assign(numCells * m, kInf);
  tables.responseLayers = numLayers;
  tables.responseMicrobatches = m;
  std::vector<double> roundTrip(numCells, kInf);
  std::vector<double> forwardEnd(m), arrival(m);
  // The first stage of the rest of a suffix, at layer j, runs its backward
  // pass of microbatch mb only after its forward pass of mb + (its stages)
  // - 1 (stageProgram): the gradient comes back no sooner than those
  // activations arrive there, one at a time over the cut, plus that
  // stage's time (at least layer j's) and the cut back. Per layer j, class
  // before the cut and set of classes after it: the least cut to one of
  // them and least time of layer j on one. (Every set is a key's, and a
  // key has at least one cell per class and layer: these tables are no
  // larger than the cells.) A singleton set's cut is also the transfer
  // into a cell from the class before it.
  auto cutMs = [&](unsigned cut, unsigned from, unsigned to) {
    return tables.leastLinks
               ? problem.leastCutMs(cut, classes[from], classes[to])
               : problem.classCutMs(cut, classes[from], classes[to]);
  };
  unsigned numSets = 1u << numClasses;
  std::vector<double> entryCut(size_t(numLayers) * numClasses * numSets, kInf),
      firstTime(size_t(numLayers) * numSets, kInf);
  for (unsigned j = 1; j < numLayers; ++j) {
    double *first = &firstTime[size_t(j) * numSets];
    for (unsigned to = 0; to < numClasses; ++to) {
      unsigned device = classes[to].front();
      first[1u << to] = problem.layerForwardMs(j, device) +
                        problem.layerBackwardMs(j, device);
    }
    for (unsigned set = 1; set < numSets; ++set)
      first[set] = std::min(first[set & (set - 1)], first[set & -set]);
    for (unsigned from = 0; from < numClasses; ++from) {
      double *cut = &entryCut[(size_t(j) * numClasses + from) * numSets];
      for (unsigned to = 0; to < numClasses; ++to)
        cut[1u << to] = cutMs(j - 1, from, to);
      for (unsigned set = 1; set < numSets; ++set)
        cut[set] = std::min(cut[set & (set - 1)], cut[set & -set]);
    }
  }
  for (unsigned i = numLayers; i-- > 0;) {
    price(i);
    std::fill(cellBounds.begin(), cellBounds.end(), kInf);
    std::fill(cellTrips.begin(), cellTrips.end(), kInf);
    for (unsigned key = 1; key < numKeys; ++key) {
      unsigned stages = keyStages[key];
      if (stages > numLayers - i)
        continue;
      // The first stage runs this many forward passes before its first
      // backward pass (stageProgram).
      unsigned warmup = std::min(stages - 1, m);
      for (unsigned c = 0; c < numClasses; ++c) {
        if (!tables.devicesOf(key, c))
          continue;
        unsigned rest = key - tables.radix[c];
        double *bounds = &cellBounds[(size_t(key) * numClasses + c) * m];
        double &trip = cellTrips[size_t(key) * numClasses + c];
        unsigned lastEnd = rest ? numLayers - keyStages[rest] : numLayers;
        unsigned firstEnd = rest ? i + 1 : numLayers;
        for (unsigned j = firstEnd; j <= lastEnd; ++j) {
          unsigned choice = 0;
          while (choice < numChoices &&
                 fitsUpTo[rangeIndex(c, j, choice)] < int(stages - 1))
            ++choice;
          if (choice == numChoices)
            continue;
          double f = forward[rangeIndex(c, j, choice)];
          double b = backward[rangeIndex(c, j, choice)];
          // Longer stages take no less (see below): past the tables' limit,
          // none is part of a plan that counts.
          if (problem.unhiddenMs(f, b, stages - 1) > tables.stageLimit)
            break;
          size_t restRow = rest ? tables.responseRow(j, rest, c) : 0;
          double restTrip = rest ? roundTrip[restRow / m] : 0;
          if (restTrip == kInf)
            continue;
          trip = std::min(trip, f + b + restTrip);
          // Before its backward pass of microbatch mb the stage has run
          // mb + 1 forward and backward passes at least. Once that alone
          // reaches every bound so far, no longer stage lowers any: each
          // takes longer (its layers' times are not negative, and it takes
          // a slower recompute only when the faster no longer fits, its
          // memory growing with its layers). Nor the least round trip: a
          // first microbatch's bound is at least its stage's round trip,
          // so the least is at most bounds[0], which f + b reaches.
          bool lowers = false;
          for (unsigned mb = 0; mb < m && !lowers; ++mb)
            lowers = double(mb + 1) * (f + b) < bounds[mb];
          if (!lowers)
            break;
          if (!rest) {
            // The last stage alternates forward and backward passes.
            for (unsigned mb = 0; mb < m; ++mb)
              bounds[mb] = std::min(bounds[mb], double(mb + 1) * (f + b));
            continue;
          }
          const double *restBounds = &response[restRow];
          // The least cut into the rest and time of its first layer.
          unsigned restClasses = keyClasses[rest];
          double entry =
              entryCut[(size_t(j) * numClasses + c) * numSets + restClasses];
          double first = firstTime[size_t(j) * numSets + restClasses];
          double clock = 0, entryFree = 0;
          auto forwardPass = [&](unsigned mb) {
            forwardEnd[mb] = clock += f;
            arrival[mb] = entryFree = std::max(clock, entryFree) + entry;
          };
          for (unsigned mb = 0; mb < warmup; ++mb)
            forwardPass(mb);
          for (unsigned mb = 0; mb < m; ++mb) {
            if (warmup + mb < m)
              forwardPass(warmup + mb);
            double gradient = std::max(forwardEnd[0] + restBounds[mb],
                                       forwardEnd[mb] + restTrip);
            if (entry < kInf)
              gradient =
                  std::max(gradient, arrival[std::min(mb + stages - 2, m - 1)] +
                                         first + entry);
            clock = std::max(clock, gradient) + b;
            bounds[mb] = std::min(bounds[mb], clock);
          }
        }
      }
    }
    if (i == 0) {
      // Whole plans: the replay ends with the first stage's last backward
      // pass.
      std::vector<double> &least = tables.responseByStages;
      least.assign(numDevices + 1, kInf);
      for (unsigned key = 1; key < numKeys; ++key)
        for (unsigned c = 0; c < numClasses; ++c)
          least[keyStages[key]] =
              std::min(least[keyStages[key]],
                       cellBounds[(size_t(key) * numClasses + c) * m + m - 1]);
      break;
    }
    for (unsigned key = 1; key < numKeys; ++key)
      for (unsigned c = 0; c < numClasses; ++c) {
        double trip = cellTrips[size_t(key) * numClasses + c];
        if (trip == kInf)
          continue;
        const double *bounds = &cellBounds[(size_t(key) * numClasses + c) * m];
        for (unsigned from = 0; from < numClasses; ++from) {
          // The cut at layer i there and back.
          double there =
              2 *
              entryCut[(size_t(i) * numClasses + from) * numSets + (1u << c)];
          size_t row = tables.responseRow(i, key, from);
          roundTrip[row / m] = std::min(roundTrip[row / m], there + trip);
          for (unsigned mb = 0; mb < m; ++mb)
            response[row + mb] =
                std::min(response[row + mb], there + bounds[mb]);
        }
      }
  }
}
