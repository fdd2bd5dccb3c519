//===- Simulator.cpp - event-level replay of a pipeline schedule ----------===//

#include "pipe/Plan/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

/// Step `k` of the program of stage `stage` of `numStages`.
static ProgramStep programStep(Schedule schedule, bool training, unsigned stage,
                               unsigned numStages, unsigned microbatches,
                               unsigned k) {
  if (!training || schedule == Schedule::GPipe)
    return k < microbatches ? ProgramStep{Phase::Forward, k}
                            : ProgramStep{Phase::Backward, k - microbatches};
  unsigned warmup = std::min(numStages - 1 - stage, microbatches);
  if (k < warmup)
    return {Phase::Forward, k};
  unsigned steady = 2 * (microbatches - warmup);
  if (k < warmup + steady) {
    unsigned index = k - warmup;
    return index % 2 == 0 ? ProgramStep{Phase::Forward, warmup + index / 2}
                          : ProgramStep{Phase::Backward, index / 2};
  }
  return {Phase::Backward, microbatches - warmup + (k - warmup - steady)};
}

std::vector<ProgramStep> mlir::pipe::stageProgram(Schedule schedule,
                                                  bool training, unsigned stage,
                                                  unsigned numStages,
                                                  unsigned microbatches) {
  std::vector<ProgramStep> program;
  unsigned length = training ? 2 * microbatches : microbatches;
  for (unsigned k = 0; k < length; ++k)
    program.push_back(
        programStep(schedule, training, stage, numStages, microbatches, k));
  return program;
}

llvm::Expected<Simulation> mlir::pipe::simulate(const PlanProblem &problem,
                                                ArrayRef<StagePlan> plan,
                                                bool recordEvents,
                                                ReplayScratch *scratch) {
  unsigned numStages = plan.size();
  std::vector<ReplayStage> stages;
  std::vector<double> cut(numStages ? numStages - 1 : 0, 0);
  std::vector<double> updateMs;
  for (unsigned s = 0; s < numStages; ++s) {
    StageCost cost =
        problem.stageCost(plan[s].begin, plan[s].end, plan[s].device,
                          numStages - 1 - s, plan[s].recompute);
    stages.push_back({cost.forwardMs, cost.recomputeMs, cost.backwardMs});
    updateMs.push_back(cost.optimizerMs);
    if (s + 1 < numStages)
      cut[s] =
          problem.cutMs(plan[s].end - 1, plan[s].device, plan[s + 1].device);
  }
  const PlanOptions &options = problem.options();
  ReplayScratch local;
  ReplayScratch &space = scratch ? *scratch : local;
  llvm::Expected<Simulation> simulation =
      replay(stages, cut, options.schedule, options.training,
             options.microbatches, recordEvents, RoundTrip(), &space);
  if (!simulation)
    return simulation;
  // Each stage updates its parameters once its last step is done; the
  // gradients it sends on need no more of it.
  simulation->stepMs = simulation->iterationMs;
  if (options.training) {
    for (unsigned s = 0; s < numStages; ++s) {
      double start = space.deviceFree[s];
      simulation->stepMs = std::max(simulation->stepMs, start + updateMs[s]);
      if (recordEvents && updateMs[s] > 0)
        simulation->events.push_back(
            {SimEvent::Update, s, 0, start, start + updateMs[s]});
    }
  }
  return simulation;
}

