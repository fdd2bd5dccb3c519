//===- SimulatorTest.cpp - the replay, its bounds and maps ----------------===//

#include "PlanTestSupport.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::pipe;
using llvm::Expected;

namespace {

/// The 1F1B replay is never below sum + (M - 1) max(unhidden stage time,
/// transfer), the bound the floor of the replay search minimizes; and it
/// reaches it on some plans (the bound is tight there).
TEST(Simulator, OneFOneBReplayIsAtLeastTheUnhiddenBound) {
  std::mt19937 rng(77);
  unsigned tight = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    unsigned numDevices = std::uniform_int_distribution<unsigned>(1, 6)(rng);
    unsigned numLayers = std::uniform_int_distribution<unsigned>(6, 12)(rng);
    LayerGraph graph = randomLayerGraph(rng, numLayers, int64_t(1) << 20);
    Cluster cluster = randomCluster(rng, numDevices);
    PlanOptions options;
    options.training = true;
    options.schedule = Schedule::OneFOneB;
    options.microbatches = std::uniform_int_distribution<int>(1, 12)(rng);
    PlanProblem problem(graph, cluster, options);
    // Random stages on distinct devices, random recompute.
    std::vector<StagePlan> plan;
    std::vector<unsigned> devices(numDevices);
    std::iota(devices.begin(), devices.end(), 0);
    std::shuffle(devices.begin(), devices.end(), rng);
    unsigned begin = 0;
    for (unsigned s = 0; s < numDevices && begin < numLayers; ++s) {
      unsigned end = s + 1 == numDevices
                         ? numLayers
                         : std::uniform_int_distribution<unsigned>(
                               begin + 1, numLayers)(rng);
      plan.push_back({begin, end, devices[s], Recompute(rng() % 3)});
      begin = end;
    }
    double replay = simulate(problem, plan, false)->iterationMs;
    double bound =
        problem.times(plan, /*unhidden=*/true).objective(options.microbatches);
    EXPECT_GE(replay, bound * (1 - 1e-12)) << "trial " << trial;
    EXPECT_LE(bound, problem.objectiveMs(plan) * (1 + 1e-12));
    tight += replay <= bound * (1 + 1e-12);
  }
  EXPECT_GT(tight, 40u);
}

/// A stage hides at most the least, over the stages after it, of the round
/// trip below that stage plus the shorter of its forward and backward times
/// for each warm-up step between them (docs/planner.md, "Why L is loose:
/// thin tails"): the replay is never below the bound this gives, which
/// exceeds L when the last stages take almost no time.
TEST(Simulator, OneFOneBReplayIsAtLeastTheThinTailBound) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> time(0.1, 10), thin(0, 0.05),
      link(0, 0.5);
  unsigned above = 0;
  for (unsigned trial = 0; trial < 500; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(1, 10)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 16)(rng);
    // The last stages take almost no time in half the trials.
    unsigned numThin =
        rng() % 2 ? std::uniform_int_distribution<unsigned>(0, 3)(rng) : 0;
    std::vector<ReplayStage> stages(numStages);
    for (unsigned s = 0; s < numStages; ++s) {
      auto draw = [&] {
        return s + numThin >= numStages ? thin(rng) : time(rng);
      };
      stages[s] = {draw(), rng() % 2 ? draw() : 0, draw()};
    }
    std::vector<double> cut(numStages - 1);
    for (double &x : cut)
      x = link(rng);
    double real = replay(stages, cut, Schedule::OneFOneB, true, m)->iterationMs;

    auto busy = [&](unsigned s) {
      return stages[s].forwardMs + stages[s].recomputeMs + stages[s].backwardMs;
    };
    // below[j]: the round trip below stage j.
    std::vector<double> below(numStages, 0);
    for (unsigned j = numStages - 1; j-- > 0;)
      below[j] = below[j + 1] + busy(j + 1) + 2 * cut[j];
    double sum = below[0] + busy(0);
    auto warmUp = [&](unsigned j) {
      return double(std::min(numStages - 1 - j, m - 1));
    };
    double unhidden = 0, thinTail = 0;
    for (unsigned k = 0; k < numStages; ++k) {
      double shorter = std::min(stages[k].forwardMs,
                                stages[k].recomputeMs + stages[k].backwardMs);
      double hidden = warmUp(k) * shorter;
      for (unsigned j = k; j < numStages; ++j)
        hidden = std::min(hidden, below[j] + (warmUp(k) - warmUp(j)) * shorter);
      unhidden = std::max(unhidden, (m - 1) * busy(k) - warmUp(k) * shorter);
      thinTail = std::max(thinTail, (m - 1) * busy(k) - hidden);
    }
    for (double x : cut) {
      unhidden = std::max(unhidden, (m - 1) * x);
      thinTail = std::max(thinTail, (m - 1) * x);
    }
    EXPECT_LE(sum + thinTail, real * (1 + 1e-12)) << "trial " << trial;
    above += thinTail > unhidden * (1 + 1e-9);
  }
  // Above L in 166 of the 500 trials.
  EXPECT_GT(above, 60u);
}

