//===- ONNXOpHandlers.cpp - one handler per ONNX op type ------------------===//
//
// The table from ONNX op type to handler. Most ops go through a few generic
// builders (unary, broadcasting binary, variadic); the rest resolve ONNX's
// opset-dependent forms (attributes that became inputs, auto_pad, clamped
// slices, shape arithmetic) into the static pipe ops.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterImpl.h"
#include "ONNXModelLoader.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

bool NodeContext::outputUsed(unsigned i) const {
  return i < static_cast<unsigned>(node.output_size()) &&
         !node.output(i).empty() && usedNames &&
         usedNames->count(node.output(i));
}

InFlightDiagnostic NodeContext::emitError() const {
  return mlir::emitError(loc) << node.op_type() << " node '" << displayName
                              << "': ";
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

const onnx::AttributeProto *
NodeContext::typedAttribute(StringRef name,
                            onnx::AttributeProto::AttributeType type) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || attr->type() == type)
    return attr;
  if (!badAttribute)
    emitError() << "attribute '" << name << "' must be of type "
                << onnx::AttributeProto::AttributeType_Name(type) << ", got "
                << onnx::AttributeProto::AttributeType_Name(attr->type());
  badAttribute = true;
  return nullptr;
}

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::INT);
  return attr ? attr->i() : defaultValue;
}

float NodeContext::getFloat(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::FLOAT);
  return attr ? attr->f() : defaultValue;
}

std::string NodeContext::getString(StringRef name,
                                   StringRef defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::STRING);
  return attr ? attr->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
NodeContext::getInts(StringRef name) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::INTS);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

/// Evaluates `value` when it only depends on constants, through the ops'
/// folders: the shape arithmetic of exported models (Shape -> Gather ->
/// Concat -> ...) feeds the shape inputs of later nodes.
static DenseElementsAttr
evaluateConstant(Value value,
                 const std::function<DenseElementsAttr(Value)> &resolve,
                 unsigned depth = 0) {
  if (!value || depth > 64)
    return {};
  Operation *op = value.getDefiningOp();
  if (!op)
    return {};
  if (auto constant = dyn_cast<ConstantOp>(op))
    return dyn_cast<DenseElementsAttr>(constant.getValue());
  if (isa<ParamRefOp>(op))
    return resolve ? resolve(value) : DenseElementsAttr();
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    DenseElementsAttr attr = evaluateConstant(operand, resolve, depth + 1);
    if (!attr)
      return {};
    operands.push_back(attr);
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.empty())
    return {};
  OpFoldResult result = results[cast<OpResult>(value).getResultNumber()];
  if (auto attr = dyn_cast<Attribute>(result))
    return dyn_cast<DenseElementsAttr>(attr);
  Value folded = cast<Value>(result);
  return folded == value ? DenseElementsAttr()
                         : evaluateConstant(folded, resolve, depth + 1);
}

