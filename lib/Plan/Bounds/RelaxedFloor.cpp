//===- RelaxedFloor.cpp - Lagrangian floors under every plan --------------===//
//
// A plan's objective is the sum of its stage times plus M - 1 times the
// slowest stage (docs/planner.md); a stage's time is the sum of its
// layers' times on its device. Let devices take any share of any layer
// (no contiguity, memory or transfers; recompute only where the options
// force it on every stage) and the least objective
// is a linear program; any point of its Lagrangian dual bounds it from
// below: for multipliers m_d >= 0 with sum_d m_d <= M - 1,
//
//   (M - 1) max_s t_s >= sum_d m_d load_d + (M - 1 - sum_d m_d) T0,
//
// where load_d is the time of the stage on device d and T0 any lower bound
// on the slowest stage, so every plan's objective is at least
//
//   sum_l min_d (t_{l,d} + m_d w_{l,d}) + (M - 1 - sum_d m_d) T0.
//
// Devices of one kind share their multiplier (the dual is concave and
// symmetric in them). The multipliers are found by exponentiated
// supergradient steps on the budget's shares, then polished by exchanging
// budget between pairs of kinds (and the T0 term), each exchange a concave
// line search. (Exchanges alone stop on ridges of the dual: 12% short on
// GPT-2-XL on two kinds.) Wherever the search stops, the value is a proven
// bound.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/PlanProblem.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

static constexpr double kInf = std::numeric_limits<double>::infinity();

namespace {
/// The dual function of the relaxation: per layer and kind of device, the
/// layer's time and its weight in the bottleneck term; the floor T0; and
/// the bottleneck's budget M - 1, shared among the kinds and the floor.
class Dual {
public:
  Dual(std::vector<double> times, std::vector<double> weights,
       ArrayRef<double> counts, double lambda, double floor)
      : times(std::move(times)), weights(std::move(weights)),
        counts(counts.begin(), counts.end()), floor(floor) {
    shares.assign(counts.size() + 1, 0);
    shares.back() = lambda;
  }

  /// The dual's value at the current shares; with `gradient`, its
  /// supergradient there: per kind, the weight of the layers it is the
  /// least for, per device; for the floor's share, the floor.
  double value(SmallVectorImpl<double> *gradient = nullptr) const {
    unsigned numKinds = counts.size();
    double total = shares.back() * floor;
    if (gradient) {
      gradient->assign(numKinds + 1, 0);
      gradient->back() = floor;
    }
    for (size_t at = 0; at < times.size(); at += numKinds) {
      double least = kInf;
      unsigned leastKind = 0;
      for (unsigned k = 0; k < numKinds; ++k) {
        double cost = times[at + k] + shares[k] / counts[k] * weights[at + k];
        if (cost < least) {
          least = cost;
          leastKind = k;
        }
      }
      total += least;
      if (gradient)
        (*gradient)[leastKind] += weights[at + leastKind] / counts[leastKind];
    }
    return total;
  }

  /// Raises the value: first by exponentiated supergradient steps on the
  /// shares, then by moving budget between pairs of shares until no move
  /// gains; returns the value.
  double maximize() {
    double best = value();
    double budget = shares.back();
    // One microbatch: no bottleneck term, nothing to share.
    if (!(budget > 0))
      return best;
    unsigned numShares = shares.size();
    // Every share starts equal: the steps multiply them.
    SmallVector<double> bestShares(shares.begin(), shares.end());
    shares.assign(numShares, budget / numShares);
    SmallVector<double> gradient;
    for (unsigned step = 0; step < kGradientSteps; ++step) {
      double here = value(&gradient);
      if (here > best) {
        best = here;
        bestShares.assign(shares.begin(), shares.end());
      }
      double scale = *llvm::max_element(gradient);
      if (!(scale > 0))
        break;
      double rate = kRate / std::sqrt(double(step + 1)), total = 0;
      for (unsigned i = 0; i < numShares; ++i)
        total += shares[i] *= std::exp(rate * gradient[i] / scale);
      for (double &share : shares)
        share *= budget / total;
    }
    shares.assign(bestShares.begin(), bestShares.end());
    // Pairs of kinds only while they are few; moves to and from the floor
    // always.
    bool pairs = counts.size() <= kMaxPairedKinds;
    for (unsigned round = 0; round < kMaxRounds; ++round) {
      double before = best;
      for (unsigned to = 0; to < numShares; ++to)
        for (unsigned from = to + 1; from < numShares; ++from)
          if (pairs || from + 1 == numShares)
            best = exchange(to, from, best);
      if (best <= before * (1 + 1e-9))
        break;
    }
    // The value at shares that are exactly feasible: none negative, and
    // the kinds' no more than the budget, the floor's the rest.
    double kindsTotal = 0;
    for (unsigned k = 0; k + 1 < numShares; ++k)
      kindsTotal += shares[k] = std::max(0.0, shares[k]);
    if (kindsTotal > budget)
      for (unsigned k = 0; k + 1 < numShares; ++k)
        shares[k] *= budget / kindsTotal;
    shares.back() = std::max(0.0, budget - std::min(kindsTotal, budget));
    return value();
  }

private:
  /// The best move of budget from share `from` to share `to` (negative:
  /// the other way), by golden-section search on the concave value; kept
  /// if it beats `current`.
  double exchange(unsigned to, unsigned from, double current) {
    double low = -shares[to], high = shares[from];
    if (high - low <= 0)
      return current;
    double keepTo = shares[to], keepFrom = shares[from];
    auto move = [&](double delta) {
      // Rounding may leave a golden-section point just outside the range.
      delta = std::clamp(delta, low, high);
      shares[to] = std::max(0.0, keepTo + delta);
      shares[from] = std::max(0.0, keepFrom - delta);
    };
    auto at = [&](double delta) {
      move(delta);
      return value();
    };
    constexpr double kRatio = 0.6180339887498949;
    double a = low, b = high;
    double x1 = b - kRatio * (b - a), x2 = a + kRatio * (b - a);
    double f1 = at(x1), f2 = at(x2);
    for (unsigned i = 0; i < kGoldenSteps; ++i) {
      if (f1 < f2) {
        a = x1;
        x1 = x2;
        f1 = f2;
        x2 = a + kRatio * (b - a);
        f2 = at(x2);
      } else {
        b = x2;
        x2 = x1;
        f2 = f1;
        x1 = b - kRatio * (b - a);
        f1 = at(x1);
      }
    }
    double found = std::max(f1, f2);
    move(found > current ? (f1 >= f2 ? x1 : x2) : 0);
    return std::max(found, current);
  }