/// The round trip through stages k on, from the end of a forward pass on
/// stage k - 1 to the gradient's arrival there.
RoundTrip roundTripFrom(ArrayRef<ReplayStage> stages, ArrayRef<double> cut,
                        unsigned k) {
  RoundTrip roundTrip{k, 2 * cut[k - 1]};
  for (unsigned s = k; s < stages.size(); ++s)
    roundTrip.ms += stages[s].forwardMs + stages[s].recomputeMs +
                    stages[s].backwardMs +
                    (s + 1 < stages.size() ? 2 * cut[s] : 0);
  return roundTrip;
}

/// The first k stages, followed by stages and cuts that take no time.
std::pair<std::vector<ReplayStage>, std::vector<double>>
standInAfter(ArrayRef<ReplayStage> stages, ArrayRef<double> cut, unsigned k) {
  std::vector<ReplayStage> standIn(stages.begin(), stages.begin() + k);
  standIn.resize(stages.size());
  std::vector<double> standInCut(cut.begin(), cut.begin() + k - 1);
  standInCut.resize(cut.size(), 0);
  return {standIn, standInCut};
}

/// Stages that take no time after the first k, but for each microbatch's
/// round trip through them, bound the replay with real stages there: the
/// branch and bound's bound on the plans that extend k stages.
TEST(Simulator, RoundTripStandInBoundsTheReplay) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> time(0.1, 10), link(0, 2);
  unsigned tight = 0, helped = 0;
  for (unsigned trial = 0; trial < 500; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 8)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 12)(rng);
    std::vector<ReplayStage> stages(numStages);
    for (ReplayStage &stage : stages)
      stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
    std::vector<double> cut(numStages - 1);
    for (double &x : cut)
      x = link(rng);
    double real = replay(stages, cut, Schedule::OneFOneB, true, m)->iterationMs;
    for (unsigned k = 1; k < numStages; ++k) {
      RoundTrip roundTrip = roundTripFrom(stages, cut, k);
      auto [standIn, standInCut] = standInAfter(stages, cut, k);
      double bound = replay(standIn, standInCut, Schedule::OneFOneB, true, m,
                            false, roundTrip)
                         ->iterationMs;
      double zero =
          replay(standIn, standInCut, Schedule::OneFOneB, true, m)->iterationMs;
      EXPECT_LE(bound, real * (1 + 1e-12)) << "trial " << trial << " k " << k;
      EXPECT_GE(bound, zero);
      tight += bound >= real * (1 - 1e-12);
      helped += bound > zero * (1 + 1e-12);
    }
  }
  // The bound is often the replay itself (772 of 2,250 stand-ins), and the
  // round trip usually adds (1,996).
  EXPECT_GT(tight, 500u);
  EXPECT_GT(helped, 1500u);
}

