//===- ONNXNNImporters.cpp - contraction, conv, norm ops
//-------------------===//
//
// MatMul and Gemm, convolution and pooling, normalization, softmax,
// reductions and losses.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterImpl.h"

using namespace mlir;
using namespace mlir::pipe;

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
  SmallVector<Value> operands = ctx.presentInputs();
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
  // One error: the first attribute at fault.
  auto strides = intsOr(ctx, "strides", n, 1);
  if (failed(strides))
    return failure();
  auto dilations = intsOr(ctx, "dilations", n, 1);
  if (failed(dilations))
    return failure();
  auto pads = resolvePads(ctx, input.getShape().drop_front(2), kernel, *strides,
                          *dilations);
  if (failed(pads))
    return failure();
  Builder &b = ctx.builder;
  SmallVector<Value> operands = ctx.presentInputs();
  return setResult(
      ctx, createValue<ConvOp>(
               ctx, operands,
               {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
                b.getNamedAttr("pads", b.getDenseI64ArrayAttr(*pads)),
                b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
                b.getNamedAttr("group",
                               b.getI64IntegerAttr(ctx.getInt("group", 1)))}));
}

static LogicalResult importConvTranspose(NodeContext &ctx) {
  RankedTensorType input = ctx.inputType(0), weight = ctx.inputType(1);
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return ctx.emitError() << "input and weight must have the same rank, at "
                              "least 3";
  size_t n = input.getRank() - 2;
  if (auto given = ctx.getInts("kernel_shape");
      given && *given != weight.getShape().drop_front(2))
    return ctx.emitError() << "kernel_shape does not match the weight";
  // One error: the first attribute at fault.
  auto strides = intsOr(ctx, "strides", n, 1);
  if (failed(strides))
    return failure();
  auto dilations = intsOr(ctx, "dilations", n, 1);
  if (failed(dilations))
    return failure();
  auto outputPadding = intsOr(ctx, "output_padding", n, 0);
  if (failed(outputPadding))
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
        return ctx.emitError()
               << "output_shape has " << outputShape->size() << " entries";
      target.assign(given.begin(), given.end());
    } else {
      for (size_t i = 0; i < n; ++i)
        target.push_back(input.getDimSize(2 + i) * (*strides)[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t total =
          (*strides)[i] * (input.getDimSize(2 + i) - 1) + (*outputPadding)[i] +
          ((weight.getDimSize(2 + i) - 1) * (*dilations)[i] + 1) - target[i];
      // A larger output_shape than the strides produce is reached with
      // extra output padding at the end (as onnxruntime and the ONNX
      // reference do).
      if (total < 0) {
        (*outputPadding)[i] -= total;
        total = 0;
      }
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
  SmallVector<Value> operands = ctx.presentInputs();
  return setResult(
      ctx, createValue<ConvTransposeOp>(
               ctx, operands,
               {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
                b.getNamedAttr("pads", b.getDenseI64ArrayAttr(pads)),
                b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
                b.getNamedAttr("output_padding",
                               b.getDenseI64ArrayAttr(*outputPadding)),
                b.getNamedAttr("group",
                               b.getI64IntegerAttr(ctx.getInt("group", 1)))}));
}

template <typename OpTy> static LogicalResult importPool(NodeContext &ctx) {
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
  // One error: the first attribute at fault.
  auto strides = intsOr(ctx, "strides", n, 1);
  if (failed(strides))
    return failure();
  auto dilations = intsOr(ctx, "dilations", n, 1);
  if (failed(dilations))
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
    attrs.push_back(
        b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)));
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
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
      "epsilon", b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))};
  // Momentum only updates the running statistics, which inference reads
  // and does not update.
  float momentum = ctx.getFloat("momentum", 0.9f);
  if (!training)
    return setResult(ctx, createValue<BatchNormOp>(ctx, operands, attrs));
  attrs.push_back(b.getNamedAttr("momentum", b.getF32FloatAttr(momentum)));
  FailureOr<BatchNormTrainOp> op =
      ctx.create<BatchNormTrainOp>(operands, attrs);
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
  SmallVector<Value> operands = ctx.presentInputs();
  return setResult(
      ctx,
      createValue<LayerNormOp>(
          ctx, operands,
          {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis)),
           b.getNamedAttr("epsilon",
                          b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))}));
}

static LogicalResult importInstanceNorm(NodeContext &ctx) {
  Builder &b = ctx.builder;
  return setResult(
      ctx,
      createValue<InstanceNormOp>(
          ctx, {ctx.input(0), ctx.input(1), ctx.input(2)},
          {b.getNamedAttr("epsilon",
                          b.getF32FloatAttr(ctx.getFloat("epsilon", 1e-5f)))}));
}

template <typename OpTy> static LogicalResult importSoftmax(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  Builder &b = ctx.builder;
  if (ctx.opset >= 13) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.getInt("axis", -1), rank);
    if (failed(axis))
      return failure();
    return setResult(ctx,
                     createValue<OpTy>(
                         ctx, ctx.input(0),
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
  FailureOr<Value> result = createValue<OpTy>(
      ctx, flat, {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
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

template <typename OpTy> static LogicalResult importLoss(NodeContext &ctx) {
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
  SmallVector<Value> operands = ctx.presentInputs();
  if (failed(setResult(ctx, createValue<OpTy>(ctx, operands, attrs))))
    return failure();
  // SoftmaxCrossEntropyLoss may also return the log-probabilities.
  if constexpr (std::is_same_v<OpTy, SoftmaxCrossEntropyLossOp>) {
    if (ctx.outputUsed(1))
      return setResult(ctx,
                       createValue<LogSoftmaxOp>(
                           ctx, ctx.input(0),
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(1))}));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void mlir::pipe::addNNImporters(NodeImporterTable &table) {
  // Op type -> {handler, min inputs, max inputs, max outputs}.
  table.insert({
      {"Gemm", {importGemm, 2, 3, 1}},
      {"Conv", {importConv, 2, 3, 1}},
      {"ConvTranspose", {importConvTranspose, 2, 3, 1}},
      {"MaxPool", {importPool<MaxPoolOp>, 1, 1, 2}},
      {"AveragePool", {importPool<AveragePoolOp>, 1, 1, 1}},
      {"BatchNormalization", {importBatchNorm, 5, 5, 5}},
      {"LayerNormalization", {importLayerNorm, 2, 3, 3}},
      {"InstanceNormalization", {importInstanceNorm, 3, 3, 1}},
      {"Softmax", {importSoftmax<SoftmaxOp>, 1, 1, 1}},
      {"LogSoftmax", {importSoftmax<LogSoftmaxOp>, 1, 1, 1}},
      {"ReduceMean",
       {[](NodeContext &c) { return importReduce<ReduceMeanOp>(c, 18); }, 1, 2,
        1}},
      {"ReduceSum",
       {[](NodeContext &c) { return importReduce<ReduceSumOp>(c, 13); }, 1, 2,
        1}},
      {"ReduceMax",
       {[](NodeContext &c) { return importReduce<ReduceMaxOp>(c, 18); }, 1, 2,
        1}},
      {"SoftmaxCrossEntropyLoss",
       {importLoss<SoftmaxCrossEntropyLossOp>, 2, 3, 2}},
      {"NegativeLogLikelihoodLoss",
       {importLoss<NegativeLogLikelihoodLossOp>, 2, 3, 1}},
  });
}
