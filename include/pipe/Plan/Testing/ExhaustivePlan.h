//===- ExhaustivePlan.h - every plan, for the tests -------------*- C++ -*-===//
//
// A test oracle, in the PipePlanTesting library that the planner's tests and
// benchmarks link and the compiler does not.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_TESTING_EXHAUSTIVEPLAN_H
#define PIPE_PLAN_TESTING_EXHAUSTIVEPLAN_H

#include "pipe/Plan/PlanProblem.h"

#include <optional>

namespace mlir {
namespace pipe {

/// Tries every plan (cut set, device sequence, recompute) and returns the
/// best objective: the reference the partitioner is tested against. Only
/// for small problems.
std::optional<PipelinePlan> exhaustivePlan(const PlanProblem &problem);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_TESTING_EXHAUSTIVEPLAN_H