DenseElementsAttr NodeContext::constantInput(unsigned i) const {
  return evaluateConstant(input(i), resolveConstant);
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  DenseElementsAttr attr = constantInput(i);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return emitError() << what
                       << " must be a constant integer tensor (shapes are "
                          "static)";
  SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

FailureOr<double> NodeContext::constantScalar(unsigned i, StringRef what) {
  DenseElementsAttr attr = constantInput(i);
  if (!attr || attr.getNumElements() != 1)
    return emitError() << what << " must be a constant scalar";
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>((*attr.getValues<APInt>().begin()).getSExtValue());
}

Value NodeContext::constant(DenseElementsAttr value) {
  return ConstantOp::create(builder, loc, value);
}

Value NodeContext::i64Constant(ArrayRef<int64_t> values,
                               ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

Value NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return ReshapeOp::create(builder, loc,
                           RankedTensorType::get(shape, type.getElementType()),
                           value);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Normalizes a possibly negative axis of a rank-`rank` tensor.
static FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis,
                                        int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return ctx.emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  return axis < 0 ? axis + rank : axis;
}

static LogicalResult setResult(NodeContext &ctx, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  ctx.results.push_back(*value);
  return success();
}

template <typename OpTy>
static FailureOr<Value> createValue(NodeContext &ctx, ValueRange operands,
                                    ArrayRef<NamedAttribute> attrs = {}) {
  FailureOr<OpTy> op = ctx.create<OpTy>(operands, attrs);
  if (failed(op))
    return failure();
  return op->getResult();
}

/// Resolves ONNX `auto_pad` and `pads` into explicit begin/end pads.
static FailureOr<SmallVector<int64_t>>
resolvePads(NodeContext &ctx, ArrayRef<int64_t> spatial,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
            ArrayRef<int64_t> dilations) {
  size_t n = spatial.size();
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> pads(2 * n, 0);
  if (autoPad == "NOTSET") {
    if (auto given = ctx.getInts("pads")) {
      if (given->size() != 2 * n)
        return ctx.emitError() << "pads has " << given->size()
                               << " entries, expected " << 2 * n;
      pads = *given;
    }
    return pads;
  }
  if (autoPad == "VALID")
    return pads;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.emitError() << "unsupported attribute value: auto_pad '"
                           << autoPad << "'";
  for (size_t i = 0; i < n; ++i) {
    int64_t out = llvm::divideCeil(spatial[i], strides[i]);
    int64_t total = std::max<int64_t>(
        0, (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 -
               spatial[i]);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[n + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

/// An integer list attribute with a default of `n` copies of `fill`.
static FailureOr<SmallVector<int64_t>> intsOr(NodeContext &ctx, StringRef name,
                                              size_t n, int64_t fill) {
  auto values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(n, fill);
  if (values->size() != n)
    return ctx.emitError() << name << " has " << values->size()
                           << " entries, expected " << n;
  return *values;
}

/// Reads axes from the attribute (older opsets) or input `inputIndex`.
static FailureOr<std::optional<SmallVector<int64_t>>>
axesFromAttrOrInput(NodeContext &ctx, int64_t inputSince, unsigned inputIndex) {
  if (ctx.opset < inputSince)
    return ctx.getInts("axes");
  if (!ctx.input(inputIndex))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(inputIndex, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult importUnary(NodeContext &ctx) {
  return setResult(ctx, createValue<OpTy>(ctx, ctx.input(0)));
}

/// Casts `value` to the element type of `like` when they differ.
static Value castLike(NodeContext &ctx, Value value, Value like) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = cast<RankedTensorType>(like.getType()).getElementType();
  if (type.getElementType() == element)
    return value;
  return CastOp::create(ctx.builder, ctx.loc, type.clone(element), value);
}

template <typename OpTy>
static LogicalResult importBinary(NodeContext &ctx) {
  return setResult(ctx, createValue<OpTy>(ctx, {ctx.input(0), ctx.input(1)}));
}

static LogicalResult importPow(NodeContext &ctx) {
  Value exponent = castLike(ctx, ctx.input(1), ctx.input(0));
  return setResult(ctx, createValue<PowOp>(ctx, {ctx.input(0), exponent}));
}

/// Sum, Max and Min take any number of inputs.
template <typename OpTy>
static LogicalResult importVariadic(NodeContext &ctx) {
  Value result = ctx.input(0);
  for (unsigned i = 1; i < ctx.numInputs(); ++i) {
    FailureOr<Value> next = createValue<OpTy>(ctx, {result, ctx.input(i)});
    if (failed(next))
      return failure();
    result = *next;
  }
  ctx.results.push_back(result);
  return success();
}

template <typename OpTy>
static LogicalResult importAlpha(NodeContext &ctx, float defaultAlpha) {
  Builder &b = ctx.builder;
  return setResult(ctx, createValue<OpTy>(
                            ctx, ctx.input(0),
                            {b.getNamedAttr("alpha", b.getF32FloatAttr(ctx.getFloat(
                                                         "alpha", defaultAlpha)))}));
}

static LogicalResult importSelu(NodeContext &ctx) {
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<SeluOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("alpha", b.getF32FloatAttr(ctx.getFloat(
                                            "alpha", 1.67326319217681884765625f))),
                b.getNamedAttr("gamma", b.getF32FloatAttr(ctx.getFloat(
                                            "gamma", 1.05070102214813232421875f)))}));
}

static LogicalResult importClip(NodeContext &ctx) {
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs;
  if (ctx.opset < 11) {
    if (ctx.attribute("min"))
      attrs.push_back(b.getNamedAttr("min", b.getF64FloatAttr(ctx.getFloat("min", 0))));
    if (ctx.attribute("max"))
      attrs.push_back(b.getNamedAttr("max", b.getF64FloatAttr(ctx.getFloat("max", 0))));
  } else {
    const char *names[] = {"min", "max"};
    for (unsigned i = 1; i <= 2; ++i) {
      if (!ctx.input(i))
        continue;
      FailureOr<double> bound = ctx.constantScalar(i, names[i - 1]);
      if (failed(bound))
        return failure();
      attrs.push_back(b.getNamedAttr(names[i - 1], b.getF64FloatAttr(*bound)));
    }
  }
  return setResult(ctx, createValue<ClipOp>(ctx, ctx.input(0), attrs));
}

static LogicalResult importCast(NodeContext &ctx) {
  int64_t to = ctx.getInt("to", 0);
  Type element = convertONNXElementType(ctx.builder.getContext(), to);
  if (!element)
    return ctx.emitError() << "unsupported target type " << to;
  RankedTensorType type = ctx.inputType(0);
  if (type.getElementType() == element) {
    ctx.results.push_back(ctx.input(0));
    return success();
  }
  ctx.results.push_back(
      CastOp::create(ctx.builder, ctx.loc, type.clone(element), ctx.input(0)));
  return success();
}

static LogicalResult importIdentity(NodeContext &ctx) {
  ctx.results.push_back(ctx.input(0));
  return success();
}

static LogicalResult importWhere(NodeContext &ctx) {
  return setResult(ctx, createValue<WhereOp>(
                            ctx, {ctx.input(0), ctx.input(1), ctx.input(2)}));
}

static LogicalResult importDropout(NodeContext &ctx) {
  if (ctx.outputUsed(1))
    return ctx.emitError() << "the mask output is not supported";
  float ratio = 0.5f;
  bool training = false;
  if (ctx.opset < 12) {
    ratio = ctx.getFloat("ratio", 0.5f);
    training = ctx.opset >= 7 ? false : !ctx.getInt("is_test", 0);
  } else {
    if (ctx.input(1)) {
      FailureOr<double> r = ctx.constantScalar(1, "ratio");
      if (failed(r))
        return failure();
      ratio = static_cast<float>(*r);
    }
    if (ctx.input(2)) {
      FailureOr<double> t = ctx.constantScalar(2, "training_mode");
      if (failed(t))
        return failure();
      training = *t != 0;
    }
  }
  if (!training || ratio == 0.0f) {
    ctx.results.push_back(ctx.input(0));
    return success();
  }
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("ratio", b.getF32FloatAttr(ratio))};
  if (ctx.attribute("seed"))
    attrs.push_back(b.getNamedAttr("seed", b.getI64IntegerAttr(ctx.getInt("seed", 0))));
  return setResult(ctx, createValue<DropoutOp>(ctx, ctx.input(0), attrs));
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling
//===----------------------------------------------------------------------===//

static LogicalResult importGemm(NodeContext &ctx) {
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("alpha", b.getF32FloatAttr(ctx.getFloat("alpha", 1.0f))),
      b.getNamedAttr("beta", b.getF32FloatAttr(ctx.getFloat("beta", 1.0f)))};
  if (ctx.getInt("transA", 0))
    attrs.push_back(b.getNamedAttr("trans_a", b.getUnitAttr()));
  if (ctx.getInt("transB", 0))
    attrs.push_back(b.getNamedAttr("trans_b", b.getUnitAttr()));
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
  return setResult(ctx, createValue<GemmOp>(ctx, operands, attrs));
}

static LogicalResult importConv(NodeContext &ctx) {
  RankedTensorType input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.emitError() << "input and weight must have the same rank, at "
                              "least 3";
  size_t n = input.getRank() - 2;
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  if (auto given = ctx.getInts("kernel_shape"); given && *given != kernel)
    return ctx.emitError() << "kernel_shape does not match the weight";
  auto strides = intsOr(ctx, "strides", n, 1);
  auto dilations = intsOr(ctx, "dilations", n, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  auto pads = resolvePads(ctx, input.getShape().drop_front(2), kernel,
                          *strides, *dilations);
  if (failed(pads))
    return failure();
  Builder &b = ctx.builder;
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
  return setResult(
      ctx, createValue<ConvOp>(
               ctx, operands,
               {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
                b.getNamedAttr("pads", b.getDenseI64ArrayAttr(*pads)),
                b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
                b.getNamedAttr("group", b.getI64IntegerAttr(ctx.getInt("group", 1)))}));
}

static LogicalResult importConvTranspose(NodeContext &ctx) {
  RankedTensorType input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.emitError() << "input and weight must have the same rank, at "
                              "least 3";
  size_t n = input.getRank() - 2;
  auto strides = intsOr(ctx, "strides", n, 1);
  auto dilations = intsOr(ctx, "dilations", n, 1);
  auto outputPadding = intsOr(ctx, "output_padding", n, 0);
  if (failed(strides) || failed(dilations) || failed(outputPadding))
    return failure();
  SmallVector<int64_t> pads(2 * n, 0);
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  auto outputShape = ctx.getInts("output_shape");
  if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Total padding from the requested output extent.
    SmallVector<int64_t> target;
    if (outputShape) {
      ArrayRef<int64_t> given = *outputShape;
      if (given.size() == n + 2)
        given = given.drop_front(2);
      if (given.size() != n)
        return ctx.emitError() << "output_shape has " << outputShape->size()
                               << " entries";
      target.assign(given.begin(), given.end());
    } else {
      for (size_t i = 0; i < n; ++i)
        target.push_back(input.getDimSize(2 + i) * (*strides)[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t total = (*strides)[i] * (input.getDimSize(2 + i) - 1) +
                      (*outputPadding)[i] +
                      ((weight.getDimSize(2 + i) - 1) * (*dilations)[i] + 1) -
                      target[i];
      if (total < 0)
        return ctx.emitError() << "output_shape is larger than the "
                                  "convolution can produce";
      // ONNX (opset 11 on): SAME_UPPER puts the odd unit at the end, every
      // other case (SAME_LOWER, or an explicit output_shape) at the start.
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[n + i] = total - pads[i];
    }
  } else if (autoPad == "NOTSET") {
    if (auto given = ctx.getInts("pads")) {
      if (given->size() != 2 * n)
        return ctx.emitError() << "pads has " << given->size()
                               << " entries, expected " << 2 * n;
      pads = *given;
    }
  } else if (autoPad != "VALID") {
    return ctx.emitError() << "unsupported attribute value: auto_pad '"
                           << autoPad << "'";
  }
  Builder &b = ctx.builder;
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
  return setResult(
      ctx,
      createValue<ConvTransposeOp>(
          ctx, operands,
          {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
           b.getNamedAttr("pads", b.getDenseI64ArrayAttr(pads)),
           b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
           b.getNamedAttr("output_padding", b.getDenseI64ArrayAttr(*outputPadding)),
           b.getNamedAttr("group", b.getI64IntegerAttr(ctx.getInt("group", 1)))}));
}

template <typename OpTy>
static LogicalResult importPool(NodeContext &ctx) {
  constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
  if (isMax && ctx.outputUsed(1))
    return ctx.emitError() << "the Indices output is not supported";
  RankedTensorType input = ctx.inputType(0);
  if (input.getRank() < 3)
    return ctx.emitError() << "input must have rank at least 3";
  size_t n = input.getRank() - 2;
  auto kernel = ctx.getInts("kernel_shape");
  if (!kernel || kernel->size() != n)
    return ctx.emitError() << "kernel_shape must have " << n << " entries";
  auto strides = intsOr(ctx, "strides", n, 1);
  auto dilations = intsOr(ctx, "dilations", n, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  if (!isMax && llvm::any_of(*dilations, [](int64_t d) { return d != 1; }))
    return ctx.emitError() << "unsupported attribute value: dilations other "
                              "than 1";
  auto pads = resolvePads(ctx, input.getShape().drop_front(2), *kernel,
                          *strides, *dilations);
  if (failed(pads))
    return failure();
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kernel_shape", b.getDenseI64ArrayAttr(*kernel)),
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
      b.getNamedAttr("pads", b.getDenseI64ArrayAttr(*pads))};
  if constexpr (isMax)
    attrs.push_back(b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)));
  if (ctx.getInt("ceil_mode", 0))
    attrs.push_back(b.getNamedAttr("ceil_mode", b.getUnitAttr()));
  if (!isMax && ctx.getInt("count_include_pad", 0))
    attrs.push_back(b.getNamedAttr("count_include_pad", b.getUnitAttr()));
  return setResult(ctx, createValue<OpTy>(ctx, ctx.input(0), attrs));
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

static LogicalResult importBatchNorm(NodeContext &ctx) {
  bool training = ctx.opset >= 14 ? ctx.getInt("training_mode", 0) != 0
                                  : ctx.outputUsed(1) || ctx.outputUsed(2);
  if (ctx.outputUsed(3) || ctx.outputUsed(4))
    return ctx.emitError() << "the saved_mean and saved_var outputs are not "
                              "supported";
  Builder &b = ctx.builder;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i)
    operands.push_back(ctx.input(i));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("epsilon", b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))};
  if (!training)
    return setResult(ctx, createValue<BatchNormOp>(ctx, operands, attrs));
  attrs.push_back(b.getNamedAttr(
      "momentum", b.getF32FloatAttr(ctx.getFloat("momentum", 0.9f))));
  FailureOr<BatchNormTrainOp> op = ctx.create<BatchNormTrainOp>(operands, attrs);
  if (failed(op))
    return failure();
  llvm::append_range(ctx.results, op->getResults());
  return success();
}

