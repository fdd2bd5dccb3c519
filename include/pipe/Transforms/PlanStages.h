//===- PlanStages.h - --pipe-plan from a planning request -------*- C++ -*-===//
//
// The driver builds --pipe-plan from the command line's PlanRequest, which
// also carries what no pass option can: the ONNX nodes of the model as
// imported, to tell a cut point that compilation folded away from one that
// never was.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TRANSFORMS_PLANSTAGES_H
#define PIPE_TRANSFORMS_PLANSTAGES_H

#include "pipe/Plan/PlanDriver.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace pipe {

/// --pipe-plan for `request`.
std::unique_ptr<Pass> createPlanStages(PlanRequest request);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TRANSFORMS_PLANSTAGES_H
