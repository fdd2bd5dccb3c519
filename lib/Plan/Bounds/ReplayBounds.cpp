//===- ReplayBounds.cpp - what the stages left can add to a 1F1B replay ---===//
//
// The replay search's bounds on the partial plans it extends: the least
// responses of the suffixes of stages left (from the suffix tables), the
// least entry and the layers left (docs/planner.md, "The least 1F1B
// replay").
//
//===----------------------------------------------------------------------===//

#include "ReplaySearch.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mlir::pipe;
using namespace mlir::pipe::replaysearch;

uint64_t ReplaySearch::suffixesId(uint64_t remaining, unsigned next,
                                  unsigned left, unsigned cls) const {
  return ((uint64_t(next) * tables->numKeys + remaining) * (numLayers + 1) +
          left) *
             tables->sizes.size() +
         cls;
}

ArrayRef<ReplaySearch::SuffixPoint>
ReplaySearch::suffixFront(uint64_t remaining, unsigned next, unsigned left,
                          unsigned first) {
  auto [it, inserted] =
      fronts.try_emplace(suffixesId(remaining, next, left, first));
  std::vector<SuffixPoint> &front = it->second;
  if (!inserted)
    return front;

  // Every suffix of `left` devices among those left whose first class is
  // `first`, by its largest unhidden time u: within limits[i] but not
  // limits[i - 1], its sum is at least sumWithin[i]; above every limit, at
  // least sum.
  unsigned numLimits = tables->limits.size();
  std::vector<SuffixPoint> points;
  for (unsigned key : keysLeft(remaining, left)) {
    size_t cell = tables->index(next, key, first);
    const double *sums = tables->sumWithin.data() + cell * numLimits;
    double uLow = tables->slowest[cell];
    for (unsigned i = 0; i <= numLimits; ++i) {
      if (i)
        uLow = std::max(uLow, tables->limits[i - 1]);
      double sum = i < numLimits ? sums[i] : tables->sum[cell];
      if (sum != kInf)
        points.push_back({sum, uLow, kInf});
    }
    steps += numLimits + 1;
  }
  // Only the points no other beats in both.
  llvm::sort(points, [](const SuffixPoint &a, const SuffixPoint &b) {
    return a.sum < b.sum || (a.sum == b.sum && a.uLow < b.uLow);
  });
  double lambda = double(m - 1);
  for (const SuffixPoint &point : points)
    if (front.empty() || point.uLow < front.back().uLow) {
      double leastUpTo = point.sum + lambda * point.uLow;
      if (!front.empty())
        leastUpTo = std::min(leastUpTo, front.back().leastUpTo);
      front.push_back({point.sum, point.uLow, leastUpTo});
    }
  return front;
}

ArrayRef<unsigned> ReplaySearch::keysLeft(uint64_t remaining, unsigned left) {
  std::vector<unsigned> &keys =
      keysByRemaining[remaining * (numLayers + 1) + left];
  if (keys.empty()) {
    unsigned numClasses = tables->sizes.size();
    for (unsigned key = 0; key < tables->numKeys; ++key) {
      unsigned stages = 0;
      bool within = true;
      for (unsigned c = 0; c < numClasses; ++c) {
        unsigned digit = tables->devicesOf(key, c);
        stages += digit;
        within &= digit <= tables->devicesOf(remaining, c);
      }
      if (within && stages == left)
        keys.push_back(key);
    }
    steps += uint64_t(tables->numKeys) * numClasses;
  }
  return keys;
}

ArrayRef<double> ReplaySearch::suffixResponse(unsigned next, unsigned left) {
  unsigned before = tables->classOf[placedClasses.back()];
  uint64_t remaining = devicesLeft();
  uint64_t id = suffixesId(remaining, next, left, before);
  auto found = responses.find(id);
  if (found != responses.end())
    return found->second;
  // Kept up to kMaxKeptResponses numbers, past that computed each time.
  std::vector<double> &least = (responses.size() + 1) * m <= kMaxKeptResponses
                                   ? responses[id]
                                   : responseScratch;
  least.assign(m, kInf);
  for (unsigned key : keysLeft(remaining, left)) {
    const double *response =
        tables->response.data() + tables->responseRow(next, key, before);
    for (unsigned mb = 0; mb < m; ++mb)
      least[mb] = std::min(least[mb], response[mb]);
    steps += m / 4 + 1;
  }
  return least;
}