/// Random 1F1B stage times, with a recompute on about half the stages,
/// and transfers.
std::pair<std::vector<ReplayStage>, std::vector<double>>
randomStages(std::mt19937 &rng, unsigned numStages, double longestCut = 2) {
  std::uniform_real_distribution<double> time(0.1, 10), link(0.01, longestCut);
  std::vector<ReplayStage> stages(numStages);
  for (ReplayStage &stage : stages)
    stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
  std::vector<double> cut(numStages ? numStages - 1 : 0);
  for (double &x : cut)
    x = link(rng);
  return {stages, cut};
}

/// The cut into the stand-in stages carries one microbatch at a time,
/// and their first stage runs its backward pass of microbatch m only after
/// its forward pass of min(m + S - k - 1, M - 1): with the cut's time and
/// the first stage's as RoundTrip::entryMs and firstMs, the stand-in still
/// bounds the replay, step by step and in a known order. Twice the cut's
/// time does not, which the replay's own link would allow.
TEST(Simulator, EntryStandInBoundsTheReplay) {
  std::mt19937 rng(47);
  unsigned tight = 0, helped = 0, above = 0;
  for (unsigned trial = 0; trial < 500; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 8)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 12)(rng);
    auto [stages, cut] = randomStages(rng, numStages, /*longestCut=*/12);
    double real = replay(stages, cut, Schedule::OneFOneB, true, m)->iterationMs;
    ReplayScratch scratch;
    for (unsigned k = 1; k < numStages; ++k) {
      RoundTrip roundTrip = roundTripFrom(stages, cut, k);
      auto [standIn, standInCut] = standInAfter(stages, cut, k);
      auto standInReplay = [&](ReplayScratch *known) {
        return replay(standIn, standInCut, Schedule::OneFOneB, true, m, false,
                      roundTrip, known)
            ->iterationMs;
      };
      double without = standInReplay(nullptr);
      // The first stage's time alone, then with the cut's.
      roundTrip.firstMs =
          stages[k].forwardMs + stages[k].recomputeMs + stages[k].backwardMs;
      double firstOnly = standInReplay(nullptr);
      EXPECT_LE(firstOnly, real * (1 + 1e-12))
          << "trial " << trial << " k " << k;
      roundTrip.entryMs = cut[k - 1];
      double bound = standInReplay(nullptr);
      EXPECT_GE(bound, firstOnly);
      EXPECT_LE(bound, real * (1 + 1e-12)) << "trial " << trial << " k " << k;
      EXPECT_GE(bound, without);
      for (unsigned again = 0; again < 2; ++again)
        EXPECT_EQ(standInReplay(&scratch), bound)
            << "trial " << trial << " k " << k;
      tight += bound >= real * (1 - 1e-12);
      helped += bound > without * (1 + 1e-12);
      roundTrip.entryMs *= 2;
      above += standInReplay(nullptr) > real * (1 + 1e-12);
    }
  }
  // Of 1,990 stand-ins, the entry makes 291 tighter and 1,052 meet the
  // replay; with twice the cut, 969 exceed it.
  EXPECT_GT(tight, 800u);
  EXPECT_GT(helped, 200u);
  EXPECT_GT(above, 600u);
}

