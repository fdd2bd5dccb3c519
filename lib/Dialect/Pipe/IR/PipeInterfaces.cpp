//===- PipeInterfaces.cpp - interfaces of pipe ops ------------------------===//
//
// The interfaces' defaults. Each op family implements what it answers
// otherwise beside its definition (PipeNNOps.cpp, PipeShapeOps.cpp, ...).
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeInterfaces.h"
#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::pipe;

#include "pipe/Dialect/Pipe/IR/PipeInterfaces.cpp.inc"

int64_t mlir::pipe::tensorElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

int64_t mlir::pipe::saturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors)
    if (llvm::MulOverflow(result, factor, result))
      return std::numeric_limits<int64_t>::max();
  return result;
}

int64_t mlir::pipe::saturatingSum(int64_t a, int64_t b) {
  int64_t result;
  return llvm::AddOverflow(a, b, result) ? std::numeric_limits<int64_t>::max()
                                         : result;
}

int64_t mlir::pipe::resultElements(Operation *op) {
  int64_t count = 0;
  for (Value result : op->getResults())
    count = saturatingSum(count, tensorElements(result));
  return count;
}

int64_t mlir::pipe::operandBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value operand : op->getOperands())
    bytes += tensorBytes(operand.getType());
  return bytes;
}

int64_t mlir::pipe::resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value result : op->getResults())
    bytes += tensorBytes(result.getType());
  return bytes;
}

int64_t mlir::pipe::opFlops(Operation *op) {
  if (auto costly = dyn_cast<CostOpInterface>(op))
    return costly.getFlops();
  return resultElements(op);
}