llvm::Expected<Simulation> mlir::pipe::replay(ArrayRef<ReplayStage> costs,
                                              ArrayRef<double> cut,
                                              Schedule schedule, bool training,
                                              unsigned m, bool recordEvents,
                                              RoundTrip roundTrip,
                                              ReplayScratch *scratch) {
  unsigned numStages = costs.size();
  if (!numStages)
    return Simulation();

  ReplayScratch local;
  ReplayScratch &space = scratch ? *scratch : local;
  constexpr double kNotYet = -1;
  // Arrival of microbatch mb's activations at stage s, and of its gradient
  // at stage s (from s + 1): [s * m + mb].
  std::vector<double> &activationAt = space.activationAt,
                      &gradientAt = space.gradientAt,
                      &forwardDone = space.forwardDone;
  unsigned length = training ? 2 * m : m;
  size_t numSteps = size_t(length) * numStages;
  // Steps in a known order need no marks of what has not happened yet.
  bool known = scratch && scratch->knowsOrder(numStages, m, schedule, training);
  for (std::vector<double> *times : {&activationAt, &gradientAt, &forwardDone})
    if (known)
      times->resize(size_t(numStages) * m);
    else
      times->assign(size_t(numStages) * m, kNotYet);
  for (unsigned mb = 0; mb < m; ++mb)
    activationAt[mb] = 0;
  for (unsigned mb = 0; mb < m; ++mb)
    gradientAt[size_t(numStages - 1) * m + mb] = 0;
  std::vector<double> &deviceFree = space.deviceFree,
                      &downFree = space.downFree, &upFree = space.upFree,
                      &busy = space.busy;
  for (std::vector<double> *times : {&deviceFree, &downFree, &upFree, &busy})
    times->assign(numStages, 0);
  std::vector<unsigned> &next = space.next;
  next.assign(numStages, 0);

  Simulation simulation;
  auto record = [&](SimEvent::Kind kind, unsigned stage, unsigned mb,
                    double start, double duration) {
    // Every forward and backward pass is in the trace, those that take no
    // time (a stage of reshapes) too; a recompute or transfer that takes
    // none is none.
    if (recordEvents && (duration > 0 || kind == SimEvent::Forward ||
                         kind == SimEvent::Backward))
      simulation.events.push_back({kind, stage, mb, start, start + duration});
    return start + duration;
  };

  // Stages from the round trip's on that take no time, nor their
  // transfers, need no steps of their own once the order is known: they
  // run each step as soon as its inputs arrive, so a gradient leaves them
  // once the activations their programs take in before it have arrived,
  // which the last stage before them has sent before it needs the gradient;
  // it arrives there no sooner than its round trip.
  unsigned idleFrom = numStages;
  if (known && !recordEvents && training && schedule == Schedule::OneFOneB &&
      roundTrip.stage > 0 && roundTrip.stage < numStages) {
    idleFrom = roundTrip.stage;
    for (unsigned s = roundTrip.stage; s < numStages; ++s)
      if (costs[s].forwardMs || costs[s].recomputeMs || costs[s].backwardMs ||
          cut[s - 1])
        idleFrom = numStages;
  }

  // Where the round trip counts a cut of its own into the stages from
  // roundTrip.stage on: when each microbatch's activations arrive there
  // over it, one at a time.
  bool entry = training && schedule == Schedule::OneFOneB &&
               roundTrip.stage > 0 && roundTrip.stage < numStages &&
               (roundTrip.entryMs > 0 || roundTrip.firstMs > 0);
  std::vector<double> &entryAt = space.entryAt;
  if (entry)
    entryAt.assign(m, 0);
  double entryFree = 0;
  // The gradient of `mb` leaves the first stage from roundTrip.stage on
  // after its forward pass of this microbatch.
  auto entryBound = [&](unsigned mb) {
    unsigned after = std::min(mb + numStages - roundTrip.stage - 1, m - 1);
    return entryAt[after] + roundTrip.firstMs + roundTrip.entryMs;
  };

  // Runs step next[s] of stage s, whose inputs have arrived.
  auto run = [&](unsigned s, ProgramStep step) {
    unsigned mb = step.microbatch;
    if (step.phase == Phase::Backward && s + 1 == idleFrom &&
        idleFrom < numStages) {
      double &at = gradientAt[size_t(s) * m + mb];
      at = activationAt[size_t(idleFrom) * m + mb] + roundTrip.ms;
      if (!roundTrip.response.empty())
        at = std::max(at, activationAt[size_t(idleFrom) * m] +
                              roundTrip.response[mb]);
      if (entry)
        at = std::max(at, entryBound(mb));
    }
    if (step.phase == Phase::Forward) {
      double ready = activationAt[size_t(s) * m + mb];
      double start = std::max(deviceFree[s], ready);
      double end = record(SimEvent::Forward, s, mb, start, costs[s].forwardMs);
      forwardDone[size_t(s) * m + mb] = end;
      busy[s] += costs[s].forwardMs;
      deviceFree[s] = end;
      if (s + 1 < numStages) {
        double send = std::max(end, downFree[s]);
        downFree[s] = record(SimEvent::Activation, s, mb, send, cut[s]);
        activationAt[size_t(s + 1) * m + mb] = downFree[s];
        if (entry && s + 1 == roundTrip.stage)
          entryAt[mb] = entryFree =
              std::max(end, entryFree) + roundTrip.entryMs;
      }
    } else {
      double ready = gradientAt[size_t(s) * m + mb];
      double start = std::max(deviceFree[s], ready);
      double end =
          record(SimEvent::Recompute, s, mb, start, costs[s].recomputeMs);
      end = record(SimEvent::Backward, s, mb, end, costs[s].backwardMs);
      busy[s] += costs[s].recomputeMs + costs[s].backwardMs;
      deviceFree[s] = end;
      if (s > 0) {
        double send = std::max(end, upFree[s]);
        upFree[s] = record(SimEvent::Gradient, s, mb, send, cut[s - 1]);
        double arrival = upFree[s];
        if (s == roundTrip.stage) {
          arrival = std::max(arrival,
                             activationAt[size_t(s) * m + mb] + roundTrip.ms);
          if (!roundTrip.response.empty())
            arrival = std::max(arrival, activationAt[size_t(s) * m] +
                                            roundTrip.response[mb]);
          if (entry)
            arrival = std::max(arrival, entryBound(mb));
        }
        gradientAt[size_t(s - 1) * m + mb] = arrival;
      }
    }
    ++next[s];
  };

  if (known) {
    for (auto [s, step] : scratch->order)
      if (s < idleFrom)
        run(s, step);
  } else {
    std::vector<std::pair<unsigned, ProgramStep>> order;
    // Sweeps down the pipeline and back up in turn: activations flow
    // down, gradients up.
    for (bool up = false; order.size() < numSteps; up = !up) {
      bool progressed = false;
      for (unsigned i = 0; i < numStages; ++i) {
        unsigned s = up ? numStages - 1 - i : i;
        while (next[s] < length) {
          ProgramStep step =
              programStep(schedule, training, s, numStages, m, next[s]);
          unsigned mb = step.microbatch;
          if (step.phase == Phase::Forward
                  ? activationAt[size_t(s) * m + mb] == kNotYet
                  : gradientAt[size_t(s) * m + mb] == kNotYet ||
                        forwardDone[size_t(s) * m + mb] == kNotYet)
            break;
          run(s, step);
          order.push_back({s, step});
          progressed = true;
        }
      }
      if (!progressed) {
        std::string stuck;
        for (unsigned s = 0; s < numStages; ++s)
          if (next[s] < length) {
            ProgramStep step =
                programStep(schedule, training, s, numStages, m, next[s]);
            stuck += llvm::formatv(" stage {0} waits in {1}{2};", s,
                                   step.phase == Phase::Forward ? "F" : "B",
                                   step.microbatch);
          }
        return llvm::createStringError("the schedule deadlocks:" + stuck);
      }
    }
    if (scratch) {
      scratch->order = std::move(order);
      scratch->orderStages = numStages;
      scratch->orderMicrobatches = m;
      scratch->orderSchedule = schedule;
      scratch->orderTraining = training;
    }
  }

  // The optimizer updates follow the iteration's pipelined work (simulate
  // adds them).
  double end = 0;
  for (unsigned s = 0; s < numStages; ++s)
    end = std::max(end, deviceFree[s]);
  simulation.iterationMs = end;
  double total = 0;
  for (double b : busy)
    total += b;
  // The busy times add up to the iteration on one stage, but for rounding:
  // a bubble of -2e-16 is none.
  simulation.bubbleFraction =
      end > 0 && numStages
          ? std::max(0.0, 1.0 - total / (double(numStages) * end))
          : 0;
  return simulation;
}