/// A stand-in whose gradients also leave no sooner than the stages' own
/// response after the first microbatch's activations reach them
/// (RoundTrip::response, from SuffixResponse.cpp's dynamic program) bounds
/// the replay: the replay is monotone in when the activations arrive, and
/// they all arrive after the first. Step by step and in a known order.
TEST(Simulator, ResponseStandInBoundsTheReplay) {
  std::mt19937 rng(43);
  unsigned tight = 0, helped = 0, compared = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 8)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 12)(rng);
    auto [stages, cut] = randomStages(rng, numStages);
    double real = replay(stages, cut, Schedule::OneFOneB, true, m)->iterationMs;
    ReplayScratch scratch;
    for (unsigned k = 1; k < numStages; ++k) {
      RoundTrip roundTrip = roundTripFrom(stages, cut, k);
      std::vector<double> response = backwardEnds(
          ArrayRef(stages).drop_front(k), ArrayRef(cut).drop_front(k), m);
      for (double &time : response)
        time += 2 * cut[k - 1];
      auto [standIn, standInCut] = standInAfter(stages, cut, k);
      double roundTripOnly = replay(standIn, standInCut, Schedule::OneFOneB,
                                    true, m, false, roundTrip)
                                 ->iterationMs;
      roundTrip.response = response;
      double stepwise = replay(standIn, standInCut, Schedule::OneFOneB, true, m,
                               false, roundTrip)
                            ->iterationMs;
      EXPECT_LE(stepwise, real * (1 + 1e-12))
          << "trial " << trial << " k " << k;
      EXPECT_GE(stepwise, roundTripOnly);
      // The first replay of the shape finds the order; the second knows it.
      for (unsigned again = 0; again < 2; ++again) {
        double known = replay(standIn, standInCut, Schedule::OneFOneB, true, m,
                              false, roundTrip, &scratch)
                           ->iterationMs;
        EXPECT_EQ(known, stepwise) << "trial " << trial << " k " << k;
        ++compared;
      }
      tight += stepwise >= real * (1 - 1e-12);
      helped += stepwise > roundTripOnly * (1 + 1e-12);
    }
  }
  // Of 1,622 stand-ins, the response makes 952 tighter, and 1,492 meet
  // the replay itself.
  EXPECT_GT(compared, 3000u);
  EXPECT_GT(tight, 1200u);
  EXPECT_GT(helped, 800u);
}

/// A replay of a known order skips the stand-in stages that take no time
/// after a round trip, and computes when their gradients leave: the same
/// times as replaying them step by step.
TEST(Simulator, IdleStandInStagesNeedNoSteps) {
  std::mt19937 rng(37);
  std::uniform_real_distribution<double> time(0.1, 10);
  unsigned compared = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 9)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 14)(rng);
    ReplayScratch scratch;
    for (unsigned k = 1; k < numStages; ++k) {
      // k stages, then stand-ins that take no time.
      auto [stages, cut] = randomStages(rng, k);
      stages.resize(numStages);
      cut.resize(numStages - 1, 0);
      RoundTrip roundTrip{k, rng() % 4 ? 3 * time(rng) : 0};
      Expected<Simulation> stepwise =
          replay(stages, cut, Schedule::OneFOneB, true, m, false, roundTrip);
      // The first replay of the shape finds the order; the second knows it.
      for (unsigned again = 0; again < 2; ++again) {
        Expected<Simulation> known =
            replay(stages, cut, Schedule::OneFOneB, true, m, false, roundTrip,
                   &scratch);
        ASSERT_TRUE(stepwise && known);
        EXPECT_EQ(stepwise->iterationMs, known->iterationMs)
            << "trial " << trial << " k " << k;
        EXPECT_EQ(stepwise->bubbleFraction, known->bubbleFraction);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 2000u);
}

/// The latest over a map's row of each input plus the path from it.
double respond(const PrefixResponse &response, unsigned row,
               ArrayRef<double> inputs) {
  unsigned width = inputs.size();
  double latest = -std::numeric_limits<double>::infinity();
  for (unsigned i = 0; i < width; ++i)
    latest = std::max(latest, response.paths[row * width + i] + inputs[i]);
  return latest;
}

