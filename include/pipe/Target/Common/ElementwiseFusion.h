//===- ElementwiseFusion.h - fused loops of elementwise ops -----*- C++ -*-===//

#ifndef PIPE_TARGET_COMMON_ELEMENTWISEFUSION_H
#define PIPE_TARGET_COMMON_ELEMENTWISEFUSION_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <string>

namespace mlir {
namespace pipe {

/// Whether `op` computes each result element from the elements at the same
/// (broadcast) position of its operands, so the emitter may fuse it: the
/// ops with the Pointwise trait (PipeInterfaces.td).
bool isElementwise(Operation *op);

/// Splits `ops` (in program order) into steps: runs of elementwise ops that
/// fuse into one loop, and single other ops. An elementwise op joins the
/// open run when it has the run's result shape and reads the run's last
/// result, and that result has no other use: every value inside a run but
/// its last is then a scalar in registers, never a buffer.
SmallVector<SmallVector<Operation *>> groupSteps(ArrayRef<Operation *> ops);

/// The C++ element type of `type` ("float", "int64_t", ...), or empty.
std::string cppElementType(Type type);

/// The scalar C++ expression `op` computes from its operands' scalar
/// expressions `operands`.
FailureOr<std::string> scalarExpression(Operation *op,
                                        ArrayRef<std::string> operands);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_COMMON_ELEMENTWISEFUSION_H
