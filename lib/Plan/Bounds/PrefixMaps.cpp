//===- PrefixMaps.cpp - max-plus maps of partial plans searched -----------===//
//
// The replay search skips a partial plan when one it searched before, of
// the same shape, has a max-plus map (PrefixResponse) no later anywhere.
// A map is a few hundred numbers and a key holds thousands of maps, so the
// maps are kept by ascending sum (only one of no greater sum can be no
// later everywhere), and a few entries of each, side by side, rule out
// most maps before their entries are read.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Simulator.h"

#include <cassert>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

bool PrefixMaps::dominatedOrKeep(StringRef key, ArrayRef<double> paths,
                                 uint64_t &steps) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  finite.clear();
  double sum = 0;
  for (double x : paths)
    if (x != kNone) {
      finite.push_back(x);
      sum += x;
    }
  size_t n = finite.size();
  constexpr unsigned kHead = 1 + kProbes;
  double head[kHead];
  head[0] = sum;
  for (unsigned j = 0; j < kProbes; ++j)
    head[1 + j] = n ? finite[j * n / kProbes] : 0;

  Maps &maps = byKey[key];
  size_t count = maps.starts.size();
  assert(maps.entries.size() == count * n &&
         "maps of a key differ in their finite entries");
  // The number of maps whose sum is below `value`, or at most it.
  auto countBelow = [&](double value, bool orEqual) {
    size_t low = 0;
    for (size_t high = count; low < high;) {
      size_t mid = (low + high) / 2;
      double at = maps.heads[mid * kHead];
      if (at < value || (orEqual && at == value))
        low = mid + 1;
      else
        high = mid;
    }
    return low;
  };
  // Up to rounding in the sums.
  size_t candidates = countBelow(sum + std::abs(sum) * 1e-12, true);
  for (size_t i = 0; i < candidates; ++i) {
    const double *probes = &maps.heads[i * kHead + 1];
    unsigned j = 0;
    while (j < kProbes && probes[j] <= head[1 + j])
      ++j;
    steps += 1;
    if (j < kProbes)
      continue;
    const double *map = &maps.entries[maps.starts[i]];
    size_t e = 0;
    while (e < n && map[e] <= finite[e])
      ++e;
    steps += e / 8;
    if (e == n)
      return true;
  }
  if (kept + kHead + n <= maxNumbers) {
    kept += kHead + n;
    size_t at = countBelow(sum, false);
    maps.heads.insert(maps.heads.begin() + at * kHead, head, head + kHead);
    maps.starts.insert(maps.starts.begin() + at, maps.entries.size());
    maps.entries.insert(maps.entries.end(), finite.begin(), finite.end());
  }
  return false;
}

void PrefixMaps::clear() {
  byKey.clear();
  kept = 0;
}