/// The map of a pipeline's first stages (PrefixResponse), applied to the
/// arrival times of the gradients in the replay of the whole pipeline,
/// gives the end of every forward pass on the last of them and the end of
/// their work in that replay.
TEST(Simulator, PrefixResponseComposesTheReplay) {
  std::mt19937 rng(53);
  PrefixResponse response;
  unsigned checked = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(2, 7)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 10)(rng);
    auto [stages, cut] = randomStages(rng, numStages);
    Expected<Simulation> whole =
        replay(stages, cut, Schedule::OneFOneB, true, m, true);
    ASSERT_TRUE(bool(whole));
    for (unsigned k = 1; k < numStages; ++k) {
      prefixResponse(ArrayRef(stages).take_front(k),
                     ArrayRef(cut).take_front(k - 1), numStages, m, response);
      ASSERT_EQ(response.paths.size(), size_t(m + 1) * (m + 1));
      // The inputs: each gradient's arrival at stage k - 1, then the start.
      std::vector<double> inputs(m + 1, 0), forwardEnd(m, 0);
      double end = 0;
      for (const SimEvent &event : whole->events) {
        if (event.kind == SimEvent::Gradient && event.stage == k)
          inputs[event.microbatch] = event.endMs;
        if (event.kind == SimEvent::Forward && event.stage == k - 1)
          forwardEnd[event.microbatch] = event.endMs;
        if (event.kind <= SimEvent::Backward && event.stage < k)
          end = std::max(end, event.endMs);
      }
      for (unsigned mb = 0; mb < m; ++mb)
        EXPECT_NEAR(respond(response, mb, inputs), forwardEnd[mb],
                    1e-9 * whole->iterationMs)
            << "trial " << trial << " k " << k << " microbatch " << mb;
      EXPECT_NEAR(respond(response, m, inputs), end, 1e-9 * whole->iterationMs)
          << "trial " << trial << " k " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 800u);
}

/// The store of maps answers as a comparison with every map kept under the
/// key would: a map is skipped exactly when one kept is no later at every
/// finite entry, whichever entry tells them apart.
TEST(Simulator, PrefixMapsSkipExactlyTheMapsOneKeptBeats) {
  std::mt19937 rng(41);
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  constexpr unsigned kWidth = 13;
  // One shape: entry (i, j) is finite when j < i or j is the last column.
  auto randomMap = [&] {
    std::vector<double> paths(kWidth * kWidth, kNone);
    for (unsigned i = 0; i < kWidth; ++i)
      for (unsigned j = 0; j < kWidth; ++j)
        if (j < i || j == kWidth - 1)
          paths[i * kWidth + j] = double(rng() % 50);
    return paths;
  };
  auto noLaterAnywhere = [](const std::vector<double> &a,
                            const std::vector<double> &b) {
    for (auto [x, y] : llvm::zip(a, b))
      if (x > y)
        return false;
    return true;
  };
  for (size_t limit : {size_t(1) << 20, size_t(600)}) {
    PrefixMaps maps(limit);
    std::map<std::string, std::vector<std::vector<double>>> kept;
    size_t keptNumbers = 0;
    unsigned skipped = 0, searched = 0;
    for (unsigned query = 0; query < 3000; ++query) {
      std::string key = rng() % 4 ? "a" : "b";
      std::vector<std::vector<double>> &ofKey = kept[key];
      std::vector<double> paths;
      if (ofKey.empty() || rng() % 4 == 0) {
        paths = randomMap();
      } else {
        // A map kept, one finite entry (most often not a probe) moved.
        paths = ofKey[rng() % ofKey.size()];
        unsigned entry;
        do
          entry = rng() % paths.size();
        while (paths[entry] == kNone);
        paths[entry] += rng() % 2 ? 0.5 : -0.5;
      }
      bool beaten = llvm::any_of(ofKey, [&](const std::vector<double> &map) {
        return noLaterAnywhere(map, paths);
      });
      uint64_t steps = 0;
      EXPECT_EQ(maps.dominatedOrKeep(key, paths, steps), beaten)
          << "query " << query;
      skipped += beaten;
      searched += !beaten;
      size_t numbers = 1 + 8 + (kWidth * (kWidth - 1)) / 2 + kWidth;
      if (!beaten && keptNumbers + numbers <= limit) {
        ofKey.push_back(paths);
        keptNumbers += numbers;
      }
      EXPECT_EQ(maps.numbers(), keptNumbers);
    }
    EXPECT_GT(skipped, 500u);
    EXPECT_GT(searched, 500u);
    maps.clear();
    uint64_t steps = 0;
    EXPECT_FALSE(maps.dominatedOrKeep("a", kept["a"].front(), steps));
    EXPECT_EQ(maps.numbers(), size_t(1 + 8 + 78 + 13));
  }
  // A map of sum zero, or below, beats its copy too.
  for (double value : {0.0, -1.0}) {
    PrefixMaps maps(1 << 10);
    uint64_t steps = 0;
    std::vector<double> paths = {value, kNone, value};
    EXPECT_FALSE(maps.dominatedOrKeep("z", paths, steps));
    EXPECT_TRUE(maps.dominatedOrKeep("z", paths, steps)) << value;
  }
}

