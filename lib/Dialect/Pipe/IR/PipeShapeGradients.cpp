//===- PipeShapeGradients.cpp - gradients of the shape ops ----------------===//
//
// GradientOpInterface for the ops of PipeShapeOps.td. Each rule builds the
// adjoints of an op's operands from those of its results.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/GradientBuilder.h"

using namespace mlir;
using namespace mlir::pipe;

LogicalResult ExpandOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.unbroadcast(grad, g.typeOf(getInput()));
  return success();
}

LogicalResult TileOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // [r0 d0, r1 d1, ...] -> [r0, d0, r1, d1, ...], summed over the r.
  auto inputType = g.typeOf(getInput());
  SmallVector<int64_t> split, axes;
  for (auto [d, repeat] : llvm::enumerate(getRepeats())) {
    axes.push_back(split.size());
    split.append({repeat, inputType.getDimSize(d)});
  }
  Value blocks = g.create<ReshapeOp>(
      RankedTensorType::get(split, inputType.getElementType()), grad);
  Value summed = g.create<ReduceSumOp>(blocks, b.getDenseI64ArrayAttr(axes));
  g.operandGrad(0) = g.create<ReshapeOp>(inputType, summed);
  return success();
}

LogicalResult PadOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // Constant mode: the gradient inside the input's window; cropped
  // parts (negative pads) get zeros. Reflect and edge modes: axis by
  // axis, the padded parts' gradients are added to the positions
  // they copied.
  auto inputType = g.typeOf(getInput());
  if (getMode() != PadMode::constant) {
    g.operandGrad(0) =
        g.unpad(grad, inputType, getPads(), getMode() == PadMode::reflect);
    return success(static_cast<bool>(g.operandGrad(0)));
  }
  int64_t rank = inputType.getRank();
  ArrayRef<int64_t> pads = getPads();
  SmallVector<int64_t> offsets, sizes, strides(rank, 1), crops(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    offsets.push_back(std::max<int64_t>(begin, 0));
    sizes.push_back(inputType.getDimSize(d) - std::max<int64_t>(-begin, 0) -
                    std::max<int64_t>(-end, 0));
    crops[d] = std::max<int64_t>(-begin, 0);
    crops[rank + d] = std::max<int64_t>(-end, 0);
  }
  Value inside = g.create<SliceOp>(grad, b.getDenseI64ArrayAttr(offsets),
                                   b.getDenseI64ArrayAttr(sizes),
                                   b.getDenseI64ArrayAttr(strides));
  g.operandGrad(0) = llvm::all_of(crops, [](int64_t c) { return !c; })
                         ? inside
                         : g.create<PadOp>(inside, crops, PadMode::constant,
                                           llvm::APFloat(0.0))
                               .getResult();
  return success();
}

LogicalResult TriluOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.create<TriluOp>(grad, getK(), getUpper());
  return success();
}

LogicalResult ConcatOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Each input gets its slice of the gradient.
  int64_t offset = 0, axis = getAxis();
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = g.typeOf(input).getDimSize(axis);
    g.operandGrad(i) = g.slice(grad, axis, offset, size);
    offset += size;
  }
  return success();
}

LogicalResult SplitOp::buildGradients(GradientBuilder &g) {
  // The pieces' gradients (zero for unused pieces), joined.
  g.operandGrad(0) = g.grads().size() == 1
                         ? g.grad()
                         : g.create<ConcatOp>(g.grads(), getAxis()).getResult();
  return success();
}

