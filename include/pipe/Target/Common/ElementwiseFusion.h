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

/// A fused loop over a result of shape `shape` as two nested loops: `outer`
/// rows of `inner` elements, where the inner loop covers the result's
/// dimensions from `splitDim` on, and in it every operand is either
/// contiguous (its index advances with the result's) or fixed (broadcast).
/// The inner loop then vectorizes; the index arithmetic of broadcasting is
/// paid once per row.
struct BroadcastLoop {
  int64_t outer = 1;
  int64_t inner = 1;
  unsigned splitDim = 0;
};

/// The longest inner run of `shape`'s dimensions over which each operand
/// (numpy-broadcast to `shape`) is contiguous or fixed. A shape without
/// broadcast operands is one row.
BroadcastLoop splitBroadcastLoop(ArrayRef<int64_t> shape,
                                 ArrayRef<ArrayRef<int64_t>> operandShapes);

/// The values a fused step (`ops`, from groupSteps) reads from buffers:
/// every operand not computed inside it, in order of first use. With
/// `skipScalars`, operands of one element are left out.
SmallVector<Value> fusedStepOperands(ArrayRef<Operation *> ops,
                                     bool skipScalars);

/// The row-major strides of `shape`, in elements.
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape);

/// The step of `operandShape`'s row-major index per unit of each of
/// `shape`'s dimensions, 0 where the operand broadcasts.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> operandShape);

/// The C++ element type of `type` ("float", "int64_t", ...), or empty.
std::string cppElementType(Type type);

/// The scalar C++ expression `op` computes from its operands' scalar
/// expressions `operands`.
FailureOr<std::string> scalarExpression(Operation *op,
                                        ArrayRef<std::string> operands);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_COMMON_ELEMENTWISEFUSION_H