/// First stages whose map is no later anywhere than another's of the same
/// shape replay no slower than it followed by any stages: the rule by which
/// the replay search skips partial plans.
TEST(Simulator, PrefixesNoLaterAnywhereReplayNoSlower) {
  std::mt19937 rng(54);
  std::uniform_real_distribution<double> scale(0.8, 1.25);
  PrefixResponse first, second;
  unsigned dominated = 0, faster = 0;
  for (unsigned trial = 0; trial < 3000; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(3, 7)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 10)(rng);
    unsigned k = std::uniform_int_distribution<unsigned>(1, numStages - 1)(rng);
    auto [stages, cut] = randomStages(rng, numStages);
    // Other first stages: each time scaled, some up and some down.
    std::vector<ReplayStage> other(stages.begin(), stages.begin() + k);
    std::vector<double> otherCut(cut.begin(), cut.begin() + k - 1);
    for (ReplayStage &stage : other)
      stage = {stage.forwardMs * scale(rng), stage.recomputeMs * scale(rng),
               stage.backwardMs * scale(rng)};
    for (double &x : otherCut)
      x *= scale(rng);
    prefixResponse(ArrayRef(stages).take_front(k),
                   ArrayRef(cut).take_front(k - 1), numStages, m, first);
    prefixResponse(other, otherCut, numStages, m, second);
    if (!llvm::all_of(llvm::zip(first.paths, second.paths), [](auto pair) {
          return std::get<0>(pair) <= std::get<1>(pair);
        }))
      continue;
    // Only where some time of the other first stages is shorter.
    bool shorter = false;
    for (unsigned s = 0; s < k; ++s)
      shorter |= other[s].forwardMs < stages[s].forwardMs ||
                 other[s].recomputeMs < stages[s].recomputeMs ||
                 other[s].backwardMs < stages[s].backwardMs ||
                 (s + 1 < k && otherCut[s] < cut[s]);
    if (!shorter)
      continue;
    ++dominated;
    // Any stages after: the replay with the first stages is no slower.
    for (unsigned again = 0; again < 5; ++again) {
      auto [rest, restCut] = randomStages(rng, numStages - k);
      std::vector<ReplayStage> a(stages.begin(), stages.begin() + k), b = other;
      a.insert(a.end(), rest.begin(), rest.end());
      b.insert(b.end(), rest.begin(), rest.end());
      std::vector<double> aCut(cut.begin(), cut.begin() + k - 1),
          bCut = otherCut;
      double link = std::uniform_real_distribution<double>(0.01, 2)(rng);
      for (std::vector<double> *c : {&aCut, &bCut}) {
        c->push_back(link);
        c->insert(c->end(), restCut.begin(), restCut.end());
      }
      double ra = replay(a, aCut, Schedule::OneFOneB, true, m)->iterationMs;
      double rb = replay(b, bCut, Schedule::OneFOneB, true, m)->iterationMs;
      EXPECT_LE(ra, rb * (1 + 1e-12)) << "trial " << trial;
      faster += ra < rb * (1 - 1e-12);
    }
  }
  // Some scaled first stages have maps no later anywhere, though some of
  // their times grew.
  EXPECT_GT(dominated, 100u);
  EXPECT_GT(faster, 100u);
}

