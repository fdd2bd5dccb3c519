//===- GradientBuilder.cpp - what gradient rules build with ---------------===//

#include "pipe/Dialect/Pipe/IR/GradientBuilder.h"

using namespace mlir;
using namespace mlir::pipe;

void GradientBuilder::begin(Operation *op, ArrayRef<Value> grads) {
  loc = op->getLoc();
  resultGrads.assign(grads.begin(), grads.end());
  operandGrads.assign(op->getNumOperands(), Value());
}

Value GradientBuilder::constant(RankedTensorType type, double value,
                                bool scalar) {
  auto tensorType =
      scalar ? RankedTensorType::get({}, type.getElementType()) : type;
  auto attr = DenseElementsAttr::get(
      tensorType, builder.getFloatAttr(type.getElementType(), value));
  return create<ConstantOp>(attr);
}

Value GradientBuilder::unbroadcast(Value grad, RankedTensorType target) {
  auto type = cast<RankedTensorType>(grad.getType());
  if (type.getShape() == target.getShape())
    return grad;
  SmallVector<int64_t> axes;
  int64_t extra = type.getRank() - target.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d < extra ||
        (target.getDimSize(d - extra) == 1 && type.getDimSize(d) != 1))
      axes.push_back(d);
  Value summed = grad;
  if (!axes.empty())
    summed = create<ReduceSumOp>(grad, builder.getDenseI64ArrayAttr(axes),
                                 builder.getUnitAttr());
  if (cast<RankedTensorType>(summed.getType()).getShape() != target.getShape())
    summed = create<ReshapeOp>(target, summed);
  return summed;
}

Value GradientBuilder::integers(Type element, ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> values) {
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> bits;
  for (int64_t value : values)
    bits.push_back(APInt(width, value, /*isSigned=*/true));
  return create<ConstantOp>(
      DenseElementsAttr::get(RankedTensorType::get(shape, element), bits));
}

Value GradientBuilder::onehot(Value indices, int64_t classes, Type element) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type index = type.getElementType();
  int64_t count = type.getNumElements();
  Value column =
      create<ReshapeOp>(RankedTensorType::get({count, 1}, index), indices);
  SmallVector<int64_t> values;
  for (int64_t k = 0; k < classes; ++k)
    values.push_back(k);
  Value iota = integers(index, {classes}, values);
  return create<CastOp>(RankedTensorType::get({count, classes}, element),
                        equal(column, iota));
}

std::pair<Value, Value>
GradientBuilder::normalization(Value x, Value grad, Value scale,
                               ArrayRef<int64_t> axisList, double epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  auto axes = builder.getDenseI64ArrayAttr(axisList);
  auto keep = builder.getUnitAttr();
  Value mean = create<ReduceMeanOp>(x, axes, keep);
  Value centred = sub(x, mean);
  Value variance = create<ReduceMeanOp>(mul(centred, centred), axes, keep);
  Value sigma = create<SqrtOp>(add(variance, constant(type, epsilon)));
  Value xhat = div(centred, sigma);
  Value gs = mul(grad, scale);
  Value meanGs = create<ReduceMeanOp>(gs, axes, keep);
  Value meanGsX = create<ReduceMeanOp>(mul(gs, xhat), axes, keep);
  Value inner = sub(sub(gs, meanGs), mul(xhat, meanGsX));
  return {div(inner, sigma), xhat};
}

std::tuple<Value, Value, Value>
GradientBuilder::channelNormalization(Value x, Value scale, double epsilon,
                                      Value grad) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  auto [dx, xhat] =
      normalization(x, grad, perChannel(scale, type), axes, epsilon);
  return {dx, sumPerChannel(mul(grad, xhat)), sumPerChannel(grad)};
}

Value GradientBuilder::perChannel(Value scale, RankedTensorType type) {
  SmallVector<int64_t> shape = {type.getDimSize(1)};
  shape.append(type.getRank() - 2, 1);
  return create<ReshapeOp>(RankedTensorType::get(shape, type.getElementType()),
                           scale);
}

