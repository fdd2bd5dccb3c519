//===- HostSymmetry.cpp - identical hosts counted up to relabeling --------===//
//
// Hosts alike in devices and links are interchangeable: a state of the
// partitioner's dynamic program need only know which device counts its
// hosts have, not which host has which. The groups of identical hosts, the
// canonical form of a key under relabeling them, and the keys the dynamic
// program uses then (docs/planner.md, "Identical hosts").
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::pipe;

std::vector<HostGroup>
mlir::pipe::identicalHostGroups(const PlanProblem &problem,
                                ArrayRef<std::vector<unsigned>> classes) {
  const Cluster &cluster = problem.cluster();
  std::vector<HostGroup> hostGroups;
  // Each host's classes, ordered by their numbers and sizes (then by their
  // first device: classes alike in both, whose devices differ in their
  // links only, match in that order, which the link check below must
  // then confirm).
  llvm::StringMap<unsigned> hostIndex;
  std::vector<SmallVector<unsigned>> hosts;
  for (auto [c, cls] : llvm::enumerate(classes)) {
    auto [it, added] =
        hostIndex.try_emplace(cluster.devices[cls.front()].host, hosts.size());
    if (added)
      hosts.emplace_back();
    hosts[it->second].push_back(c);
  }
  auto signature = [&](unsigned c) {
    return std::make_pair(problem.pricedLike(classes[c].front()),
                          classes[c].size());
  };
  for (SmallVector<unsigned> &host : hosts)
    llvm::stable_sort(host, [&](unsigned a, unsigned b) {
      return signature(a) < signature(b);
    });
  auto alike = [&](ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
    if (a.size() != b.size())
      return false;
    for (unsigned k = 0; k < a.size(); ++k)
      if (signature(a[k]) != signature(b[k]))
        return false;
    return true;
  };
  // Whether swapping two alike hosts keeps every link: only links with an
  // end on them can change.
  unsigned numDevices = cluster.devices.size();
  std::vector<unsigned> swapped(numDevices);
  SmallVector<unsigned> moved;
  auto swapKeepsLinks = [&](ArrayRef<unsigned> first,
                            ArrayRef<unsigned> second) {
    std::iota(swapped.begin(), swapped.end(), 0);
    moved.clear();
    for (unsigned k = 0; k < first.size(); ++k) {
      ArrayRef<unsigned> a = classes[first[k]], b = classes[second[k]];
      for (unsigned i = 0; i < a.size(); ++i) {
        std::swap(swapped[a[i]], swapped[b[i]]);
        moved.append({a[i], b[i]});
      }
    }
    for (unsigned a : moved)
      for (unsigned b = 0; b < numDevices; ++b) {
        if (a == b)
          continue;
        LinkSpec x = cluster.link(a, b),
                 y = cluster.link(swapped[a], swapped[b]);
        if (x.bandwidthGBps != y.bandwidthGBps || x.latencyUs != y.latencyUs)
          return false;
      }
    return true;
  };
  // A group: the first host left and every alike host it can swap with
  // (those swaps generate every relabeling of the group). Hosts left out
  // may form groups of their own.
  std::vector<bool> grouped(hosts.size(), false);
  for (unsigned h = 0; h < hosts.size(); ++h) {
    if (grouped[h])
      continue;
    grouped[h] = true;
    HostGroup group = {hosts[h]};
    for (unsigned g = h + 1; g < hosts.size(); ++g)
      if (!grouped[g] && alike(hosts[h], hosts[g]) &&
          swapKeepsLinks(hosts[h], hosts[g])) {
        grouped[g] = true;
        group.push_back(hosts[g]);
      }
    if (group.size() < 2)
      continue;
    hostGroups.push_back(std::move(group));
  }
  return hostGroups;
}

