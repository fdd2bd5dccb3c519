//===- ONNXElementwiseImporters.cpp - elementwise ONNX ops ---------------===//
//
// Unary, broadcasting binary and variadic ONNX ops, Clip, Cast, Where and
// Dropout.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterImpl.h"

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult importUnary(NodeContext &ctx) {
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

template <typename OpTy> static LogicalResult importBinary(NodeContext &ctx) {
  return setResult(ctx, createValue<OpTy>(ctx, {ctx.input(0), ctx.input(1)}));
}

static LogicalResult importPow(NodeContext &ctx) {
  Value exponent = castLike(ctx, ctx.input(1), ctx.input(0));
  return setResult(ctx, createValue<PowOp>(ctx, {ctx.input(0), exponent}));
}

/// Sum, Max and Min take any number of inputs.
template <typename OpTy> static LogicalResult importVariadic(NodeContext &ctx) {
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
  return setResult(ctx,
                   createValue<OpTy>(
                       ctx, ctx.input(0),
                       {b.getNamedAttr("alpha", b.getF32FloatAttr(ctx.getFloat(
                                                    "alpha", defaultAlpha)))}));
}

static LogicalResult importSelu(NodeContext &ctx) {
  Builder &b = ctx.builder;
  return setResult(
      ctx,
      createValue<SeluOp>(
          ctx, ctx.input(0),
          {b.getNamedAttr("alpha", b.getF32FloatAttr(ctx.getFloat(
                                       "alpha", 1.67326319217681884765625f))),
           b.getNamedAttr("gamma",
                          b.getF32FloatAttr(ctx.getFloat(
                              "gamma", 1.05070102214813232421875f)))}));
}

static LogicalResult importClip(NodeContext &ctx) {
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs;
  if (ctx.opset < 11) {
    if (ctx.attribute("min"))
      attrs.push_back(
          b.getNamedAttr("min", b.getF64FloatAttr(ctx.getFloat("min", 0))));
    if (ctx.attribute("max"))
      attrs.push_back(
          b.getNamedAttr("max", b.getF64FloatAttr(ctx.getFloat("max", 0))));
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
  // A seed picks which elements drop, not how many: pipe's random stream
  // is its own.
  (void)ctx.attribute("seed");
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
    attrs.push_back(
        b.getNamedAttr("seed", b.getI64IntegerAttr(ctx.getInt("seed", 0))));
  return setResult(ctx, createValue<DropoutOp>(ctx, ctx.input(0), attrs));
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void mlir::pipe::addElementwiseImporters(NodeImporterTable &table) {
  // Op type -> {handler, min inputs, max inputs, max outputs}.
  table.insert({
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
      {"LeakyRelu",
       {[](NodeContext &c) { return importAlpha<LeakyReluOp>(c, 0.01f); }, 1, 1,
        1}},
      {"Elu",
       {[](NodeContext &c) { return importAlpha<EluOp>(c, 1.0f); }, 1, 1, 1}},
      {"Selu", {importSelu, 1, 1, 1}},
      {"Clip", {importClip, 1, 3, 1}},
      {"Cast", {importCast, 1, 1, 1}},
      {"Identity", {importIdentity, 1, 1, 1}},
      {"Dropout", {importDropout, 1, 3, 2}},
      {"Where", {importWhere, 3, 3, 1}},
      {"MatMul", {importBinary<MatMulOp>, 2, 2, 1}},
      {"GlobalAveragePool", {importUnary<GlobalAveragePoolOp>, 1, 1, 1}},
  });
}
