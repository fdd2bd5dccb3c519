//===- PipeFolds.cpp - folders of the pipe dialect ------------------------===//
//
// Folds that are obviously right: identities, and constant evaluation of
// small tensors: the shape arithmetic of exported models (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains), and the elementwise ops over
// constants that exporters leave (a class token's Expand shape computed by
// Equal -> Where). Floating-point functions are evaluated in double
// precision and rounded to the element type.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::pipe;

/// Constant evaluation is for small tensors; leave large ones alone.
static constexpr int64_t kMaxFoldedElements = 1 << 14;

ElementsAttr mlir::pipe::elementsFromBytes(RankedTensorType type,
                                           StringRef name, StringRef bytes) {
  ArrayRef<char> raw(bytes.data(), bytes.size());
  if (type.getNumElements() <= kMaxInlineElements) {
    if (type.getElementType().isInteger(1)) {
      SmallVector<bool> values;
      for (char byte : bytes)
        values.push_back(byte != 0);
      return DenseElementsAttr::get(type, values);
    }
    bool splat = false;
    if (DenseElementsAttr::isValidRawBuffer(type, raw, splat))
      return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  size_t alignment =
      std::max<size_t>(1, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  return DenseResourceElementsAttr::get(
      type, name.empty() ? "constant" : name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, alignment));
}

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

/// Evaluates a pointwise op on constant operands of element type `In`
/// (APInt or APFloat), with numpy broadcasting: `fn` maps the operands'
/// elements at one index to the result's, or to nothing where the op is
/// undefined there (integer division by zero).
template <typename In, typename Out>
static Attribute
foldPointwise(ArrayRef<Attribute> operands, RankedTensorType resultType,
              function_ref<std::optional<Out>(ArrayRef<In>)> fn) {
  if (resultType.getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<SmallVector<In>> values;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Attribute operand : operands) {
    DenseElementsAttr dense = smallDense(operand);
    // Integers are evaluated as signed: unsigned ones are left to run time.
    constexpr bool isInt = std::is_same_v<In, APInt>;
    if (!dense || (isInt ? !dense.getElementType().isSignlessInteger()
                         : !isa<FloatType>(dense.getElementType())))
      return {};
    values.emplace_back(dense.getValues<In>());
    shapes.push_back(dense.getType().getShape());
  }
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<Out> results;
  SmallVector<In> args;
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    args.clear();
    for (auto [operand, operandShape] : llvm::zip(values, shapes))
      args.push_back(operand[broadcastSource(i, shape, operandShape)]);
    std::optional<Out> result = fn(args);
    if (!result)
      return {};
    results.push_back(*result);
  }
  return DenseElementsAttr::get(resultType, results);
}

/// A floating-point op in the operands' own precision.
static Attribute foldFloat(ArrayRef<Attribute> operands,
                           RankedTensorType resultType,
                           function_ref<APFloat(ArrayRef<APFloat>)> fn) {
  return foldPointwise<APFloat, APFloat>(
      operands, resultType,
      [&](ArrayRef<APFloat> x) -> std::optional<APFloat> { return fn(x); });
}

/// A floating-point function evaluated in double precision and rounded to
/// the element type, as the runtime's libm would within an ulp.
static Attribute foldFloatMath(ArrayRef<Attribute> operands,
                               RankedTensorType resultType,
                               function_ref<double(ArrayRef<double>)> fn) {
  return foldFloat(operands, resultType, [&](ArrayRef<APFloat> x) {
    SmallVector<double> args;
    for (const APFloat &value : x)
      args.push_back(value.convertToDouble());
    APFloat result(fn(args));
    bool losesInfo;
    result.convert(x[0].getSemantics(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
    return result;
  });
}

/// An arithmetic op on integers (`intFn`) or floats (`floatFn`).
static Attribute foldArith(
    ArrayRef<Attribute> operands, RankedTensorType resultType,
    function_ref<std::optional<APInt>(const APInt &, const APInt &)> intFn,
    function_ref<APFloat(const APFloat &, const APFloat &)> floatFn) {
  if (isa<FloatType>(resultType.getElementType()))
    return foldFloat(operands, resultType,
                     [&](ArrayRef<APFloat> x) { return floatFn(x[0], x[1]); });
  return foldPointwise<APInt, APInt>(
      operands, resultType,
      [&](ArrayRef<APInt> x) { return intFn(x[0], x[1]); });
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
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a + b; },
      [](const APFloat &a, const APFloat &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a - b; },
      [](const APFloat &a, const APFloat &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  if (Value v = foldIdentityOperand(getRhs(), adaptor.getLhs(), 1, getType()))
    return v;
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a * b; },
      [](const APFloat &a, const APFloat &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentityOperand(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  // ONNX integer division truncates toward zero, like APInt::sdiv.
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) { return a / b; });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a.sge(b) ? a : b; },
      [](const APFloat &a, const APFloat &b) { return llvm::maximum(a, b); });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldArith(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) { return a.sle(b) ? a : b; },
      [](const APFloat &a, const APFloat &b) { return llvm::minimum(a, b); });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (getLhs().getType().getElementType() !=
      getRhs().getType().getElementType())
    return {};
  return foldFloatMath(adaptor.getOperands(), getType(),
                       [](ArrayRef<double> x) { return std::pow(x[0], x[1]); });
}

