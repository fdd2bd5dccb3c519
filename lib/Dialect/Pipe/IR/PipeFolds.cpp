//===- PipeFolds.cpp - folders of the pipe dialect ------------------------===//
//
// Folds that are obviously right: identities, and constant evaluation of the
// small integer tensors that shape arithmetic produces (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains of exported models).
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::pipe;

/// Constant evaluation is for shape arithmetic; leave large tensors alone.
static constexpr int64_t kMaxFoldedElements = 1 << 14;

static DenseElementsAttr smallDense(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldedElements)
    return {};
  return dense;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Maps a linear index of `result` to the linear index of the operand of
/// shape `operand` that numpy broadcasting reads.
static int64_t broadcastSource(int64_t linear, ArrayRef<int64_t> result,
                               ArrayRef<int64_t> operand) {
  SmallVector<int64_t> resultStrides = stridesOf(result);
  SmallVector<int64_t> operandStrides = stridesOf(operand);
  size_t offset = result.size() - operand.size();
  int64_t source = 0;
  for (size_t d = 0; d < result.size(); ++d) {
    int64_t index = (linear / resultStrides[d]) % result[d];
    if (d >= offset && operand[d - offset] != 1)
      source += index * operandStrides[d - offset];
  }
  return source;
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

/// Evaluates an integer binary op on constants, with broadcasting. `fn`
/// returns nothing where the op is undefined (division by zero).
static Attribute foldIntegerBinary(
    ArrayRef<Attribute> operands, RankedTensorType resultType,
    function_ref<std::optional<APInt>(const APInt &, const APInt &)> fn) {
  DenseElementsAttr lhs = smallDense(operands[0]);
  DenseElementsAttr rhs = smallDense(operands[1]);
  if (!lhs || !rhs || !isa<IntegerType>(resultType.getElementType()) ||
      resultType.getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<APInt> lhsValues(lhs.getValues<APInt>());
  SmallVector<APInt> rhsValues(rhs.getValues<APInt>());
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<APInt> values;
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    std::optional<APInt> value =
        fn(lhsValues[broadcastSource(i, shape, lhs.getType().getShape())],
           rhsValues[broadcastSource(i, shape, rhs.getType().getShape())]);
    if (!value)
      return {};
    values.push_back(*value);
  }
  return DenseElementsAttr::get(resultType, values);
}

/// Returns `value` when `constant` is a splat of `identity` that leaves it
/// unchanged and the result needs no broadcasting.
static Value foldIdentityOperand(Value value, Attribute constant,
                                 double identity, Type resultType) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(constant);
  if (!splat || value.getType() != resultType)
    return {};
  Type element = splat.getElementType();
  if (isa<FloatType>(element))
    return splat.getSplatValue<APFloat>().convertToDouble() == identity
               ? value
               : Value();
  if (isa<IntegerType>(element) && element.getIntOrFloatBitWidth() > 1)
    return splat.getSplatValue<APInt>().getSExtValue() ==
                   static_cast<int64_t>(identity)
               ? value
               : Value();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  if (Value v = foldIdentityOperand(getRhs(), adaptor.getLhs(), 0, getType()))
    return v;
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  if (Value v = foldIdentityOperand(getRhs(), adaptor.getLhs(), 1, getType()))
    return v;
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  // ONNX integer division truncates toward zero, like APInt::sdiv.
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return a.sdiv(b);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a.sge(b) ? a : b; });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a.sle(b) ? a : b; });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  DenseElementsAttr input = smallDense(adaptor.getInput());
  if (!input)
    return {};
  Type from = input.getElementType(), to = getType().getElementType();
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toInt && fromInt.getWidth() > 1 && toInt.getWidth() > 1) {
    SmallVector<APInt> values;
    for (const APInt &value : input.getValues<APInt>())
      values.push_back(value.sextOrTrunc(toInt.getWidth()));
    return DenseElementsAttr::get(getType(), values);
  }
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromInt && toFloat && fromInt.getWidth() > 1) {
    SmallVector<APFloat> values;
    for (const APInt &value : input.getValues<APInt>()) {
      APFloat converted(toFloat.getFloatSemantics());
      converted.convertFromAPInt(value, /*isSigned=*/true,
                                 APFloat::rmNearestTiesToEven);
      values.push_back(converted);
    }
    return DenseElementsAttr::get(getType(), values);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Constants and shape queries
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

OpFoldResult ShapeOp::fold(FoldAdaptor adaptor) {
  return DenseElementsAttr::get(getType(), getInput().getType().getShape());
}

OpFoldResult SizeOp::fold(FoldAdaptor adaptor) {
  return DenseElementsAttr::get(getType(),
                                {getInput().getType().getNumElements()});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) is one reshape of x.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q) is transpose(x, p o q).
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t axis : perm)
      composed.push_back(inner[axis]);
    setPerm(composed);
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  if (getType().getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute attr : adaptor.getInputs()) {
    DenseElementsAttr dense = smallDense(attr);
    if (!dense)
      return {};
    inputs.push_back(dense);
  }
  // Walk the result in row-major order: outer blocks before `axis`, then
  // each input's slab.
  int64_t axis = getAxis();
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr input : inputs)
    values.emplace_back(input.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [input, inputValues] : llvm::zip(inputs, values)) {
      int64_t slab = input.getNumElements() / std::max<int64_t>(outer, 1);
      llvm::append_range(
          result, ArrayRef<Attribute>(inputValues).slice(o * slab, slab));
    }
  return DenseElementsAttr::get(getType(), result);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType input = getInput().getType();
  bool identity =
      input == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  if (identity)
    return getInput();
  DenseElementsAttr dense = smallDense(adaptor.getInput());
  if (!dense)
    return {};
  if (dense.isSplat())
    return dense.resizeSplat(getType());
  SmallVector<Attribute> values(dense.getValues<Attribute>());
  SmallVector<int64_t> inputStrides = stridesOf(input.getShape());
  SmallVector<int64_t> resultStrides = stridesOf(getType().getShape());
  ArrayRef<int64_t> offsets = getOffsets(), strides = getStrides(),
                    sizes = getSizes();
  SmallVector<Attribute> result;
  for (int64_t i = 0, e = getType().getNumElements(); i < e; ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      int64_t index = (i / resultStrides[d]) % sizes[d];
      source += (offsets[d] + index * strides[d]) * inputStrides[d];
    }
    result.push_back(values[source]);
  }
  return DenseElementsAttr::get(getType(), result);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = smallDense(adaptor.getData());
  DenseElementsAttr indices = smallDense(adaptor.getIndices());
  if (!data || !indices || getType().getNumElements() > kMaxFoldedElements)
    return {};
  int64_t axis = getAxis();
  ArrayRef<int64_t> shape = data.getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t extent = shape[axis];
  SmallVector<Attribute> values(data.getValues<Attribute>());
  SmallVector<int64_t> picks;
  for (const APInt &index : indices.getValues<APInt>()) {
    int64_t i = index.getSExtValue();
    if (i < 0)
      i += extent;
    if (i < 0 || i >= extent)
      return {};
    picks.push_back(i);
  }
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t pick : picks)
      llvm::append_range(result, ArrayRef<Attribute>(values).slice(
                                     (o * extent + pick) * inner, inner));
  return DenseElementsAttr::get(getType(), result);
}

OpFoldResult DropoutOp::fold(FoldAdaptor adaptor) {
  if (getRatio().isZero())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Canonicalization patterns
//===----------------------------------------------------------------------===//

namespace {
/// A transpose that keeps the order of all non-unit axes only moves unit
/// axes around: it is a reshape, which later passes handle for free.
struct TransposeOfUnitAxesToReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = op.getInput().getType().getShape();
    int64_t previous = -1;
    for (int64_t axis : op.getPerm()) {
      if (shape[axis] == 1)
        continue;
      if (axis < previous)
        return rewriter.notifyMatchFailure(op, "moves a non-unit axis");
      previous = axis;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeOfUnitAxesToReshape>(context);
}