static LogicalResult importLayerNorm(NodeContext &ctx) {
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return ctx.emitError() << "the Mean and InvStdDev outputs are not "
                              "supported";
  if (ctx.getInt("stash_type", 1) != 1)
    return ctx.emitError() << "unsupported attribute value: stash_type "
                           << ctx.getInt("stash_type", 1);
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", -1), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  Builder &b = ctx.builder;
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
  return setResult(
      ctx, createValue<LayerNormOp>(
               ctx, operands,
               {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis)),
                b.getNamedAttr("epsilon",
                               b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))}));
}

static LogicalResult importInstanceNorm(NodeContext &ctx) {
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<InstanceNormOp>(
               ctx, {ctx.input(0), ctx.input(1), ctx.input(2)},
               {b.getNamedAttr("epsilon",
                               b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))}));
}

template <typename OpTy>
static LogicalResult importSoftmax(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  Builder &b = ctx.builder;
  if (ctx.opset >= 13) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), rank);
    if (failed(axis))
      return failure();
    return setResult(ctx, createValue<OpTy>(ctx, ctx.input(0),
                                            {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
  }
  // Before opset 13 the input is flattened to [prod(:axis), prod(axis:)].
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < *axis ? outer : inner) *= type.getDimSize(d);
  Value flat = ctx.reshape(ctx.input(0), {outer, inner});
  FailureOr<Value> result =
      createValue<OpTy>(ctx, flat, {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
  if (failed(result))
    return failure();
  ctx.results.push_back(ctx.reshape(*result, type.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult importReduce(NodeContext &ctx, int64_t axesInputSince) {
  RankedTensorType type = ctx.inputType(0);
  auto axes = axesFromAttrOrInput(ctx, axesInputSince, 1);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> normalized;
  if (!*axes || (*axes)->empty()) {
    if (ctx.getInt("noop_with_empty_axes", 0)) {
      ctx.results.push_back(ctx.input(0));
      return success();
    }
    for (int64_t d = 0; d < type.getRank(); ++d)
      normalized.push_back(d);
  } else {
    for (int64_t axis : **axes) {
      FailureOr<int64_t> a = normalizeAxis(ctx, axis, type.getRank());
      if (failed(a))
        return failure();
      normalized.push_back(*a);
    }
    llvm::sort(normalized);
    normalized.erase(llvm::unique(normalized), normalized.end());
  }
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("axes", b.getDenseI64ArrayAttr(normalized))};
  if (ctx.getInt("keepdims", 1))
    attrs.push_back(b.getNamedAttr("keepdims", b.getUnitAttr()));
  return setResult(ctx, createValue<OpTy>(ctx, ctx.input(0), attrs));
}

template <typename OpTy>
static LogicalResult importLoss(NodeContext &ctx) {
  std::string reductionName = ctx.getString("reduction", "mean");
  std::optional<Reduction> reduction = symbolizeReduction(reductionName);
  if (!reduction)
    return ctx.emitError() << "unsupported attribute value: reduction '"
                           << reductionName << "'";
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
      "reduction", ReductionAttr::get(b.getContext(), *reduction))};
  if (ctx.attribute("ignore_index"))
    attrs.push_back(b.getNamedAttr(
        "ignore_index", b.getI64IntegerAttr(ctx.getInt("ignore_index", 0))));
  SmallVector<Value> operands = {ctx.input(0), ctx.input(1)};
  if (ctx.input(2))
    operands.push_back(ctx.input(2));
  if (failed(setResult(ctx, createValue<OpTy>(ctx, operands, attrs))))
    return failure();
  // SoftmaxCrossEntropyLoss may also return the log-probabilities.
  if constexpr (std::is_same_v<OpTy, SoftmaxCrossEntropyLossOp>) {
    if (ctx.outputUsed(1))
      return setResult(ctx, createValue<LogSoftmaxOp>(
                                ctx, ctx.input(0),
                                {b.getNamedAttr("axis", b.getI64IntegerAttr(1))}));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

static LogicalResult importReshape(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  SmallVector<int64_t> shape;
  if (ctx.opset < 5) {
    auto given = ctx.getInts("shape");
    if (!given)
      return ctx.emitError() << "missing shape attribute";
    shape = *given;
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "shape");
    if (failed(given))
      return failure();
    shape = *given;
  }
  bool allowZero = ctx.getInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (extent == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return ctx.emitError() << "shape entry " << i
                               << " copies a dimension the input lacks";
      extent = type.getDimSize(i);
    }
    if (extent == -1) {
      if (inferred >= 0)
        return ctx.emitError() << "shape has more than one -1";
      inferred = i;
      continue;
    }
    if (extent < 0)
      return ctx.emitError() << "shape entry " << extent << " is invalid";
    known *= extent;
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known)
      return ctx.emitError() << "cannot reshape " << type << " to "
                             << formatShape(shape);
    shape[inferred] = type.getNumElements() / known;
  }
  if (known * (inferred >= 0 ? shape[inferred] : 1) != type.getNumElements())
    return ctx.emitError() << "cannot reshape " << type << " to "
                           << formatShape(shape);
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError() << "axis " << axis << " is out of range";
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  ctx.results.push_back(ctx.reshape(ctx.input(0), {outer, inner}));
  return success();
}

static LogicalResult importSqueeze(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  auto axes = axesFromAttrOrInput(ctx, 13, 1);
  if (failed(axes))
    return failure();
  SmallVector<bool> drop(type.getRank(), false);
  if (!*axes) {
    for (int64_t d = 0; d < type.getRank(); ++d)
      drop[d] = type.getDimSize(d) == 1;
  } else {
    for (int64_t axis : **axes) {
      FailureOr<int64_t> a = normalizeAxis(ctx, axis, type.getRank());
      if (failed(a))
        return failure();
      if (type.getDimSize(*a) != 1)
        return ctx.emitError() << "cannot squeeze axis " << *a
                               << " of extent " << type.getDimSize(*a);
      drop[*a] = true;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!drop[d])
      shape.push_back(type.getDimSize(d));
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importUnsqueeze(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  auto axes = axesFromAttrOrInput(ctx, 13, 1);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.emitError() << "missing axes";
  int64_t rank = type.getRank() + (*axes)->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : **axes) {
    FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
    if (failed(a))
      return failure();
    if (inserted[*a])
      return ctx.emitError() << "axis " << *a << " is repeated";
    inserted[*a] = true;
  }
  SmallVector<int64_t> shape;
  unsigned next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(next++));
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importTranspose(NodeContext &ctx) {
  int64_t rank = ctx.inputType(0).getRank();
  SmallVector<int64_t> perm;
  if (auto given = ctx.getInts("perm")) {
    perm = *given;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  Builder &b = ctx.builder;
  return setResult(ctx, createValue<TransposeOp>(
                            ctx, ctx.input(0),
                            {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
}

static LogicalResult importConcat(NodeContext &ctx) {
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", 0),
                                          ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (ctx.input(i))
      operands.push_back(ctx.input(i));
  Builder &b = ctx.builder;
  return setResult(ctx, createValue<ConcatOp>(
                            ctx, operands,
                            {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

static LogicalResult importSplit(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t extent = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (ctx.opset < 13) {
    if (auto given = ctx.getInts("split"))
      sizes = *given;
  } else if (ctx.input(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  }
  if (sizes.empty()) {
    int64_t pieces = ctx.opset >= 18 && ctx.attribute("num_outputs")
                         ? ctx.getInt("num_outputs", 1)
                         : ctx.node.output_size();
    if (pieces <= 0)
      return ctx.emitError() << "num_outputs must be positive";
    // Opset 18: the last piece is smaller when the extent does not divide.
    int64_t size = llvm::divideCeil(extent, pieces);
    if (ctx.opset < 18 && extent % pieces)
      return ctx.emitError() << "cannot split extent " << extent << " into "
                             << pieces << " equal pieces";
    for (int64_t i = 0, left = extent; i < pieces; ++i, left -= size)
      sizes.push_back(std::min(size, left));
  }
  if (static_cast<int64_t>(sizes.size()) != ctx.node.output_size())
    return ctx.emitError() << "split has " << sizes.size()
                           << " pieces for " << ctx.node.output_size()
                           << " outputs";
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = size;
    types.push_back(type.clone(shape));
  }
  auto op = SplitOp::create(ctx.builder, ctx.loc, types, ctx.input(0),
                            ctx.builder.getI64IntegerAttr(*axis));
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  llvm::append_range(ctx.results, op.getResults());
  return success();
}

static LogicalResult importSlice(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    auto s = ctx.getInts("starts"), e = ctx.getInts("ends");
    if (!s || !e)
      return ctx.emitError() << "missing starts or ends";
    starts = *s;
    ends = *e;
    if (auto a = ctx.getInts("axes"))
      axes = *a;
  } else {
    auto s = ctx.constantInts(1, "starts");
    auto e = ctx.constantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.input(3)) {
      auto a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.input(4)) {
      auto st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";

  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t extent = type.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return ctx.emitError() << "step of axis " << *axis << " is zero";
    // ONNX clamps starts and ends into range, by the direction of the step.
    auto clampIndex = [&](int64_t index, int64_t low, int64_t high) {
      if (index < 0)
        index += extent;
      return std::clamp(index, low, high);
    };
    int64_t start, end;
    if (step > 0) {
      start = clampIndex(starts[i], 0, extent);
      end = clampIndex(ends[i], 0, extent);
    } else {
      start = clampIndex(starts[i], -1, extent - 1);
      end = clampIndex(ends[i], -1, extent - 1);
    }
    int64_t count = step > 0 ? llvm::divideCeil(std::max<int64_t>(0, end - start), step)
                             : llvm::divideCeil(std::max<int64_t>(0, start - end), -step);
    offsets[*axis] = count ? start : 0;
    sizes[*axis] = count;
    strides[*axis] = step;
  }
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<SliceOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(offsets)),
                b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes)),
                b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides))}));
}

static LogicalResult importGather(NodeContext &ctx) {
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", 0),
                                          ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  Builder &b = ctx.builder;
  return setResult(ctx, createValue<GatherOp>(
                            ctx, {ctx.input(0), ctx.input(1)},
                            {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

static LogicalResult importExpand(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  FailureOr<SmallVector<int64_t>> result =
      broadcastShapes({type.getShape(), *shape});
  if (failed(result))
    return ctx.emitError() << "cannot expand " << type << " to "
                           << formatShape(*shape);
  auto resultType = type.clone(*result);
  if (resultType == type) {
    ctx.results.push_back(ctx.input(0));
    return success();
  }
  ctx.results.push_back(
      ExpandOp::create(ctx.builder, ctx.loc, resultType, ctx.input(0)));
  return success();
}

static LogicalResult importTile(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  Builder &b = ctx.builder;
  return setResult(ctx, createValue<TileOp>(
                            ctx, ctx.input(0),
                            {b.getNamedAttr("repeats", b.getDenseI64ArrayAttr(*repeats))}));
}

static LogicalResult importPad(NodeContext &ctx) {
  int64_t rank = ctx.inputType(0).getRank();
  std::string modeName = ctx.getString("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return ctx.emitError() << "unsupported attribute value: mode '"
                           << modeName << "'";
  SmallVector<int64_t> pads;
  double value = 0.0;
  if (ctx.opset < 11) {
    auto given = ctx.getInts(ctx.opset < 2 ? "paddings" : "pads");
    if (!given)
      return ctx.emitError() << "missing pads";
    pads = *given;
    value = ctx.getFloat("value", 0.0f);
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (ctx.input(2)) {
      FailureOr<double> v = ctx.constantScalar(2, "constant_value");
      if (failed(v))
        return failure();
      value = *v;
    }
    if (ctx.input(3)) {
      // Opset 18: pads apply to the listed axes only.
      FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(3, "axes");
      if (failed(axes))
        return failure();
      if (pads.size() != 2 * axes->size())
        return ctx.emitError() << "pads needs two entries per axis";
      SmallVector<int64_t> full(2 * rank, 0);
      for (auto [i, axis] : llvm::enumerate(*axes)) {
        FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
        if (failed(a))
          return failure();
        full[*a] = pads[i];
        full[rank + *a] = pads[axes->size() + i];
      }
      pads = full;
    }
  }
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<PadOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(pads)),
                b.getNamedAttr("mode", PadModeAttr::get(b.getContext(), *mode)),
                b.getNamedAttr("value", b.getF64FloatAttr(value))}));
}

static LogicalResult importTrilu(NodeContext &ctx) {
  int64_t k = 0;
  if (ctx.input(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.emitError() << "k must be a scalar";
    k = given->front();
  }
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("k", b.getI64IntegerAttr(k))};
  if (ctx.getInt("upper", 1))
    attrs.push_back(b.getNamedAttr("upper", b.getUnitAttr()));
  return setResult(ctx, createValue<TriluOp>(ctx, ctx.input(0), attrs));
}

//===----------------------------------------------------------------------===//
// Constants (static shapes fold them at import)
//===----------------------------------------------------------------------===//

static LogicalResult importShape(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims(shape.begin() + start,
                            shape.begin() + std::max(start, end));
  ctx.results.push_back(ctx.i64Constant(dims, {static_cast<int64_t>(dims.size())}));
  return success();
}

static LogicalResult importSize(NodeContext &ctx) {
  ctx.results.push_back(ctx.i64Constant({ctx.inputType(0).getNumElements()}, {}));
  return success();
}

/// Builds an elements attribute from an ONNX TensorProto attribute value.
static FailureOr<DenseElementsAttr> tensorAttribute(NodeContext &ctx,
                                                    const onnx::TensorProto &tensor) {
  Type element = convertONNXElementType(ctx.builder.getContext(), tensor.data_type());
  if (!element)
    return ctx.emitError() << "unsupported tensor data type "
                           << tensor.data_type();
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(tensor.dims().begin(), tensor.dims().end()), element);
  std::string bytes;
  if (std::string error = readTensorBytes(tensor, /*modelDir=*/"", bytes);
      !error.empty())
    return ctx.emitError() << error;
  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, values);
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
    return ctx.emitError() << "tensor data does not match its shape";
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

static LogicalResult importConstant(NodeContext &ctx) {
  Builder &b = ctx.builder;
  if (const onnx::AttributeProto *value = ctx.attribute("value")) {
    FailureOr<DenseElementsAttr> attr = tensorAttribute(ctx, value->t());
    if (failed(attr))
      return failure();
    ctx.results.push_back(ctx.constant(*attr));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_float")) {
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, b.getF32Type()), value->f())));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_floats")) {
    SmallVector<float> values(value->floats().begin(), value->floats().end());
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getF32Type()),
        ArrayRef<float>(values))));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_int")) {
    ctx.results.push_back(ctx.i64Constant({value->i()}, {}));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_ints")) {
    SmallVector<int64_t> values(value->ints().begin(), value->ints().end());
    ctx.results.push_back(
        ctx.i64Constant(values, {static_cast<int64_t>(values.size())}));
    return success();
  }
  return ctx.emitError() << "unsupported attribute: only value, value_float(s) "
                            "and value_int(s) are supported";
}