/// A comparison of integers or floats into booleans.
static Attribute foldCompare(ArrayRef<Attribute> operands,
                             RankedTensorType resultType,
                             function_ref<bool(int)> holds) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(operands[0]);
  auto toBit = [](bool value) { return APInt(1, value); };
  if (dense && isa<FloatType>(dense.getElementType()))
    return foldPointwise<APFloat, APInt>(
        operands, resultType, [&](ArrayRef<APFloat> x) -> std::optional<APInt> {
          APFloat::cmpResult order = x[0].compare(x[1]);
          if (order == APFloat::cmpUnordered)
            return toBit(false);
          return toBit(holds(order == APFloat::cmpLessThan      ? -1
                             : order == APFloat::cmpGreaterThan ? 1
                                                                : 0));
        });
  return foldPointwise<APInt, APInt>(
      operands, resultType, [&](ArrayRef<APInt> x) -> std::optional<APInt> {
        return toBit(holds(x[0].slt(x[1]) ? -1 : x[0].sgt(x[1]) ? 1 : 0));
      });
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(adaptor.getOperands(), getType(),
                     [](int order) { return order == 0; });
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldCompare(adaptor.getOperands(), getType(),
                     [](int order) { return order < 0; });
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldCompare(adaptor.getOperands(), getType(),
                     [](int order) { return order > 0; });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  return foldPointwise<APInt, APInt>(
      adaptor.getOperands(), getType(),
      [](ArrayRef<APInt> x) -> std::optional<APInt> { return ~x[0]; });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr condition = smallDense(adaptor.getCondition());
  DenseElementsAttr lhs = smallDense(adaptor.getLhs());
  DenseElementsAttr rhs = smallDense(adaptor.getRhs());
  RankedTensorType type = getType();
  if (!condition || !lhs || !rhs || type.getNumElements() > kMaxFoldedElements)
    return {};
  // Select through the attributes' own elements, whatever their type.
  SmallVector<bool> choose(condition.getValues<bool>());
  SmallVector<Attribute> left(lhs.getValues<Attribute>());
  SmallVector<Attribute> right(rhs.getValues<Attribute>());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<Attribute> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    values.push_back(
        choose[broadcastSource(i, shape, condition.getType().getShape())]
            ? left[broadcastSource(i, shape, lhs.getType().getShape())]
            : right[broadcastSource(i, shape, rhs.getType().getShape())]);
  return DenseElementsAttr::get(type, values);
}

/// A unary op on integers (`intFn`, null where it has no integer form) or
/// floats (`floatFn`, evaluated in double precision).
static Attribute foldUnary(Attribute operand, RankedTensorType type,
                           function_ref<double(double)> floatFn,
                           function_ref<APInt(const APInt &)> intFn = {}) {
  if (isa<FloatType>(type.getElementType()))
    return foldFloatMath(operand, type,
                         [&](ArrayRef<double> x) { return floatFn(x[0]); });
  if (!intFn)
    return {};
  return foldPointwise<APInt, APInt>(
      operand, type,
      [&](ArrayRef<APInt> x) -> std::optional<APInt> { return intFn(x[0]); });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(), [](double x) { return -x; },
      [](const APInt &x) { return -x; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(), [](double x) { return std::fabs(x); },
      [](const APInt &x) { return x.abs(); });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(), [](double x) { return x > 0 ? x : 0.0; },
      [](const APInt &x) {
        return x.isNegative() ? APInt(x.getBitWidth(), 0) : x;
      });
}

/// The floating-point functions, folded through `foldUnary`.
#define PIPE_FOLD_FLOAT_FUNCTION(OP, EXPR)                                     \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnary(adaptor.getInput(), getType(),                            \
                     [](double x) -> double { return EXPR; });                 \
  }
PIPE_FOLD_FLOAT_FUNCTION(ExpOp, std::exp(x))
PIPE_FOLD_FLOAT_FUNCTION(LogOp, std::log(x))
PIPE_FOLD_FLOAT_FUNCTION(SqrtOp, std::sqrt(x))
PIPE_FOLD_FLOAT_FUNCTION(ReciprocalOp, 1.0 / x)
PIPE_FOLD_FLOAT_FUNCTION(SigmoidOp, 1.0 / (1.0 + std::exp(-x)))
PIPE_FOLD_FLOAT_FUNCTION(SoftplusOp, x > 0 ? x + std::log1p(std::exp(-x))
                                           : std::log1p(std::exp(x)))
PIPE_FOLD_FLOAT_FUNCTION(TanhOp, std::tanh(x))
PIPE_FOLD_FLOAT_FUNCTION(ErfOp, std::erf(x))
#undef PIPE_FOLD_FLOAT_FUNCTION

OpFoldResult ClipOp::fold(FoldAdaptor adaptor) {
  std::optional<APFloat> min = getMin(), max = getMax();
  double low = min ? min->convertToDouble() : -INFINITY;
  double high = max ? max->convertToDouble() : INFINITY;
  return foldUnary(
      adaptor.getInput(), getType(),
      [&](double x) { return std::min(std::max(x, low), high); },
      [&](const APInt &x) {
        int64_t value = x.getSExtValue();
        if (min)
          value = std::max<int64_t>(value, static_cast<int64_t>(low));
        if (max)
          value = std::min<int64_t>(value, static_cast<int64_t>(high));
        return APInt(x.getBitWidth(), value, /*isSigned=*/true);
      });
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