  static constexpr unsigned kMaxPairedKinds = 12, kMaxRounds = 30,
                            kGoldenSteps = 40, kGradientSteps = 2000;
  static constexpr double kRate = 1;

  std::vector<double> times, weights;
  SmallVector<double> counts;
  double floor;
  /// The budget of each kind, then the floor's.
  SmallVector<double> shares;
};
} // namespace

double mlir::pipe::relaxedFloorMs(const PlanProblem &problem, bool replay) {
  const PlanOptions &options = problem.options();
  const Cluster &cluster = problem.cluster();
  unsigned numLayers = problem.numLayers();
  unsigned numDevices = problem.numDevices();
  if (!numLayers || !numDevices)
    return 0;
  double lambda = double(options.microbatches - 1);
  bool training = options.training;
  bool split = problem.splitBottleneck();
  // A recompute the options force costs every stage its time.
  Recompute forced = Recompute::None;
  if (SmallVector<Recompute, 3> choices = problem.recomputeChoices();
      training && choices.size() == 1)
    forced = choices.front();
  // Per device and layer: forward, and backward plus recompute time.
  auto layerTimes = [&](unsigned d) {
    std::vector<double> times(2 * size_t(numLayers));
    for (unsigned l = 0; l < numLayers; ++l) {
      times[2 * l] = problem.layerForwardMs(l, d);
      if (training)
        times[2 * l + 1] =
            problem.layerBackwardMs(l, d) +
            (forced == Recompute::None
                 ? 0
                 : problem.stageCost(l, l + 1, d, 0, forced).recomputeMs);
    }
    return times;
  };
  // Kinds: devices whose layers all take the same times (the relaxation
  // ignores memory, so devices that differ only in memory are one kind),
  // each with its layers' times and how many devices it stands for.
  SmallVector<unsigned> kinds;
  SmallVector<double> counts;
  std::vector<std::vector<double>> kindTimes;
  for (unsigned d = 0; d < numDevices; ++d) {
    auto same = llvm::find_if(kinds, [&](unsigned k) {
      return sameSpec(cluster.devices[k].spec, cluster.devices[d].spec);
    });
    if (same != kinds.end()) {
      counts[same - kinds.begin()] += 1;
      continue;
    }
    std::vector<double> times = layerTimes(d);
    auto equal = llvm::find(kindTimes, times);
    if (equal != kindTimes.end()) {
      counts[equal - kindTimes.begin()] += 1;
      continue;
    }
    kinds.push_back(d);
    counts.push_back(1);
    kindTimes.push_back(std::move(times));
  }
  unsigned numKinds = kinds.size();

  // Under 1F1B each stage adds at least its unhidden time to the replay:
  // its whole time less at most this share of its forward time, which its
  // warm-up may hide (PlanProblem::unhiddenMs; a stage has fewer stages
  // after it than there are devices or layers).
  double hidden = 0;
  if (replay && training && !split && lambda > 0)
    hidden =
        std::min(double(std::min(numDevices, numLayers) - 1), lambda) / lambda;
  // Per layer and kind: its whole time, and the time that counts in the
  // bottleneck.
  std::vector<double> times(size_t(numLayers) * numKinds),
      weights(times.size());
  for (unsigned l = 0; l < numLayers; ++l)
    for (unsigned k = 0; k < numKinds; ++k) {
      size_t at = size_t(l) * numKinds + k;
      double forward = kindTimes[k][2 * l];
      times[at] = forward + kindTimes[k][2 * l + 1];
      weights[at] = times[at] - hidden * forward;
    }
  // A floor on the bottleneck: the largest layer at its fastest, and the
  // least total spread over every device; under GPipe, the slowest forward
  // step plus the slowest backward step, each at least as large.
  auto floorOf = [&](auto weightOf) {
    double largest = 0, total = 0;
    for (unsigned l = 0; l < numLayers; ++l) {
      double least = kInf;
      for (unsigned k = 0; k < numKinds; ++k)
        least = std::min(least, weightOf(l, k));
      largest = std::max(largest, least);
      total += least;
    }
    return std::max(largest, total / double(numDevices));
  };
  double floor = floorOf([&](unsigned l, unsigned k) {
    return weights[size_t(l) * numKinds + k];
  });
  if (split)
    floor = std::max(floor, floorOf([&](unsigned l, unsigned k) {
                              return kindTimes[k][2 * l];
                            }) + floorOf([&](unsigned l, unsigned k) {
                              return kindTimes[k][2 * l + 1];
                            }));
  Dual dual(std::move(times), std::move(weights), counts, lambda, floor);
  return dual.maximize();
}
