//===- PipeDialect.cpp - pipe dialect registration ------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"
#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pipe;

#include "pipe/Dialect/Pipe/IR/PipeEnums.cpp.inc"
#include "pipe/Dialect/Pipe/IR/PipeOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "pipe/Dialect/Pipe/IR/PipeAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "pipe/Dialect/Pipe/IR/PipeOps.cpp.inc"

void PipeDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pipe/Dialect/Pipe/IR/PipeAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "pipe/Dialect/Pipe/IR/PipeOps.cpp.inc"
      >();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               Schedule schedule, int64_t microbatches,
                               bool training, ArrayAttr stages,
                               DictionaryAttr report) {
  if (microbatches < 1)
    return emitError() << "a plan needs at least one microbatch, not "
                       << microbatches;
  if (stages.empty())
    return emitError() << "a plan needs at least one stage";
  for (auto [index, stage] : llvm::enumerate(stages)) {
    auto plan = dyn_cast<StagePlanAttr>(stage);
    if (!plan)
      return emitError() << "stage " << index
                         << " is not a #pipe.stage_plan: " << stage;
    if (plan.getIndex() != static_cast<int64_t>(index))
      return emitError() << "stage " << index << " has index "
                         << plan.getIndex() << "; stages come in order";
    if (plan.getDevice().getValue().empty())
      return emitError() << "stage " << index << " names no device";
  }
  return success();
}

Operation *PipeDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