Value GradientBuilder::sumPerChannel(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  return create<ReduceSumOp>(value, builder.getDenseI64ArrayAttr(axes));
}

Value GradientBuilder::reverse(Value value, int64_t axis) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  offsets[axis] = type.getDimSize(axis) - 1;
  strides[axis] = -1;
  return create<SliceOp>(value, builder.getDenseI64ArrayAttr(offsets),
                         builder.getDenseI64ArrayAttr(sizes),
                         builder.getDenseI64ArrayAttr(strides));
}

Value GradientBuilder::zeroPad(Value value, int64_t axis, int64_t before,
                               int64_t after) {
  if (!before && !after)
    return value;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[axis] = before;
  pads[rank + axis] = after;
  return create<PadOp>(value, pads, PadMode::constant, llvm::APFloat(0.0));
}

Value GradientBuilder::unpad(Value grad, RankedTensorType input,
                             ArrayRef<int64_t> pads, bool reflect) {
  int64_t rank = input.getRank();
  Value current = grad;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[rank + d];
    int64_t n = input.getDimSize(d);
    if (before < 0 || after < 0 || (reflect && (before >= n || after >= n)))
      return nullptr;
    if (!before && !after)
      continue;
    Value inside = slice(current, d, before, n);
    auto addAt = [&](Value part, int64_t at, int64_t length) {
      inside = add(inside, zeroPad(part, d, at, n - at - length));
    };
    if (before) {
      Value left = slice(current, d, 0, before);
      if (reflect) // out[i] = in[before - i]: in[1 .. before]
        addAt(reverse(left, d), 1, before);
      else
        addAt(create<ReduceSumOp>(left, builder.getDenseI64ArrayAttr({d}),
                                  builder.getUnitAttr()),
              0, 1);
    }
    if (after) {
      Value right = slice(current, d, before + n, after);
      if (reflect) // out[before + n + k] = in[n - 2 - k]
        addAt(reverse(right, d), n - 1 - after, after);
      else
        addAt(create<ReduceSumOp>(right, builder.getDenseI64ArrayAttr({d}),
                                  builder.getUnitAttr()),
              n - 1, 1);
    }
    current = inside;
  }
  return current;
}

Value GradientBuilder::slice(Value value, int64_t axis, int64_t offset,
                             int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  offsets[axis] = offset;
  sizes[axis] = size;
  if (sizes == SmallVector<int64_t>(type.getShape()))
    return value;
  return create<SliceOp>(value, builder.getDenseI64ArrayAttr(offsets),
                         builder.getDenseI64ArrayAttr(sizes),
                         builder.getDenseI64ArrayAttr(strides));
}

Value GradientBuilder::toRows(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 2)
    return value;
  SmallVector<int64_t> perm = {0};
  for (int64_t d = 2; d < type.getRank(); ++d)
    perm.push_back(d);
  perm.push_back(1);
  Value moved = create<TransposeOp>(value, builder.getDenseI64ArrayAttr(perm));
  int64_t classes = type.getDimSize(1);
  return create<ReshapeOp>(
      RankedTensorType::get({type.getNumElements() / classes, classes},
                            type.getElementType()),
      moved);
}

Value GradientBuilder::fromRows(Value rows, RankedTensorType type) {
  if (type.getRank() == 2)
    return rows;
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  for (int64_t d = 2; d < type.getRank(); ++d)
    shape.push_back(type.getDimSize(d));
  shape.push_back(type.getDimSize(1));
  Value unflat = create<ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), rows);
  SmallVector<int64_t> perm = {0, type.getRank() - 1};
  for (int64_t d = 1; d < type.getRank() - 1; ++d)
    perm.push_back(d);
  return create<TransposeOp>(unflat, builder.getDenseI64ArrayAttr(perm));
}

Value GradientBuilder::transposeLast(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < type.getRank(); ++d)
    perm.push_back(d);
  std::swap(perm[type.getRank() - 1], perm[type.getRank() - 2]);
  return create<TransposeOp>(value, builder.getDenseI64ArrayAttr(perm));
}