/// A replay that reuses the order of an earlier one of the same shape (a
/// ReplayScratch) times every step as a replay from scratch does.
TEST(Simulator, ReplaysInAKnownOrderMatch) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<double> time(0, 10);
  ReplayScratch scratch;
  unsigned reused = 0;
  for (unsigned trial = 0; trial < 100; ++trial) {
    unsigned numStages = std::uniform_int_distribution<unsigned>(1, 5)(rng);
    unsigned m = std::uniform_int_distribution<unsigned>(1, 6)(rng);
    Schedule schedule = rng() % 2 ? Schedule::GPipe : Schedule::OneFOneB;
    bool training = rng() % 4 != 0;
    // Three replays of each shape, with other times, then one under the
    // other schedule.
    for (unsigned again = 0; again < 4; ++again) {
      if (again == 3)
        schedule =
            schedule == Schedule::GPipe ? Schedule::OneFOneB : Schedule::GPipe;
      std::vector<ReplayStage> stages(numStages);
      for (ReplayStage &stage : stages)
        stage = {time(rng), rng() % 2 ? time(rng) : 0, time(rng)};
      std::vector<double> cut(numStages - 1);
      for (double &x : cut)
        x = time(rng) / 4;
      RoundTrip roundTrip;
      if (numStages > 1 && rng() % 2)
        roundTrip = {unsigned(1 + rng() % (numStages - 1)), time(rng) * 3};
      reused += scratch.knowsOrder(numStages, m, schedule, training);
      Expected<Simulation> fresh =
          replay(stages, cut, schedule, training, m, true, roundTrip);
      Expected<Simulation> known =
          replay(stages, cut, schedule, training, m, true, roundTrip, &scratch);
      ASSERT_TRUE(fresh && known);
      EXPECT_EQ(fresh->iterationMs, known->iterationMs) << "trial " << trial;
      EXPECT_EQ(fresh->bubbleFraction, known->bubbleFraction);
      ASSERT_EQ(fresh->events.size(), known->events.size());
      for (auto [a, b] : llvm::zip(fresh->events, known->events))
        EXPECT_TRUE(a.kind == b.kind && a.stage == b.stage &&
                    a.microbatch == b.microbatch && a.startMs == b.startMs &&
                    a.endMs == b.endMs)
            << "trial " << trial;
    }
  }
  EXPECT_GE(reused, 200u);
}

/// Uniform stages, free transfers: GPipe's bubble is (S-1)/(M+S-1) and
/// 1F1B's iteration takes as long.
TEST(Simulator, GPipeBubbleMatchesTheClosedForm) {
  LayerGraph graph;
  graph.values.push_back({0, -1});
  for (unsigned l = 0; l < 4; ++l) {
    PlanLayer layer;
    layer.name = "l" + std::to_string(l);
    OpCost cost;
    cost.flops = int64_t(1e12);
    cost.contraction = true;
    layer.ops = {cost};
    graph.layers.push_back(layer);
  }
  Cluster cluster;
  for (unsigned d = 0; d < 4; ++d)
    cluster.devices.push_back(
        {"g" + std::to_string(d), "h", *lookupDeviceKind("A100-80GB")});
  for (unsigned d = 0; d + 1 < 4; ++d)
    cluster.setLink(d, d + 1, {"ideal", 1e6, 0});
  for (unsigned m : {1u, 2u, 4u, 8u, 32u}) {
    for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB}) {
      PlanOptions options;
      options.training = true;
      options.microbatches = m;
      options.schedule = schedule;
      PlanProblem problem(graph, cluster, options);
      std::vector<StagePlan> plan;
      for (unsigned s = 0; s < 4; ++s)
        plan.push_back({s, s + 1, s, Recompute::None});
      Expected<Simulation> simulation = simulate(problem, plan);
      ASSERT_TRUE(bool(simulation));
      double stage = problem.stageCost(0, 1, 0, 0, Recompute::None).busyMs();
      EXPECT_NEAR(simulation->bubbleFraction, 3.0 / (m + 3), 1e-12);
      EXPECT_NEAR(simulation->iterationMs, (m + 3) * stage, 1e-9);
      // And the objective agrees on uniform stages.
      EXPECT_NEAR(problem.objectiveMs(plan), simulation->iterationMs, 1e-9);
    }
  }
}

