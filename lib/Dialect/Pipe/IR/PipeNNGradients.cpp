//===- PipeNNGradients.cpp - gradients of the neural-network ops ----------===//
//
// GradientOpInterface for the ops of PipeNNOps.td. Each rule builds the
// adjoints of an op's operands from those of its results.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/GradientBuilder.h"

using namespace mlir;
using namespace mlir::pipe;

/// The gradient of softmax cross-entropy (`softmax`) or negative log
/// likelihood with respect to the scores [N, C, D...], for labels
/// [N, D...], optional class weights [C], `ignore` and `reduction`, given
/// the loss's gradient `grad`. Per row r (a position of N * D...) with
/// label l and weight w[l] (0 when ignored), the gradient is
/// w[l] (softmax(x_r) - onehot(l)) or -w[l] onehot(l); the mean divides by
/// the sum of the rows' weights.
static Value lossGradient(Value scores, Value labels, Value weight,
                          Reduction reduction, std::optional<int64_t> ignore,
                          bool softmax, Value grad, GradientBuilder &g) {
  OpBuilder &b = g.builder;
  auto type = cast<RankedTensorType>(scores.getType());
  int64_t classes = type.getDimSize(1);
  int64_t rows = type.getNumElements() / classes;
  Type f = type.getElementType();
  auto labelType = cast<RankedTensorType>(labels.getType());
  Type index = labelType.getElementType();
  auto rowType = RankedTensorType::get({rows, 1}, f);

  Value onehot = g.onehot(labels, classes, f);
  Value factor = g.constant(rowType, 1.0, /*scalar=*/false);
  if (weight)
    factor = g.create<MatMulOp>(
        onehot,
        g.create<ReshapeOp>(RankedTensorType::get({classes, 1}, f), weight));
  if (ignore) {
    Value column =
        g.create<ReshapeOp>(RankedTensorType::get({rows, 1}, index), labels);
    Value ignored = g.integers(index, {}, {*ignore});
    Value keep =
        g.create<CastOp>(rowType, g.create<NotOp>(g.equal(column, ignored)));
    factor = g.mul(factor, keep);
  }
  Value base =
      softmax
          ? g.sub(g.create<SoftmaxOp>(g.toRows(scores), b.getI64IntegerAttr(1)),
                  onehot)
          : g.neg(onehot);
  Value perRow = g.mul(base, factor);
  Value scaled;
  switch (reduction) {
  case Reduction::none:
    scaled = g.mul(perRow, g.create<ReshapeOp>(rowType, grad));
    break;
  case Reduction::sum:
    scaled = g.mul(perRow, grad);
    break;
  case Reduction::mean: {
    // With every row ignored the loss is 0/0, but no row contributes: the
    // gradient is zero (as in PyTorch), not NaN.
    Value total = g.create<ReduceSumOp>(factor, b.getDenseI64ArrayAttr({0, 1}));
    Value zero = g.constant(cast<RankedTensorType>(total.getType()), 0.0);
    Value share = g.where(g.equal(total, zero), zero, g.div(grad, total));
    scaled = g.mul(perRow, share);
    break;
  }
  }
  return g.fromRows(scaled, type);
}

LogicalResult SoftmaxOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // y (g - sum(g y)) over the axis.
  Value y = getResult();
  Value gy = g.mul(grad, y);
  Value sum = g.create<ReduceSumOp>(
      gy, b.getDenseI64ArrayAttr({int64_t(getAxis())}), b.getUnitAttr());
  g.operandGrad(0) = g.mul(y, g.sub(grad, sum));
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // g - exp(y) sum(g) over the axis.
  Value sum = g.create<ReduceSumOp>(
      grad, b.getDenseI64ArrayAttr({int64_t(getAxis())}), b.getUnitAttr());
  Value p = g.create<ExpOp>(getResult());
  g.operandGrad(0) = g.sub(grad, g.mul(p, sum));
  return success();
}

LogicalResult LayerNormOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Over the normalized axes (axis..rank-1); dscale = sum(g xhat) and
  // dbias = sum(g) over the other axes.
  auto type = g.typeOf(getInput());
  SmallVector<int64_t> axes;
  for (int64_t d = getAxis(); d < type.getRank(); ++d)
    axes.push_back(d);
  auto [dx, xhat] = g.normalization(getInput(), grad, getScale(), axes,
                                    getEpsilon().convertToDouble());
  g.operandGrad(0) = dx;
  g.operandGrad(1) = g.unbroadcast(g.mul(grad, xhat), g.typeOf(getScale()));
  if (Value bias = getBias())
    g.operandGrad(2) = g.unbroadcast(grad, g.typeOf(bias));
  return success();
}

