//===- PipeElementwiseOps.cpp - elementwise ops and broadcasting ----------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <iterator>

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
mlir::pipe::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, extent] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (extent == out || extent == 1)
        continue;
      if (out != 1)
        return failure();
      out = extent;
    }
  }
  return result;
}

std::string mlir::pipe::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

std::string mlir::pipe::formatBytes(int64_t bytes) {
  static const char *const units[] = {"B",   "KiB", "MiB", "GiB",
                                      "TiB", "PiB", "EiB"};
  double value = double(bytes);
  unsigned unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return llvm::formatv(unit ? "{0:F1} {1}" : "{0:F0} {1}", value, units[unit]);
}

std::optional<int64_t> mlir::pipe::checkedTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  Type element = tensor.getElementType();
  unsigned bits = element.isIntOrFloat()
                      ? std::max(8u, element.getIntOrFloatBitWidth())
                      : 8;
  std::optional<int64_t> bytes = (bits + 7) / 8;
  for (int64_t dim : tensor.getShape())
    if (!(bytes = llvm::checkedMul(*bytes, dim)))
      return std::nullopt;
  return bytes;
}

int64_t mlir::pipe::tensorBytes(Type type) {
  return checkedTensorBytes(type).value_or(std::numeric_limits<int64_t>::max());
}

LogicalResult mlir::pipe::requireStaticShapes(std::optional<Location> loc,
                                              ValueRange operands) {
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return emitOptionalError(loc, "operand of type ", operand.getType(),
                               " is not a statically shaped tensor");
  }
  return success();
}

LogicalResult mlir::pipe::inferBroadcastResult(std::optional<Location> loc,
                                               ArrayRef<Type> operands,
                                               Type elementType,
                                               SmallVectorImpl<Type> &results) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Type type : operands) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return emitOptionalError(loc, "expected ranked tensor operands");
    shapes.push_back(tensor.getShape());
  }
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape)) {
    std::string list;
    llvm::raw_string_ostream os(list);
    llvm::interleaveComma(shapes, os,
                          [&](ArrayRef<int64_t> s) { os << formatShape(s); });
    return emitOptionalError(loc, "operand shapes ", list,
                             " are not broadcast-compatible");
  }
  if (!elementType)
    elementType = cast<RankedTensorType>(operands.front()).getElementType();
  results.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

LogicalResult mlir::pipe::verifySameElementType(Operation *op,
                                                ValueRange values) {
  Type element = cast<ShapedType>(values.front().getType()).getElementType();
  for (Value value : values.drop_front())
    if (cast<ShapedType>(value.getType()).getElementType() != element)
      return op->emitOpError("operand element types differ: ")
             << element << " vs "
             << cast<ShapedType>(value.getType()).getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// ClipOp
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  for (std::optional<APFloat> bound : {getMin(), getMax()})
    if (bound && bound->isNaN())
      return emitOpError("bounds must not be NaN");
  if (getMin() && getMax() &&
      getMin()->convertToDouble() > getMax()->convertToDouble())
    return emitOpError("min ") << getMin()->convertToDouble() << " exceeds max "
                               << getMax()->convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// PReluOp
//===----------------------------------------------------------------------===//

LogicalResult PReluOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult PReluOp::verify() {
  if (failed(verifySameElementType(*this, {getInput(), getSlope()})))
    return failure();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes({shape, getSlope().getType().getShape()});
  if (failed(broadcast) || ArrayRef<int64_t>(*broadcast) != shape)
    return emitOpError("slope shape ")
           << formatShape(getSlope().getType().getShape())
           << " does not broadcast to input shape " << formatShape(shape);
  return success();
}

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferBroadcastResult(
      loc,
      {adaptor.getCondition().getType(), adaptor.getLhs().getType(),
       adaptor.getRhs().getType()},
      cast<RankedTensorType>(adaptor.getLhs().getType()).getElementType(),
      types);
}

LogicalResult WhereOp::verify() {
  return verifySameElementType(*this, {getLhs(), getRhs()});
}

//===----------------------------------------------------------------------===//
// CostOpInterface
//===----------------------------------------------------------------------===//

// A cast converts; it counts no arithmetic.
int64_t CastOp::getFlops() { return 0; }
