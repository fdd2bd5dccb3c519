//===- PipeInterfaces.h - interfaces of pipe ops ----------------*- C++ -*-===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_H
#define PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_H

#include "mlir/IR/OpDefinition.h"

#include <cstdint>
#include <initializer_list>

namespace mlir {
namespace pipe {

class GradientBuilder;

/// The elements of `value`, a statically shaped tensor; 0 for anything else.
int64_t tensorElements(Value value);
/// The product of `factors`, or INT64_MAX where it would overflow.
int64_t saturatingProduct(std::initializer_list<int64_t> factors);
/// a + b, or INT64_MAX where it would overflow.
int64_t saturatingSum(int64_t a, int64_t b);
/// The elements of `op`'s results, the bytes of its operands and of its
/// results: CostOpInterface's defaults.
int64_t resultElements(Operation *op);
int64_t operandBytes(Operation *op);
int64_t resultBytes(Operation *op);
/// The floating-point operations of `op`: CostOpInterface's answer, or its
/// default for an op without the interface. The planner and the targets
/// count work through this one place.
int64_t opFlops(Operation *op);

/// Ops whose every result element is computed from the operands' elements
/// at the same (broadcast) index: Pipe_Pointwise in PipeInterfaces.td.
template <typename ConcreteType>
class Pointwise : public OpTrait::TraitBase<ConcreteType, Pointwise> {};

} // namespace pipe
} // namespace mlir

#include "pipe/Dialect/Pipe/IR/PipeInterfaces.h.inc"

#endif // PIPE_DIALECT_PIPE_IR_PIPEINTERFACES_H