void mlir::pipe::canonicalizeHosts(ArrayRef<HostGroup> groups,
                                   MutableArrayRef<uint16_t> digits,
                                   MutableArrayRef<unsigned> perm) {
  std::iota(perm.begin(), perm.end(), 0);
  SmallVector<uint16_t> given(digits.begin(), digits.end());
  for (const HostGroup &group : groups) {
    unsigned width = group.front().size();
    SmallVector<unsigned> order(group.size());
    std::iota(order.begin(), order.end(), 0);
    // The most used hosts first; ties keep their order.
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      for (unsigned k = 0; k < width; ++k)
        if (given[group[a][k]] != given[group[b][k]])
          return given[group[a][k]] > given[group[b][k]];
      return false;
    });
    for (unsigned place = 0; place < group.size(); ++place)
      for (unsigned k = 0; k < width; ++k) {
        unsigned from = group[order[place]][k], to = group[place][k];
        digits[to] = given[from];
        perm[from] = to;
      }
  }
}

unsigned Partitioner::keyId(ArrayRef<uint16_t> digits) const {
  return keyIds.lookup(StringRef(reinterpret_cast<const char *>(digits.data()),
                                 digits.size() * 2));
}

bool Partitioner::buildSymmetricKeys() {
  unsigned numClasses = classes.size();
  if (numClasses > 255)
    return false;
  std::vector<std::vector<unsigned>> devices;
  for (const DeviceClass &cls : classes)
    devices.emplace_back(cls.devices.begin(), cls.devices.end());
  hostGroups = identicalHostGroups(problem, devices);
  if (hostGroups.empty())
    return false;
  // Keys by breadth-first search from the empty one, a stage at a time: so
  // by stage count. At most as many as keep the cells within kMaxCells, and
  // the relabelings for the dominance (lessClass) within 64 MiB.
  size_t mostKeys = size_t(
      std::min(kMaxCells / (double(numClasses + 1) * (problem.numLayers() + 1)),
               double(size_t(64) << 20) / (double(numClasses) * numClasses)));
  keyDigits.clear();
  keyStages.clear();
  auto intern = [&](ArrayRef<uint16_t> digits, unsigned stages) {
    auto [it, added] = keyIds.try_emplace(
        StringRef(reinterpret_cast<const char *>(digits.data()),
                  digits.size() * 2),
        keyStages.size());
    if (added) {
      keyDigits.insert(keyDigits.end(), digits.begin(), digits.end());
      keyStages.push_back(stages);
    }
    return it->second;
  };
  SmallVector<uint16_t> digits(numClasses, 0);
  SmallVector<unsigned> perm(numClasses);
  intern(digits, 0);
  for (unsigned key = 0; key < keyStages.size(); ++key) {
    for (unsigned c = 0; c < numClasses; ++c) {
      if (usedOf(key, c) == classes[c].devices.size()) {
        nextKey.push_back(~0u);
        nextClass.push_back(0);
        continue;
      }
      std::copy_n(&keyDigits[size_t(key) * numClasses], numClasses,
                  digits.begin());
      ++digits[c];
      canonicalizeHosts(hostGroups, digits, perm);
      nextKey.push_back(intern(digits, keyStages[key] + 1));
      nextClass.push_back(perm[c]);
    }
    if (keyStages.size() > mostKeys) {
      keyIds.clear();
      keyDigits.clear();
      keyStages.clear();
      nextKey.clear();
      nextClass.clear();
      hostGroups.clear();
      return false;
    }
  }
  unsigned numKeys = keyStages.size();
  lessKey.assign(size_t(numKeys) * numClasses, ~0u);
  lessClass.assign(size_t(numKeys) * numClasses * numClasses, 0);
  for (unsigned key = 0; key < numKeys; ++key)
    for (unsigned c = 0; c < numClasses; ++c) {
      if (!usedOf(key, c))
        continue;
      std::copy_n(&keyDigits[size_t(key) * numClasses], numClasses,
                  digits.begin());
      --digits[c];
      canonicalizeHosts(hostGroups, digits, perm);
      size_t at = size_t(key) * numClasses + c;
      lessKey[at] = keyId(digits);
      for (unsigned next = 0; next < numClasses; ++next)
        lessClass[at * numClasses + next] = perm[next];
    }
  symmetric = true;
  return true;
}