void mlir::pipe::prefixResponse(ArrayRef<ReplayStage> stages,
                                ArrayRef<double> cut, unsigned numStages,
                                unsigned m, PrefixResponse &response) {
  unsigned k = stages.size(), width = m + 1;
  assert(k && k <= numStages && cut.size() + 1 >= k && "not a prefix");
  // The steps in an order that runs each after its inputs: the order a
  // replay of the whole pipeline found, restricted to these stages.
  std::vector<std::pair<unsigned, ProgramStep>> &order =
      response.orders[{numStages, k, m}];
  if (order.empty()) {
    ReplayScratch whole;
    std::vector<ReplayStage> idle(numStages);
    std::vector<double> noCut(numStages - 1, 0);
    llvm::cantFail(replay(idle, noCut, Schedule::OneFOneB, /*training=*/true, m,
                          /*recordEvents=*/false, RoundTrip(), &whole),
                   "1F1B never deadlocks");
    for (auto [s, step] : whole.order)
      if (s < k)
        order.push_back({s, step});
  }

  // Per event, the longest path from each input: [(s * m + mb) * width + i].
  // Only the first gradients reach an event, so each path vector keeps how
  // many columns may be finite before the start's (`reach`); those after
  // are -inf, whatever the vector holds there.
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  std::vector<double> &activationAt = response.activationAt,
                      &gradientAt = response.gradientAt,
                      &forwardDone = response.forwardDone,
                      &deviceFree = response.deviceFree,
                      &downFree = response.downFree, &upFree = response.upFree;
  std::vector<unsigned> &activationReach = response.activationReach,
                        &gradientReach = response.gradientReach,
                        &forwardReach = response.forwardReach,
                        &freeReach = response.freeReach,
                        &downReach = response.downReach,
                        &upReach = response.upReach;
  // Every event is written before it is read but the inputs.
  for (std::vector<double> *paths : {&activationAt, &gradientAt, &forwardDone})
    paths->resize(size_t(k) * m * width);
  for (std::vector<unsigned> *reach :
       {&activationReach, &gradientReach, &forwardReach})
    reach->resize(size_t(k) * m);
  for (std::vector<double> *paths : {&deviceFree, &downFree, &upFree}) {
    paths->resize(size_t(k) * width);
    for (unsigned s = 0; s < k; ++s)
      (*paths)[size_t(s) * width + m] = 0;
  }
  for (std::vector<unsigned> *reach : {&freeReach, &downReach, &upReach})
    reach->assign(k, 0);
  for (unsigned mb = 0; mb < m; ++mb) {
    activationAt[size_t(mb) * width + m] = 0;
    activationReach[mb] = 0;
    size_t at = size_t(k - 1) * m + mb;
    double *gradient = &gradientAt[at * width];
    std::fill_n(gradient, mb, kNone);
    gradient[mb] = 0;
    gradient[m] = kNone;
    gradientReach[at] = mb + 1;
  }
  // to = max(to, from) + ms, and its copy.
  auto advance = [m](double *to, unsigned &toReach, const double *from,
                     unsigned fromReach, double ms) {
    unsigned common = std::min(toReach, fromReach);
    for (unsigned i = 0; i < common; ++i)
      to[i] = std::max(to[i], from[i]) + ms;
    for (unsigned i = common; i < toReach; ++i)
      to[i] += ms;
    for (unsigned i = common; i < fromReach; ++i)
      to[i] = from[i] + ms;
    to[m] = std::max(to[m], from[m]) + ms;
    toReach = std::max(toReach, fromReach);
  };
  auto copy = [m](double *to, unsigned &toReach, const double *from,
                  unsigned fromReach) {
    std::copy_n(from, fromReach, to);
    to[m] = from[m];
    toReach = fromReach;
  };
  for (auto [s, step] : order) {
    size_t at = size_t(s) * m + step.microbatch;
    double *free = &deviceFree[size_t(s) * width];
    unsigned &reach = freeReach[s];
    if (step.phase == Phase::Forward) {
      advance(free, reach, &activationAt[at * width], activationReach[at],
              stages[s].forwardMs);
      copy(&forwardDone[at * width], forwardReach[at], free, reach);
      if (s + 1 < k) {
        double *link = &downFree[size_t(s) * width];
        advance(link, downReach[s], free, reach, cut[s]);
        copy(&activationAt[(at + m) * width], activationReach[at + m], link,
             downReach[s]);
      }
    } else {
      advance(free, reach, &gradientAt[at * width], gradientReach[at],
              stages[s].recomputeMs + stages[s].backwardMs);
      if (s > 0) {
        double *link = &upFree[size_t(s) * width];
        advance(link, upReach[s], free, reach, cut[s - 1]);
        copy(&gradientAt[(at - m) * width], gradientReach[at - m], link,
             upReach[s]);
      }
    }
  }
  std::vector<double> &paths = response.paths;
  paths.resize(size_t(width) * width);
  // A row of the map: the vector, -inf past its reach.
  auto row = [&](unsigned r, const double *from, unsigned fromReach) {
    double *to = &paths[size_t(r) * width];
    std::copy_n(from, fromReach, to);
    std::fill(to + fromReach, to + m, kNone);
    to[m] = from[m];
  };
  for (unsigned mb = 0; mb < m; ++mb) {
    size_t at = size_t(k - 1) * m + mb;
    row(mb, &forwardDone[at * width], forwardReach[at]);
  }
  unsigned endReach = freeReach[0];
  row(m, &deviceFree[0], endReach);
  for (unsigned s = 1; s < k; ++s)
    advance(&paths[size_t(m) * width], endReach, &deviceFree[size_t(s) * width],
            freeReach[s], 0);
  std::fill(&paths[size_t(m) * width] + endReach, &paths[size_t(m) * width] + m,
            kNone);
}