/// Inference is a flow shop of identical jobs, whose makespan is exactly
/// the objective: sum + (M - 1) * max, transfers included.
TEST(Simulator, InferenceMatchesTheObjectiveExactly) {
  std::mt19937 rng(3);
  for (unsigned trial = 0; trial < 50; ++trial) {
    LayerGraph graph = randomLayerGraph(rng, 8, 1 << 20);
    Cluster cluster = randomCluster(rng, 4);
    PlanOptions options = randomOptions(rng);
    options.training = false;
    PlanProblem problem(graph, cluster, options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    Expected<Simulation> simulation = simulate(problem, plan->stages);
    ASSERT_TRUE(bool(simulation));
    EXPECT_NEAR(simulation->iterationMs, plan->objectiveMs,
                1e-9 * plan->objectiveMs);
  }
}

/// The step adds each stage's optimizer update after its last step: it is
/// the latest over the stages of that step's end plus the update, each
/// update recorded once, after every step of its stage; without training,
/// the step is the iteration.
TEST(Simulator, StepAddsEachStagesUpdateAfterItsLastStep) {
  std::mt19937 rng(12);
  unsigned longer = 0;
  for (unsigned trial = 0; trial < 60; ++trial) {
    RandomInstance instance = randomInstance(rng, 5, 10, int64_t(1) << 26);
    PlanProblem problem(instance.graph, instance.cluster, instance.options);
    Expected<PipelinePlan> plan = planPipeline(problem);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    Expected<Simulation> simulation = simulate(problem, plan->stages);
    ASSERT_TRUE(bool(simulation)) << llvm::toString(simulation.takeError());
    unsigned numStages = plan->stages.size();
    // Each stage's last step, and its update, which must come after it.
    std::vector<double> lastStep(numStages, 0);
    std::vector<std::vector<const SimEvent *>> updates(numStages);
    for (const SimEvent &event : simulation->events) {
      if (event.kind >= SimEvent::Activation)
        continue;
      EXPECT_TRUE(updates[event.stage].empty()) << "trial " << trial;
      if (event.kind == SimEvent::Update)
        updates[event.stage].push_back(&event);
      else
        lastStep[event.stage] = std::max(lastStep[event.stage], event.endMs);
    }
    if (!instance.options.training) {
      EXPECT_EQ(simulation->stepMs, simulation->iterationMs);
      for (unsigned s = 0; s < numStages; ++s)
        EXPECT_TRUE(updates[s].empty()) << "trial " << trial;
      continue;
    }
    double step = simulation->iterationMs;
    for (unsigned s = 0; s < numStages; ++s) {
      const StagePlan &stage = plan->stages[s];
      double update = problem
                          .stageCost(stage.begin, stage.end, stage.device,
                                     numStages - 1 - s, stage.recompute)
                          .optimizerMs;
      step = std::max(step, lastStep[s] + update);
      ASSERT_EQ(updates[s].size(), update > 0 ? 1u : 0u) << "trial " << trial;
      if (update > 0) {
        EXPECT_EQ(updates[s].front()->startMs, lastStep[s])
            << "trial " << trial;
        EXPECT_DOUBLE_EQ(updates[s].front()->endMs, lastStep[s] + update)
            << "trial " << trial;
      }
    }
    EXPECT_DOUBLE_EQ(simulation->stepMs, step) << "trial " << trial;
    longer += simulation->stepMs > simulation->iterationMs;
  }
  EXPECT_GT(longer, 20u);
}

TEST(Simulator, OneFOneBProgramsKeepAtMostSMinusIInFlight) {
  for (unsigned s = 0; s < 4; ++s) {
    std::vector<ProgramStep> program =
        stageProgram(Schedule::OneFOneB, true, s, 4, 8);
    ASSERT_EQ(program.size(), 16u);
    int inFlight = 0, most = 0;
    for (ProgramStep step : program) {
      inFlight += step.phase == Phase::Forward ? 1 : -1;
      most = std::max(most, inFlight);
      ASSERT_GE(inFlight, 0);
    }
    EXPECT_EQ(most, int(4 - s));
    EXPECT_EQ(inFlight, 0);
  }
}

} // namespace