static LogicalResult importConstantOfShape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  DenseElementsAttr fill = DenseElementsAttr::get(
      RankedTensorType::get({1}, ctx.builder.getF32Type()), 0.0f);
  if (const onnx::AttributeProto *value = ctx.attribute("value")) {
    FailureOr<DenseElementsAttr> attr = tensorAttribute(ctx, value->t());
    if (failed(attr))
      return failure();
    if (attr->getNumElements() != 1)
      return ctx.emitError() << "value must hold one element";
    fill = *attr;
  }
  auto type = RankedTensorType::get(*shape, fill.getElementType());
  ctx.results.push_back(ctx.constant(
      SplatElementsAttr::get(type, *fill.getValues<Attribute>().begin())));
  return success();
}

static LogicalResult importRange(NodeContext &ctx) {
  DenseElementsAttr start = ctx.constantInput(0), limit = ctx.constantInput(1),
                    delta = ctx.constantInput(2);
  if (!start || !limit || !delta)
    return ctx.emitError() << "start, limit and delta must be constants "
                              "(shapes are static)";
  Type element = start.getElementType();
  auto scalar = [](DenseElementsAttr attr) -> double {
    if (isa<FloatType>(attr.getElementType()))
      return (*attr.getValues<APFloat>().begin()).convertToDouble();
    return static_cast<double>((*attr.getValues<APInt>().begin()).getSExtValue());
  };
  double s = scalar(start), l = scalar(limit), d = scalar(delta);
  if (d == 0)
    return ctx.emitError() << "delta is zero";
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  auto type = RankedTensorType::get({count}, element);
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < count; ++i) {
      APFloat v(s + i * d);
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(type, values)));
  } else {
    SmallVector<APInt> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(APInt(element.getIntOrFloatBitWidth(),
                             static_cast<int64_t>(s) + i * static_cast<int64_t>(d),
                             /*isSigned=*/true));
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(type, values)));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const NodeImporter *mlir::pipe::lookupNodeImporter(StringRef opType) {
  constexpr unsigned kVariadic = ~0u;
  // Op type -> {handler, min inputs, max inputs, max outputs}.
  static const llvm::StringMap<NodeImporter> importers = {
      {"Add", {importBinary<AddOp>, 2, 2, 1}},
      {"Sub", {importBinary<SubOp>, 2, 2, 1}},
      {"Mul", {importBinary<MulOp>, 2, 2, 1}},
      {"Div", {importBinary<DivOp>, 2, 2, 1}},
      {"Pow", {importPow, 2, 2, 1}},
      {"Equal", {importBinary<EqualOp>, 2, 2, 1}},
      {"Less", {importBinary<LessOp>, 2, 2, 1}},
      {"Greater", {importBinary<GreaterOp>, 2, 2, 1}},
      {"PRelu", {importBinary<PReluOp>, 2, 2, 1}},
      {"Sum", {importVariadic<AddOp>, 1, kVariadic, 1}},
      {"Max", {importVariadic<MaxOp>, 1, kVariadic, 1}},
      {"Min", {importVariadic<MinOp>, 1, kVariadic, 1}},
      {"Sqrt", {importUnary<SqrtOp>, 1, 1, 1}},
      {"Neg", {importUnary<NegOp>, 1, 1, 1}},
      {"Exp", {importUnary<ExpOp>, 1, 1, 1}},
      {"Log", {importUnary<LogOp>, 1, 1, 1}},
      {"Abs", {importUnary<AbsOp>, 1, 1, 1}},
      {"Reciprocal", {importUnary<ReciprocalOp>, 1, 1, 1}},
      {"Relu", {importUnary<ReluOp>, 1, 1, 1}},
      {"Sigmoid", {importUnary<SigmoidOp>, 1, 1, 1}},
      {"Softplus", {importUnary<SoftplusOp>, 1, 1, 1}},
      {"Tanh", {importUnary<TanhOp>, 1, 1, 1}},
      {"Erf", {importUnary<ErfOp>, 1, 1, 1}},
      {"Not", {importUnary<NotOp>, 1, 1, 1}},
      {"LeakyRelu", {[](NodeContext &c) { return importAlpha<LeakyReluOp>(c, 0.01f); }, 1, 1, 1}},
      {"Elu", {[](NodeContext &c) { return importAlpha<EluOp>(c, 1.0f); }, 1, 1, 1}},
      {"Selu", {importSelu, 1, 1, 1}},
      {"Clip", {importClip, 1, 3, 1}},
      {"Cast", {importCast, 1, 1, 1}},
      {"Identity", {importIdentity, 1, 1, 1}},
      {"Dropout", {importDropout, 1, 3, 2}},
      {"Where", {importWhere, 3, 3, 1}},
      {"MatMul", {importBinary<MatMulOp>, 2, 2, 1}},
      {"Gemm", {importGemm, 2, 3, 1}},
      {"Conv", {importConv, 2, 3, 1}},
      {"ConvTranspose", {importConvTranspose, 2, 3, 1}},
      {"MaxPool", {importPool<MaxPoolOp>, 1, 1, 2}},
      {"AveragePool", {importPool<AveragePoolOp>, 1, 1, 1}},
      {"GlobalAveragePool", {importUnary<GlobalAveragePoolOp>, 1, 1, 1}},
      {"BatchNormalization", {importBatchNorm, 5, 5, 5}},
      {"LayerNormalization", {importLayerNorm, 2, 3, 3}},
      {"InstanceNormalization", {importInstanceNorm, 3, 3, 1}},
      {"Softmax", {importSoftmax<SoftmaxOp>, 1, 1, 1}},
      {"LogSoftmax", {importSoftmax<LogSoftmaxOp>, 1, 1, 1}},
      {"ReduceMean", {[](NodeContext &c) { return importReduce<ReduceMeanOp>(c, 18); }, 1, 2, 1}},
      {"ReduceSum", {[](NodeContext &c) { return importReduce<ReduceSumOp>(c, 13); }, 1, 2, 1}},
      {"ReduceMax", {[](NodeContext &c) { return importReduce<ReduceMaxOp>(c, 18); }, 1, 2, 1}},
      {"Reshape", {importReshape, 1, 2, 1}},
      {"Flatten", {importFlatten, 1, 1, 1}},
      {"Transpose", {importTranspose, 1, 1, 1}},
      {"Squeeze", {importSqueeze, 1, 2, 1}},
      {"Unsqueeze", {importUnsqueeze, 1, 2, 1}},
      {"Concat", {importConcat, 1, kVariadic, 1}},
      {"Split", {importSplit, 1, 2, kVariadic}},
      {"Slice", {importSlice, 1, 5, 1}},
      {"Gather", {importGather, 2, 2, 1}},
      {"Expand", {importExpand, 2, 2, 1}},
      {"Tile", {importTile, 2, 2, 1}},
      {"Pad", {importPad, 1, 4, 1}},
      {"Shape", {importShape, 1, 1, 1}},
      {"Size", {importSize, 1, 1, 1}},
      {"Constant", {importConstant, 0, 0, 1}},
      {"ConstantOfShape", {importConstantOfShape, 1, 1, 1}},
      {"Range", {importRange, 3, 3, 1}},
      {"Trilu", {importTrilu, 1, 2, 1}},
      {"SoftmaxCrossEntropyLoss", {importLoss<SoftmaxCrossEntropyLossOp>, 2, 3, 2}},
      {"NegativeLogLikelihoodLoss", {importLoss<NegativeLogLikelihoodLossOp>, 2, 3, 1}},
  };
  auto it = importers.find(opType);
  return it == importers.end() ? nullptr : &it->second;
}