void mlir::pipe::writeChromeTrace(const Cluster &cluster,
                                  ArrayRef<StagePlan> plan,
                                  const Simulation &simulation,
                                  llvm::raw_ostream &os) {
  // Streamed, event by event: a trace of 65,536 microbatches has millions.
  llvm::json::OStream json(os, /*IndentSize=*/2);
  unsigned numStages = plan.size();
  // Tracks: stages 0..S-1, then the links down (activations) and up
  // (gradients).
  auto metadata = [&](unsigned tid, llvm::StringRef name,
                      llvm::function_ref<void()> args) {
    json.object([&] {
      json.attribute("name", name);
      json.attribute("ph", "M");
      json.attribute("pid", 0);
      json.attribute("tid", tid);
      json.attributeObject("args", args);
    });
  };
  auto name = [&](unsigned tid, const std::string &text) {
    metadata(tid, "thread_name", [&] { json.attribute("name", text); });
    metadata(tid, "thread_sort_index",
             [&] { json.attribute("sort_index", tid); });
  };
  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeArray("traceEvents", [&] {
      for (unsigned s = 0; s < numStages; ++s) {
        const Device &device = cluster.devices[plan[s].device];
        name(s, llvm::formatv("stage {0}: {1} ({2})", s, device.name,
                              device.spec.kind));
      }
      for (unsigned s = 0; s + 1 < numStages; ++s) {
        name(numStages + 2 * s, llvm::formatv("link {0} -> {1}", s, s + 1));
        name(numStages + 2 * s + 1, llvm::formatv("link {0} -> {1}", s + 1, s));
      }
      for (const SimEvent &event : simulation.events) {
        const char *kind = "";
        unsigned tid = event.stage;
        switch (event.kind) {
        case SimEvent::Forward:
          kind = "F";
          break;
        case SimEvent::Recompute:
          kind = "R";
          break;
        case SimEvent::Backward:
          kind = "B";
          break;
        case SimEvent::Update:
          kind = "update";
          break;
        case SimEvent::Activation:
          kind = "activations ";
          tid = numStages + 2 * event.stage;
          break;
        case SimEvent::Gradient:
          kind = "gradients ";
          tid = numStages + 2 * (event.stage - 1) + 1;
          break;
        }
        bool update = event.kind == SimEvent::Update;
        json.object([&] {
          json.attribute(
              "name",
              update ? std::string(kind)
                     : llvm::formatv("{0}{1}", kind, event.microbatch).str());
          json.attribute("cat", event.kind >= SimEvent::Activation ? "transfer"
                                                                   : "compute");
          json.attribute("ph", "X");
          json.attribute("pid", 0);
          json.attribute("tid", tid);
          json.attribute("ts", event.startMs * 1e3);
          json.attribute("dur", (event.endMs - event.startMs) * 1e3);
          json.attributeObject("args", [&] {
            if (!update)
              json.attribute("microbatch", event.microbatch);
          });
        });
      }
    });
  });
  os << "\n";
}