LogicalResult InstanceNormOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Per sample and channel, over the spatial axes.
  std::tie(g.operandGrad(0), g.operandGrad(1), g.operandGrad(2)) =
      g.channelNormalization(getInput(), getScale(),
                             getEpsilon().convertToDouble(), grad);
  return success();
}

LogicalResult BatchNormOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // With the running statistics (frozen): per channel,
  // y = scale (x - mean) / sigma + bias, sigma = sqrt(var + eps).
  Value x = getInput();
  auto type = g.typeOf(x);
  auto statType = g.typeOf(getScale());
  Value sigma = g.create<SqrtOp>(g.add(
      getVariance(), g.constant(statType, getEpsilon().convertToDouble())));
  Value factor = g.div(getScale(), sigma);
  Value centred = g.sub(x, g.perChannel(getMean(), type));
  Value xhat = g.div(centred, g.perChannel(sigma, type));
  g.operandGrad(0) = g.mul(grad, g.perChannel(factor, type));
  g.operandGrad(1) = g.sumPerChannel(g.mul(grad, xhat));
  Value biasGrad = g.sumPerChannel(grad);
  g.operandGrad(2) = biasGrad;
  // d/dmean = -sum(g) scale / sigma; d/dvar = -sum(g xhat) scale /
  // (2 sigma^2).
  g.operandGrad(3) = g.neg(g.mul(biasGrad, factor));
  g.operandGrad(4) =
      g.neg(g.div(g.mul(g.operandGrad(1), getScale()),
                  g.mul(g.constant(statType, 2.0), g.mul(sigma, sigma))));
  return success();
}

LogicalResult BatchNormTrainOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Batch statistics: per channel, over the batch and spatial axes.
  // The updated running statistics are not differentiated; they must
  // not feed the loss.
  if (!getRunningMean().use_empty() || !getRunningVariance().use_empty())
    return failure();
  auto grads = g.create<BatchNormTrainGradOp>(getInput(), getScale(), grad,
                                              getEpsilonAttr());
  g.operandGrad(0) = grads.getInputGrad();
  g.operandGrad(1) = grads.getScaleGrad();
  g.operandGrad(2) = grads.getBiasGrad();
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::buildGradients(GradientBuilder &g) {
  g.operandGrad(0) =
      lossGradient(getInput(), getLabels(), getWeight(), getReduction(),
                   getIgnoreIndex(), /*softmax=*/true, g.grad(), g);
  return success();
}

LogicalResult NegativeLogLikelihoodLossOp::buildGradients(GradientBuilder &g) {
  g.operandGrad(0) =
      lossGradient(getInput(), getLabels(), getWeight(), getReduction(),
                   getIgnoreIndex(), /*softmax=*/false, g.grad(), g);
  return success();
}

LogicalResult GlobalAveragePoolOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  auto inputType = g.typeOf(getInput());
  int64_t planes = inputType.getDimSize(0) * inputType.getDimSize(1);
  double scale = double(planes) / double(inputType.getNumElements());
  g.operandGrad(0) =
      g.mul(grad, g.constant(inputType, scale, /*scalar=*/false));
  return success();
}

LogicalResult ReduceMaxOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // Shared evenly between the maxima, as torch.amax does.
  Value x = getInput();
  auto inputType = g.typeOf(x);
  SmallVector<int64_t> kept(inputType.getShape());
  for (int64_t axis : getAxes())
    kept[axis] = 1;
  auto keptType = RankedTensorType::get(kept, inputType.getElementType());
  Value y = g.create<ReshapeOp>(keptType, getResult());
  Value isMax = g.equal(x, y);
  Value count =
      g.create<ReduceSumOp>(g.create<CastOp>(inputType, isMax),
                            b.getDenseI64ArrayAttr(getAxes()), b.getUnitAttr());
  Value share = g.div(g.create<ReshapeOp>(keptType, grad), count);
  g.operandGrad(0) =
      g.where(isMax, g.mul(share, g.constant(inputType, 1.0, /*scalar=*/false)),
              g.constant(inputType, 0.0));
  return success();
}

LogicalResult MatMulOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Y = A B (batched, broadcast): dA = dY B^T, dB = A^T dY, each
  // summed over the batch dimensions it was broadcast along.
  Value lhs = getLhs(), rhs = getRhs();
  if (g.typeOf(lhs).getRank() < 2 || g.typeOf(rhs).getRank() < 2)
    return failure();
  g.operandGrad(0) = g.unbroadcast(
      g.create<MatMulOp>(grad, g.transposeLast(rhs)), g.typeOf(lhs));
  g.operandGrad(1) = g.unbroadcast(
      g.create<MatMulOp>(g.transposeLast(lhs), grad), g.typeOf(rhs));
  return success();
}

