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

Operation *PipeDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