LogicalResult GatherOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // Scatter-add the gradient into the gathered rows, as
  // onehot(indices)^T times the gradient: the gathered axis k moved
  // first, the index dimensions of the gradient moved first and
  // flattened. Negative indices count from the end.
  Value data = getData(), indices = getIndices();
  auto dataType = g.typeOf(data), indexType = g.typeOf(indices);
  int64_t axis = getAxis(), rank = dataType.getRank();
  int64_t indexRank = indexType.getRank();
  int64_t count = indexType.getNumElements();
  int64_t rows = dataType.getDimSize(axis);
  int64_t width = dataType.getNumElements() / std::max<int64_t>(rows, 1);
  Type f = dataType.getElementType();
  Value extent = g.integers(indexType.getElementType(), {}, {rows});
  Value zero = g.integers(indexType.getElementType(), {}, {0});
  Value wrapped =
      g.where(g.less(indices, zero), g.add(indices, extent), indices);
  Value onehot = g.onehot(wrapped, rows, f);
  // The gradient is data[:k] + indices + data[k+1:]: indices first.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < indexRank; ++d)
    perm.push_back(axis + d);
  for (int64_t d = 0; d < g.typeOf(grad).getRank(); ++d)
    if (d < axis || d >= axis + indexRank)
      perm.push_back(d);
  Value moved = grad;
  if (axis != 0)
    moved = g.create<TransposeOp>(grad, b.getDenseI64ArrayAttr(perm));
  Value flat =
      g.create<ReshapeOp>(RankedTensorType::get({count, width}, f), moved);
  Value summed = g.create<MatMulOp>(g.transposeLast(onehot), flat);
  // [rows, data[:k], data[k+1:]] back to the data's order.
  SmallVector<int64_t> firstShape = {rows}, back;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      firstShape.push_back(dataType.getDimSize(d));
  for (int64_t d = 1; d <= axis; ++d)
    back.push_back(d);
  back.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    back.push_back(d);
  Value unflat =
      g.create<ReshapeOp>(RankedTensorType::get(firstShape, f), summed);
  g.operandGrad(0) =
      axis == 0 ? unflat
                : g.create<TransposeOp>(unflat, b.getDenseI64ArrayAttr(back))
                      .getResult();
  return success();
}

LogicalResult SliceOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // The gradient goes back to the positions the slice read, zeros
  // elsewhere. Along an axis with stride s, a negative stride is
  // first undone by reversing the gradient; then each element is
  // followed by s - 1 zeros (a concat with zeros on a new axis and a
  // reshape). A final pad (cropping where negative) places the
  // spread gradient at the slice's first position.
  auto inputType = g.typeOf(getInput());
  int64_t rank = inputType.getRank();
  Type f = inputType.getElementType();
  SmallVector<int64_t> pads(2 * rank);
  Value spread = grad;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t stride = getStrides()[d], size = getSizes()[d];
    int64_t first = getOffsets()[d];
    if (stride < 0 && size > 0) {
      // Reverse: the slice read first, first + stride, ...
      spread = g.reverse(spread, d);
      first += (size - 1) * stride;
      stride = -stride;
    }
    if (stride > 1 && size > 0) {
      auto current = g.typeOf(spread);
      SmallVector<int64_t> column(current.getShape());
      column.insert(column.begin() + d + 1, 1);
      SmallVector<int64_t> gaps(column);
      gaps[d + 1] = stride - 1;
      Value columns =
          g.create<ReshapeOp>(RankedTensorType::get(column, f), spread);
      Value zeros = g.constant(RankedTensorType::get(gaps, f), 0.0,
                               /*scalar=*/false);
      Value joined = g.create<ConcatOp>(ValueRange{columns, zeros}, d + 1);
      SmallVector<int64_t> flat(current.getShape());
      flat[d] *= stride;
      spread = g.create<ReshapeOp>(RankedTensorType::get(flat, f), joined);
    }
    pads[d] = first;
    pads[rank + d] =
        inputType.getDimSize(d) - first - g.typeOf(spread).getDimSize(d);
  }
  g.operandGrad(0) =
      g.create<PadOp>(spread, pads, PadMode::constant, llvm::APFloat(0.0));
  return success();
}

LogicalResult ReshapeOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.create<ReshapeOp>(getInput().getType(), grad);
  return success();
}

LogicalResult TransposeOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  g.operandGrad(0) =
      g.create<TransposeOp>(grad, b.getDenseI64ArrayAttr(inverse));
  return success();
}