LogicalResult GemmOp::buildGradients(GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // Y = alpha op(A) op(B) + beta C.
  bool transA = getTransA(), transB = getTransB();
  FloatAttr alpha = getAlphaAttr();
  FloatAttr one = b.getF32FloatAttr(1.0);
  UnitAttr yes = b.getUnitAttr(), no;
  // dA: alpha dY op(B)^T, or its transpose when A is transposed.
  g.operandGrad(0) = transA ? g.create<GemmOp>(getB(), grad, Value(), alpha,
                                               one, transB ? yes : no, yes)
                            : g.create<GemmOp>(grad, getB(), Value(), alpha,
                                               one, no, transB ? no : yes);
  // dB: alpha op(A)^T dY, or its transpose when B is transposed.
  g.operandGrad(1) = transB ? g.create<GemmOp>(grad, getA(), Value(), alpha,
                                               one, yes, transA ? yes : no)
                            : g.create<GemmOp>(getA(), grad, Value(), alpha,
                                               one, transA ? no : yes, no);
  if (Value c = getC()) {
    Value scaled = grad;
    if (getBeta().convertToDouble() != 1.0)
      scaled =
          g.mul(grad, g.constant(g.typeOf(grad), getBeta().convertToDouble()));
    g.operandGrad(2) = g.unbroadcast(scaled, g.typeOf(c));
  }
  return success();
}

LogicalResult ConvOp::buildGradients(GradientBuilder &g) {
  // Channels-last convolutions exist only in inference programs.
  if (getChannelsLast())
    return failure();
  OpBuilder &b = g.builder;
  Value grad = g.grad();
  // dX is the transposed convolution of dY with W, in the same groups,
  // with the output padding that restores X's size. dW is one
  // pipe.conv_weight_grad for all groups. dB sums dY.
  Value x = getInput(), w = getWeight();
  auto xType = g.typeOf(x), wType = g.typeOf(w), yType = g.typeOf(grad);
  int64_t group = getGroup();
  int64_t spatial = xType.getRank() - 2;
  ArrayRef<int64_t> strides = getStrides(), pads = getPads(),
                    dilations = getDilations();
  SmallVector<int64_t> outputPadding;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t span = xType.getDimSize(d + 2) + pads[d] + pads[spatial + d] -
                   dilations[d] * (wType.getDimSize(d + 2) - 1) - 1;
    outputPadding.push_back(span % strides[d]);
  }
  auto dx = g.create<ConvTransposeOp>(grad, w, Value(), strides, pads,
                                      dilations, outputPadding, group);
  if (dx.getType() != xType)
    return failure();
  g.operandGrad(0) = dx;
  g.operandGrad(1) = g.create<ConvWeightGradOp>(wType, x, grad, strides, pads,
                                                dilations, group);
  if (Value bias = getBias()) {
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < yType.getRank(); ++d)
      axes.push_back(d);
    g.operandGrad(2) =
        g.create<ReduceSumOp>(grad, b.getDenseI64ArrayAttr(axes));
  }
  return success();
}

LogicalResult MaxPoolOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.create<MaxPoolGradOp>(
      getInput().getType(), getInput(), grad, getKernelShape(), getStrides(),
      getPads(), getDilations());
  return success();
}

LogicalResult AveragePoolOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.create<AveragePoolGradOp>(
      getInput().getType(), grad, getKernelShape(), getStrides(), getPads(),
      getCountIncludePad());
  return success();
}

/// ReduceSum and ReduceMean: the gradient spread back over the reduced
/// dimensions, divided by their size for the mean.
template <typename OpTy>
static LogicalResult reduceGradients(OpTy o, GradientBuilder &g) {
  Value grad = g.grad();
  auto inputType = g.typeOf(o.getInput());
  SmallVector<int64_t> kept(inputType.getShape());
  for (int64_t axis : o.getAxes())
    kept[axis] = 1;
  Value spread = g.create<ReshapeOp>(
      RankedTensorType::get(kept, inputType.getElementType()), grad);
  double scale = 1.0;
  if (isa<ReduceMeanOp>(o.getOperation()))
    for (int64_t axis : o.getAxes())
      scale /= double(inputType.getDimSize(axis));
  g.operandGrad(0) =
      g.mul(spread, g.constant(inputType, scale, /*scalar=*/false));
  return success();
}

LogicalResult ReduceSumOp::buildGradients(GradientBuilder &g) {
  return reduceGradients(*this, g);
}

LogicalResult ReduceMeanOp::buildGradients(GradientBuilder &g) {
  return reduceGradients(*this, g);
}
