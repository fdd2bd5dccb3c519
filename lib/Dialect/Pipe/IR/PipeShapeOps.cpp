//===- PipeShapeOps.cpp - data movement and constant ops ------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

using namespace mlir;
using namespace mlir::pipe;

static RankedTensorType tensorOf(Type type) {
  return cast<RankedTensorType>(type);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  types.push_back(adaptor.getValue().getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("value must be a statically shaped tensor");
  return success();
}

void ConstantOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "cst");
}

//===----------------------------------------------------------------------===//
// ReshapeOp and ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (input.getElementType() != output.getElementType())
    return emitOpError("element type changes from ")
           << input.getElementType() << " to " << output.getElementType();
  if (input.getNumElements() != output.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(input.getShape()) << " (" << input.getNumElements()
           << " elements) to " << formatShape(output.getShape()) << " ("
           << output.getNumElements() << " elements)";
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (input.getElementType() != output.getElementType())
    return emitOpError("element type changes from ")
           << input.getElementType() << " to " << output.getElementType();
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes({input.getShape(), output.getShape()});
  if (failed(broadcast) || ArrayRef<int64_t>(*broadcast) != output.getShape())
    return emitOpError("cannot broadcast ")
           << formatShape(input.getShape()) << " to "
           << formatShape(output.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

RankedTensorType mlir::pipe::permutedType(RankedTensorType type,
                                          ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return RankedTensorType::get(shape, type.getElementType());
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for a rank-", input.getRank(),
                             " tensor");
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= input.getRank() || seen[axis])
      return emitOptionalError(loc, "perm ", formatShape(perm),
                               " is not a permutation");
    seen[axis] = true;
  }
  types.push_back(permutedType(input, perm));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp and SplitOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "expected at least one input");
  RankedTensorType first = tensorOf(adaptor.getInputs().front().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (Value input : adaptor.getInputs().drop_front()) {
    RankedTensorType type = tensorOf(input.getType());
    if (type.getElementType() != first.getElementType())
      return emitOptionalError(loc, "inputs have different element types");
    bool compatible = type.getRank() == first.getRank();
    for (int64_t d = 0; compatible && d < first.getRank(); ++d)
      compatible = d == axis || type.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return emitOptionalError(
          loc, "input shapes ", formatShape(first.getShape()), " and ",
          formatShape(type.getShape()), " differ outside axis ", axis);
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::verify() {
  RankedTensorType input = getInput().getType();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, input.getRank())))
    return failure();
  if (getOutputs().empty())
    return emitOpError("expected at least one result");
  int64_t total = 0;
  for (Type type : getOutputs().getTypes()) {
    RankedTensorType piece = tensorOf(type);
    bool compatible = piece.getRank() == input.getRank() &&
                      piece.getElementType() == input.getElementType();
    for (int64_t d = 0; compatible && d < input.getRank(); ++d)
      compatible = d == axis || piece.getDimSize(d) == input.getDimSize(d);
    if (!compatible)
      return emitOpError("result ") << piece << " does not match input "
                                    << input << " outside axis " << axis;
    total += piece.getDimSize(axis);
  }
  if (total != input.getDimSize(axis))
    return emitOpError("results cover ")
           << total << " elements of axis " << axis << ", input has "
           << input.getDimSize(axis);
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (static_cast<int64_t>(sizes.size()) != input.getRank())
    return emitOptionalError(loc, "sizes has ", sizes.size(),
                             " entries for a rank-", input.getRank(),
                             " tensor");
  for (auto [d, size] : llvm::enumerate(sizes))
    if (size < 0)
      return emitOptionalError(loc, "size of axis ", d, " is negative");
  types.push_back(RankedTensorType::get(sizes, input.getElementType()));
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes(),
                    strides = getStrides();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOpError("offsets and strides need ") << rank << " entries";
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 0)
      return emitOpError("stride of axis ") << d << " is zero";
    if (sizes[d] < 0)
      return emitOpError("size of axis ") << d << " is negative";
    if (sizes[d] == 0)
      continue;
    int64_t last = offsets[d] + (sizes[d] - 1) * strides[d];
    int64_t extent = input.getDimSize(d);
    if (offsets[d] < 0 || offsets[d] >= extent || last < 0 || last >= extent)
      return emitOpError("axis ")
             << d << " reads elements " << offsets[d] << " to " << last
             << " outside [0, " << extent << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp, TileOp, PadOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType data = tensorOf(adaptor.getData().getType());
  RankedTensorType indices = tensorOf(adaptor.getIndices().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (static_cast<int64_t>(repeats.size()) != input.getRank())
    return emitOptionalError(loc, "repeats has ", repeats.size(),
                             " entries for a rank-", input.getRank(),
                             " tensor");
  SmallVector<int64_t> shape;
  for (auto [extent, repeat] : llvm::zip(input.getShape(), repeats)) {
    if (repeat < 0)
      return emitOptionalError(loc, "repeats must be non-negative");
    shape.push_back(extent * repeat);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return emitOptionalError(loc, "pads has ", pads.size(),
                             " entries, expected ", 2 * rank);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t extent = input.getDimSize(d) + pads[d] + pads[rank + d];
    if (extent < 0)
      return emitOptionalError(loc, "pads crop axis ", d,
                               " to a negative extent");
    if (adaptor.getMode() == PadMode::reflect &&
        (pads[d] >= input.getDimSize(d) ||
         pads[rank + d] >= input.getDimSize(d)))
      return emitOptionalError(loc, "reflect pads of axis ", d,
                               " must be smaller than its extent ",
                               input.getDimSize(d));
    if (adaptor.getMode() != PadMode::constant && input.getDimSize(d) == 0 &&
        (pads[d] > 0 || pads[rank + d] > 0))
      return emitOptionalError(loc, "axis ", d,
                               " is empty; only constant mode can pad it");
    shape.push_back(extent);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ShapeOp and SizeOp
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  int64_t rank = tensorOf(adaptor.getInput().getType()).getRank();
  types.push_back(RankedTensorType::get({rank}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  types.push_back(RankedTensorType::get({}, IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// TriluOp and DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult TriluOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("input must have rank at least 2");
  return success();
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio ") << ratio << " must lie in [0, 1)";
  return success();
}

//===----------------------------------------------------------------------===//
// CostOpInterface
//===----------------------------------------------------------------------===//

// Data movement computes nothing; it reads and writes its tensors.

int64_t TransposeOp::getFlops() { return 0; }
int64_t ConcatOp::getFlops() { return 0; }
int64_t SplitOp::getFlops() { return 0; }
int64_t ExpandOp::getFlops() { return 0; }
int64_t TileOp::getFlops() { return 0; }
int64_t PadOp::getFlops() { return 0; }
int64_t TriluOp::getFlops() { return 0; }

// Gather and Slice read only what they pick: an embedding lookup reads a few
// rows of its table, not the table.

int64_t GatherOp::getFlops() { return 0; }
int64_t GatherOp::getBytesRead() {
  return saturatingSum(std::min(tensorBytes(getData().getType()),
                                tensorBytes(getResult().getType())),
                       tensorBytes(getIndices().getType()));
}

int64_t SliceOp::getFlops() { return 0; }
int64_t SliceOp::getBytesRead() {
  return std::min(tensorBytes(getInput().getType()),
                  tensorBytes(getResult().getType()));
}

// Constants are resident: the ops that read them count them. A reshape
// aliases its input.

int64_t ConstantOp::getFlops() { return 0; }
int64_t ConstantOp::getBytesRead() { return 0; }
int64_t ConstantOp::getBytesWritten() { return 0; }

int64_t ReshapeOp::getFlops() { return 0; }
int64_t ReshapeOp::getBytesRead() { return 0; }
int64_t ReshapeOp::getBytesWritten() { return 0; }