double ReplaySearch::suffixBound(unsigned numStages, unsigned next) {
  unsigned left = numStages - placed.size();
  double lambda = double(m - 1);
  double prefix = placedSlowest(numStages);
  double least = kInf;
  leastRoundTrip = leastEntry = leastFirst = kInf;
  // Classes of the cluster that share a class of the tables share its
  // front; only the transfer into the suffix differs.
  uint64_t remaining = devicesLeft();
  SmallVector<std::optional<ArrayRef<SuffixPoint>>, 8> frontOf(
      tables->sizes.size());
  for (unsigned first = 0; first < classes.size(); ++first) {
    if (used[first] == classes[first].size())
      continue;
    double x = placed.empty() ? 0
                              : problem.cutMs(next - 1, placed.back().device,
                                              classes[first][used[first]]);
    std::optional<ArrayRef<SuffixPoint>> &front =
        frontOf[tables->classOf[first]];
    if (!front)
      front = suffixFront(remaining, next, left, tables->classOf[first]);
    // (Counted as when every point was looked at: the budget stays as it
    // was, and the bounds but for rounding.)
    steps += front->size();
    // By ascending sum, so descending uLow: the points before `k` have
    // their unhidden term above the rest's, the others not. Of the first,
    // the least is the least of sum + (M - 1) uLow up to k; of the others,
    // the first.
    double before = placedSum + 2 * x, slowest = std::max(prefix, lambda * x);
    ArrayRef<SuffixPoint> points = *front;
    const SuffixPoint *k = std::partition_point(
        points.begin(), points.end(), [&](const SuffixPoint &point) {
          return lambda * point.uLow > slowest;
        });
    const SuffixPoint *within = k != points.end() ? k : nullptr;
    if (k != points.begin())
      least = std::min(least, before + (k - 1)->leastUpTo);
    if (within)
      least = std::min(least, before + within->sum + slowest);
    // Suffixes whose bound reaches the cutoff are no part of a plan below
    // it: their round trips do not count. The least of them is the first
    // whose bound is below it.
    // (Tested as `least` is computed: a bound below the cutoff counts.)
    double sum = kInf;
    if (k != points.begin() && before + (k - 1)->leastUpTo < cutoff()) {
      const SuffixPoint *counted = std::partition_point(
          points.begin(), k, [&](const SuffixPoint &point) {
            return before + point.leastUpTo >= cutoff();
          });
      sum = counted->sum;
    } else if (within && before + within->sum + slowest < cutoff()) {
      sum = within->sum;
    }
    if (sum < kInf) {
      leastRoundTrip = std::min(leastRoundTrip, sum + 2 * x);
      leastEntry = std::min(leastEntry, x);
      leastFirst = std::min(leastFirst, layerMs[first][next]);
    }
  }
  return least;
}

std::pair<double, double> ReplaySearch::leastEntryLeft(unsigned next) const {
  double entry = kInf, first = kInf;
  for (unsigned c = 0; c < classes.size(); ++c) {
    if (used[c] == classes[c].size())
      continue;
    entry = std::min(entry, problem.cutMs(next - 1, placed.back().device,
                                          classes[c][used[c]]));
    first = std::min(first, layerMs[c][next]);
  }
  return {entry, first};
}

std::pair<double, double> ReplaySearch::layersLeft(unsigned next) {
  // By the classes with devices left, the sums and maxima from each layer
  // on, filled on first use.
  std::string mask(classes.size(), 0);
  for (unsigned c = 0; c < classes.size(); ++c)
    mask[c] = used[c] < classes[c].size();
  auto [it, inserted] = layersLeftByClasses.try_emplace(std::move(mask));
  std::vector<std::pair<double, double>> &fromLayer = it->second;
  if (inserted) {
    steps += uint64_t(numLayers) * classes.size();
    fromLayer.assign(numLayers + 1, {0.0, 0.0});
    for (unsigned l = numLayers; l-- > 0;) {
      double least = kInf;
      for (unsigned c = 0; c < classes.size(); ++c)
        if (it->first[c])
          least = std::min(least, layerMs[c][l]);
      fromLayer[l] = {fromLayer[l + 1].first + least,
                      std::max(fromLayer[l + 1].second, least)};
    }
  }
  return fromLayer[next];
}
